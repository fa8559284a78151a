// The C API's one duration convention (mrt_c.h, "Durations") mapped onto
// the internal configs, which keep the seeds' spelling of "forever" for a
// timeout callback's period: zero.
#pragma once

#include <chrono>
#include <cstdint>

#include "common/error.hpp"

namespace mrt::capi {

// A timeout callback's period from C: MRT_FOREVER (< 0) is "never call it"
// (internally 0); 0 would call it continuously and is refused.
inline std::chrono::nanoseconds callbackPeriodOf(int64_t ns, const char *field) {
  if (ns == 0) {
    throw Error(ErrorCode::InvalidArgument,
                "{} is 0, which would time out continuously; use MRT_FOREVER (a negative value) to wait "
                "forever, or a positive limit",
                field);
  }
  return std::chrono::nanoseconds(ns < 0 ? 0 : ns);
}

// The inverse, for configs the library reports back.
inline int64_t callbackPeriodToC(std::chrono::nanoseconds period) {
  return period.count() == 0 ? int64_t{-1} : static_cast<int64_t>(period.count());
}

}  // namespace mrt::capi
