// Durations as people read them in error messages: "250 us", "50 ms", "1.5 s".
#pragma once

#include <chrono>
#include <string>

#include <fmt/format.h>

namespace mrt {

inline std::string durationText(std::chrono::nanoseconds duration) {
  const auto ns = duration.count();
  if (ns < 1'000'000) return fmt::format("{} us", ns / 1'000);
  if (ns < 10'000'000'000) return fmt::format("{} ms", ns / 1'000'000);
  return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9);
}

}  // namespace mrt
