// The name of an mrt_data_type as PopEF and the tools print it ("F32"), and
// the bytes of one of its elements.
#pragma once

#include <cstdint>

#include "mrt_c.h"

namespace mrt::tools {

inline const char *dataTypeName(std::int32_t type) {
  static const char *const names[] = {"BOOL", "U8", "S8", "U16", "S16", "S32", "U32", "S64", "U64", "F16", "F32", "F64"};
  return type >= 0 && type <= MRT_F64 ? names[type] : "?";
}

// 0 for a value that is no mrt_data_type.
inline std::int64_t dataTypeBytes(std::int32_t type) {
  static const std::int64_t bytes[] = {1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8};
  return type >= 0 && type <= MRT_F64 ? bytes[type] : 0;
}

}  // namespace mrt::tools
