// The bytes of one tensor of a type and shape (PopEF's TensorInfo size).
#pragma once

#include <cstdint>
#include <vector>

#include "data_type_name.hpp"

namespace mrt::info {

inline std::int64_t tensorBytes(std::int32_t dataType, const std::vector<std::int64_t> &shape) {
  std::int64_t bytes = tools::dataTypeBytes(dataType);
  for (const std::int64_t dim : shape) bytes *= dim;
  return bytes;
}

}  // namespace mrt::info
