// The boundary between the C ABI and the C++ internals. Every exported
// function runs its body through guard(), which turns any exception into an
// mrt_status and the calling thread's last error message, so nothing ever
// unwinds into C.
#pragma once

#include <string>
#include <utility>

#include "common/error.hpp"
#include "mrt_c.h"

namespace mrt::capi {

// Records message (and a device error's recovery action) as this thread's
// last error, logs it at debug level and returns code.
mrt_status fail(const char *function, mrt_status code, const std::string &message,
                RecoveryAction action = RecoveryAction::None) noexcept;

// Maps the exception in flight to a status (mrt::Error -> its code,
// std::bad_alloc -> RESOURCE_EXHAUSTED, std::invalid_argument /
// std::out_of_range -> INVALID_ARGUMENT, anything else -> INTERNAL) and
// records its message. Call only inside a catch block.
mrt_status failFromCurrentException(const char *function) noexcept;

// Runs body (returning void) and returns MRT_OK, or the status of whatever
// it threw. `function` names the exported function in messages and logs.
template <typename Body>
mrt_status guard(const char *function, Body &&body) noexcept {
  try {
    std::forward<Body>(body)();
    return MRT_OK;
  } catch (...) {
    return failFromCurrentException(function);
  }
}

// Throws mrt::Error(InvalidArgument) "<argument> must not be NULL".
[[noreturn]] void throwNull(const char *argument);

// Argument checks for the bodies of exported functions: each throws an
// mrt::Error(InvalidArgument) naming the argument. Inline, with the throw
// out of line: the check is on every call's path.
template <typename T>
void requireNotNull(const T *pointer, const char *argument) {
  if (pointer == nullptr) [[unlikely]]
    throwNull(argument);
}

}  // namespace mrt::capi
