// fail(kind, fmt, args...): throws hwsim::Error with a formatted message.
#pragma once

#include <fmt/format.h>

#include "hwsim/error.hpp"

namespace hwsim::detail {

template <typename... Args>
[[noreturn]] void fail(ErrorKind kind, fmt::format_string<Args...> format, Args &&...args) {
  throw Error(kind, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace hwsim::detail
