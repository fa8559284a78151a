#include "popef/anchor.hpp"

namespace mrt::popef {

std::string_view toString(TensorType type) noexcept {
  switch (type) {
    case TensorType::INPUT: return "INPUT";
    case TensorType::OUTPUT: return "OUTPUT";
    case TensorType::UNKNOWN: break;
  }
  return "UNKNOWN";
}

std::string_view toString(DataSource source) noexcept {
  switch (source) {
    case DataSource::TensorData: return "TensorData";
    case DataSource::FeedData: return "FeedData";
    case DataSource::None: break;
  }
  return "None";
}

}  // namespace mrt::popef
