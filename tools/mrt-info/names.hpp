// How mrt-info names the values of the C API's enums: as PopEF and
// docs/popef.md spell them ("TensorData", "INPUT").
#pragma once

#include <string>

#include "mrt.hpp"

namespace mrt::info {

inline std::string blobTypeName(BlobType type) {
  switch (type) {
    case BlobType::Metadata: return "Metadata";
    case BlobType::Executable: return "Executable";
    case BlobType::TensorData: return "TensorData";
    case BlobType::FeedData: return "FeedData";
    case BlobType::Opaque: return "Opaque";
  }
  return "Unknown";
}

inline std::string tensorTypeName(TensorType type) {
  switch (type) {
    case TensorType::INPUT: return "INPUT";
    case TensorType::OUTPUT: return "OUTPUT";
    case TensorType::UNKNOWN: break;
  }
  return "UNKNOWN";
}

inline std::string dataSourceName(DataSource source) {
  switch (source) {
    case DataSource::TENSOR_DATA: return "TensorData";
    case DataSource::FEED_DATA: return "FeedData";
    case DataSource::NONE: break;
  }
  return "None";
}

}  // namespace mrt::info
