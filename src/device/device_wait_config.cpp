#include "device/device_wait_config.hpp"

#include <fmt/format.h>

#include "common/error.hpp"
#include "device/duration_text.hpp"

namespace mrt {

const char *toString(DeviceWaitStrategy strategy) noexcept {
  switch (strategy) {
    case DeviceWaitStrategy::NO_WAIT: return "NO_WAIT";
    case DeviceWaitStrategy::WAIT_WITH_TIMEOUT: return "WAIT_WITH_TIMEOUT";
    case DeviceWaitStrategy::WAIT_FOREVER: return "WAIT_FOREVER";
  }
  return "unknown DeviceWaitStrategy";
}

std::string describe(const DeviceWaitConfig &config) {
  switch (config.strategy) {
    case DeviceWaitStrategy::NO_WAIT: return "NO_WAIT";
    case DeviceWaitStrategy::WAIT_WITH_TIMEOUT:
      return fmt::format("WAIT_WITH_TIMEOUT, timeout {}, retry every {}", durationText(config.timeout),
                         durationText(config.sleepTime));
    case DeviceWaitStrategy::WAIT_FOREVER:
      return fmt::format("WAIT_FOREVER, retry every {}", durationText(config.sleepTime));
  }
  return toString(config.strategy);
}

void validate(const DeviceWaitConfig &config) {
  switch (config.strategy) {
    case DeviceWaitStrategy::NO_WAIT:
    case DeviceWaitStrategy::WAIT_WITH_TIMEOUT:
    case DeviceWaitStrategy::WAIT_FOREVER: break;
    default:
      throw Error(ErrorCode::InvalidArgument, "device wait strategy {} is not a DeviceWaitStrategy",
                  static_cast<int>(config.strategy));
  }
  if (config.timeout.count() < 0) {
    throw Error(ErrorCode::InvalidArgument, "device wait timeout must not be negative (got {} ns)",
                config.timeout.count());
  }
  if (config.sleepTime.count() < 0) {
    throw Error(ErrorCode::InvalidArgument, "device wait sleep time must not be negative (got {} ns)",
                config.sleepTime.count());
  }
}

}  // namespace mrt
