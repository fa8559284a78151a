// Output structs that start with struct_size: the library writes only as far
// as the caller's struct_size reaches, so a caller compiled against an older,
// shorter version of the struct is safe, and rejects sizes below the first
// published version.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "capi/guard.hpp"

namespace mrt::capi {

// Copies `full` into *out. oldestSize is the struct's first published size;
// `argument` names out in messages.
template <typename Struct>
void fillSized(Struct *out, Struct full, std::size_t oldestSize, const char *argument) {
  requireNotNull(out, argument);
  const std::size_t size = out->struct_size;
  if (size < oldestSize) {
    throw Error(ErrorCode::InvalidArgument, "{}->struct_size is {}, expected at least {}", argument,
                size, oldestSize);
  }
  full.struct_size = size;
  std::memcpy(out, &full, std::min(size, sizeof(Struct)));
}

}  // namespace mrt::capi
