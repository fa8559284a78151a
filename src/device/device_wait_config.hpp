// How DeviceManager waits for a busy device (DeviceWaitStrategy,
// DeviceWaitConfig) and what the device must offer (DeviceConstraints),
// with the names and defaults of the API reference (seed 001, 10.1.1).
// The seed counts in std::chrono::seconds; durations are kept in nanoseconds
// here so tests and the C API can ask for milliseconds. Seconds still convert
// implicitly, so DeviceWaitConfig(std::chrono::seconds{30}) reads as in the seed.
#pragma once

#include <chrono>
#include <string>

namespace mrt {

enum class DeviceWaitStrategy {
  NO_WAIT,            // fail at once if no device is free
  WAIT_WITH_TIMEOUT,  // retry every sleepTime until timeout has passed
  WAIT_FOREVER,       // retry every sleepTime until a device is free
};

const char *toString(DeviceWaitStrategy strategy) noexcept;

struct DeviceWaitConfig {
  constexpr DeviceWaitConfig() = default;

  constexpr DeviceWaitConfig(DeviceWaitStrategy p_strategy,
                             std::chrono::nanoseconds p_timeout = std::chrono::seconds{0},
                             std::chrono::nanoseconds p_sleepTime = std::chrono::seconds{15})
      : strategy(p_strategy), timeout(p_timeout), sleepTime(p_sleepTime) {}

  // WAIT_WITH_TIMEOUT for p_timeout.
  explicit constexpr DeviceWaitConfig(std::chrono::nanoseconds p_timeout,
                                      std::chrono::nanoseconds p_sleepTime = std::chrono::seconds{15})
      : strategy(DeviceWaitStrategy::WAIT_WITH_TIMEOUT), timeout(p_timeout), sleepTime(p_sleepTime) {}

  DeviceWaitStrategy strategy = DeviceWaitStrategy::NO_WAIT;
  // How long WAIT_WITH_TIMEOUT keeps trying; ignored by the other strategies.
  std::chrono::nanoseconds timeout{0};
  // Pause between attach attempts. Pauses shorter than kMinSleepTime are
  // lengthened to it so that waiting never spins on the lock files.
  std::chrono::nanoseconds sleepTime = std::chrono::seconds{15};

  static constexpr std::chrono::nanoseconds kMinSleepTime = std::chrono::milliseconds{1};
};

// "NO_WAIT", "WAIT_WITH_TIMEOUT (timeout 50 ms, retry every 10 ms)", ... for messages.
std::string describe(const DeviceWaitConfig &config);

// Throws mrt::Error(InvalidArgument) for a negative timeout or sleep time or
// a strategy outside the enum.
void validate(const DeviceWaitConfig &config);

struct DeviceConstraints {
  constexpr DeviceConstraints() = default;
  explicit constexpr DeviceConstraints(bool p_requiresRemoteBuffersSupport)
      : requiresRemoteBuffersSupport(p_requiresRemoteBuffersSupport) {}

  // True if the selection has any constraint.
  constexpr operator bool() const { return requiresRemoteBuffersSupport; }

  bool requiresRemoteBuffersSupport = false;
};

}  // namespace mrt
