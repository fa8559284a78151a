#include "device/device.hpp"

#include <algorithm>
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
  return std::any_of(active_.begin(), active_.end(), [&](const Active &a) { return a.session == session; });
}

void Device::bindToSession(SessionToken session, DisplacedCallback onDisplaced, Residency residency) {
  if (session == nullptr) throw Error(ErrorCode::InvalidArgument, "bindToSession: session must not be null");
  std::lock_guard bindLock(bindMutex_);
  DisplacedCallback previous;  // destroyed after the locks below: it may own anything
  std::vector<Active> displaced;
  {
    std::lock_guard lock(slotMutex_);
    for (Active &active : active_) {
      if (active.session == session) {
        previous = std::exchange(active.onDisplaced, std::move(onDisplaced));
        return;
      }
    }
    const auto coexists = [&](const Active &active) {
      return !residency.executable.empty() && active.residency.executable == residency.executable &&
             active.residency.model != residency.model;
    };
    if (!std::all_of(active_.begin(), active_.end(), coexists)) displaced = active_;
  }
  // Outside slotMutex_, so the displaced sessions can query and unbind.
  for (const Active &active : displaced) {
    if (active.onDisplaced) active.onDisplaced();
    unbindSession(active.session);
  }
  std::lock_guard lock(slotMutex_);
  active_.push_back(Active{session, std::move(onDisplaced), std::move(residency)});
}

void Device::unbindSession(SessionToken session) {
  DisplacedCallback released;  // destroyed outside the lock: it may own anything
  std::lock_guard lock(slotMutex_);
  const auto it = std::find_if(active_.begin(), active_.end(), [&](const Active &a) { return a.session == session; });
  if (it == active_.end()) return;
  released = std::move(it->onDisplaced);
  active_.erase(it);
}

}  // namespace mrt
