// Structs that start with struct_size. Output structs: the library writes
// only as far as the caller's struct_size reaches, so a caller compiled
// against an older, shorter version of the struct is safe. Input (config)
// structs: the library reads only as far, taking defaults for the fields a
// shorter struct lacks. Both reject sizes below the first published version.
// Init (mrt_X_init_sized): the library writes defaults only as far as the
// caller's struct is long.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "capi/guard.hpp"
#include "capi/known_size.hpp"

namespace mrt::capi {

// Copies `full` into *out, as far as both the caller's struct_size and the
// fields this library knows (KnownSize) reach: bytes past either, such as
// a field a newer header put in this struct's tail padding, are left as
// the caller had them. oldestSize is the struct's first published size;
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
  std::memcpy(out, &full, std::min(size, KnownSize<Struct>::value));
}

// The caller's *in over `defaults`: the first min(in->struct_size,
// sizeof(Struct)) bytes come from the caller, the rest keep their defaults
// (a caller built against a newer, longer struct is read as far as this
// library knows it). The result has struct_size = sizeof(Struct).
template <typename Struct>
Struct readSized(const Struct *in, Struct defaults, std::size_t oldestSize, const char *argument) {
  requireNotNull(in, argument);
  const std::size_t size = in->struct_size;
  if (size < oldestSize) {
    throw Error(ErrorCode::InvalidArgument, "{}->struct_size is {}, expected at least {}", argument,
                size, oldestSize);
  }
  std::memcpy(&defaults, in, std::min(size, sizeof(Struct)));
  defaults.struct_size = sizeof(Struct);
  return defaults;
}

// The body of mrt_X_init_sized(): the first min(size, knownSize) bytes of
// *out get `defaults`, struct_size = size. knownSize is the struct as this
// library knows it, MRT_STRUCT_SIZE of its last field rather than sizeof, so
// that its tail padding never covers a field a newer header appended there;
// a caller built against such a header keeps those bytes untouched, and one
// built against an older header gets no byte written beyond its struct.
template <typename Struct>
void initSized(Struct *out, Struct defaults, std::size_t size, std::size_t oldestSize, std::size_t knownSize,
               const char *argument) {
  requireNotNull(out, argument);
  if (size < oldestSize) {
    throw Error(ErrorCode::InvalidArgument, "size is {}, expected at least {} (the first published size of *{})",
                size, oldestSize, argument);
  }
  defaults.struct_size = size;
  std::memcpy(out, &defaults, std::min(size, knownSize));
}

}  // namespace mrt::capi
