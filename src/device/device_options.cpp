#include "device/device_options.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace mrt {

namespace {

constexpr std::array<std::string_view, 3> kKnownOptions = {"ipuLinkConfiguration", "ipuLinkDomainSize",
                                                           "ipuLinkTopology"};
constexpr std::array<std::string_view, 3> kLinkConfigurations = {"default", "slidingWindow", "barleyTwist"};
constexpr std::array<std::string_view, 2> kLinkTopologies = {"mesh", "torus"};

template <std::size_t N>
void requireOneOf(const std::array<std::string_view, N> &allowed, const std::string &key,
                  const std::string &value, std::string_view where) {
  if (std::find(allowed.begin(), allowed.end(), value) == allowed.end()) {
    throw Error(ErrorCode::InvalidArgument, "{}device option '{}': '{}' is not one of {}", where, key, value,
                fmt::join(allowed, ", "));
  }
}

void requirePositiveInteger(const std::string &key, const std::string &value, std::string_view where) {
  unsigned long long number = 0;
  const char *end = value.data() + value.size();
  const auto [last, ec] = std::from_chars(value.data(), end, number);
  if (value.empty() || ec != std::errc() || last != end || number == 0) {
    throw Error(ErrorCode::InvalidArgument, "{}device option '{}': '{}' is not a positive integer", where,
                key, value);
  }
}

}  // namespace

void validateDeviceOptions(const DeviceOptions &options, std::string_view where) {
  for (const auto &[key, value] : options) {
    if (key == "ipuLinkDomainSize") {
      requirePositiveInteger(key, value, where);
    } else if (key == "ipuLinkConfiguration") {
      requireOneOf(kLinkConfigurations, key, value, where);
    } else if (key == "ipuLinkTopology") {
      requireOneOf(kLinkTopologies, key, value, where);
    } else {
      throw Error(ErrorCode::InvalidArgument, "{}unknown device option '{}' (known: {})", where, key,
                  fmt::join(kKnownOptions, ", "));
    }
  }
}

}  // namespace mrt
