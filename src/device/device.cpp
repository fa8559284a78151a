#include "device/device.hpp"

#include <utility>

#include "common/logging.hpp"
#include "device/hwsim_error.hpp"

namespace mrt {

Device::Device(hwsim::Device device, std::int64_t ipuVersion)
    : device_(std::move(device)), ipuVersion_(ipuVersion) {
  if (!device_.valid()) throw Error(ErrorCode::InvalidArgument, "Device: empty hwsim device handle");
}

Device::~Device() {
  try {
    log::logger().info("released device {}", id());
  } catch (...) {
    // A destructor must not throw; the release below matters more than its log line.
  }
  device_.detach();
}

std::int64_t Device::id() const {
  return callHwsim(
      [&]() -> std::int64_t { return device_.isIpuModel() ? std::int64_t{-1} : std::int64_t{device_.id()}; });
}

std::int64_t Device::numIpus() const {
  return callHwsim([&]() -> std::int64_t { return device_.numIpus(); });
}

bool Device::isIpuModel() const {
  return callHwsim([&] { return device_.isIpuModel(); });
}

bool Device::isActiveSession(SessionToken session) const {
  std::lock_guard lock(slotMutex_);
  return session != nullptr && activeSession_ == session;
}

void Device::bindToSession(SessionToken session, DisplacedCallback onDisplaced) {
  if (session == nullptr) throw Error(ErrorCode::InvalidArgument, "bindToSession: session must not be null");
  std::lock_guard bindLock(bindMutex_);
  DisplacedCallback previous;  // destroyed after the locks below: it may own anything
  DisplacedCallback displaced;
  {
    std::lock_guard lock(slotMutex_);
    if (activeSession_ == session) {
      previous = std::exchange(onDisplaced_, std::move(onDisplaced));
      return;
    }
    if (activeSession_ != nullptr) displaced = onDisplaced_;
  }
  // Outside slotMutex_, so the displaced session can query and unbind.
  if (displaced) displaced();
  std::lock_guard lock(slotMutex_);
  activeSession_ = session;
  previous = std::exchange(onDisplaced_, std::move(onDisplaced));
}

void Device::unbindSession() {
  DisplacedCallback released;  // destroyed outside the lock: it may own anything
  std::lock_guard lock(slotMutex_);
  activeSession_ = nullptr;
  released = std::exchange(onDisplaced_, {});
}

}  // namespace mrt
