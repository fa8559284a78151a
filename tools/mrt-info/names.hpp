// How mrt-info names the values of the C API's enums: as PopEF and
// docs/popef.md spell them ("INPUT", "TensorData"). Blob types are named
// by the library (mrt::blobTypeName).
#pragma once

#include <string>

#include "mrt.hpp"

namespace mrt::info {

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
