#include "mib_limit.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace hwsim::detail {

std::size_t mibLimitFor(const char *variable, const char *request, std::size_t maxMiB, std::size_t defaultBytes,
                        std::string &warning) {
  if (request == nullptr || *request == '\0') return defaultBytes;
  const std::string_view text(request);
  std::size_t mib = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), mib);
  if (error != std::errc() || end != text.data() + text.size() || mib > maxMiB) {
    warning = fmt::format("{} '{}' is not a whole number of MiB from 0 to {}; keeping up to {} MiB", variable, text,
                          maxMiB, defaultBytes >> 20);
    return defaultBytes;
  }
  return mib << 20;
}

std::size_t mibLimitFromEnvironment(const char *variable, std::size_t maxMiB, std::size_t defaultBytes) {
  std::string warning;
  const std::size_t limit = mibLimitFor(variable, std::getenv(variable), maxMiB, defaultBytes, warning);
  if (!warning.empty()) std::fprintf(stderr, "hwsim: %s\n", warning.c_str());
  return limit;
}

}  // namespace hwsim::detail
