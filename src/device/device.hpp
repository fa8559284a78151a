// mrt::Device (seed 001, 10.1.1): one attached simulated IPU device - a
// device of the pool, held exclusively across processes until this object
// is destroyed, or an IPU Model device that nobody else can see - plus the
// slot that tells which Session currently has its executable loaded on it.
//
// Always handled as std::shared_ptr<Device> (as DeviceManager returns it):
// unlike the seed's class it is not movable, because the session slot is
// guarded by mutexes and a device in use must not change address.
//
// Thread safety: every member may be called from any thread at once.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>

#include <hwsim/device.hpp>

namespace mrt {

class Device {
 public:
  // Takes over `device`, which should already be attached; ipuVersion is the
  // architecture version of its IPUs (2 or 21), -1 if unknown.
  Device(hwsim::Device device, std::int64_t ipuVersion);
  // Detaches: the device's IPUs are free for other holders again.
  ~Device();

  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  Device(Device &&) = delete;
  Device &operator=(Device &&) = delete;

  // The underlying simulated device (Poplar's poplar::Device in the seed).
  hwsim::Device &device() noexcept { return device_; }
  const hwsim::Device &device() const noexcept { return device_; }

  // The architecture version of the IPUs: 2 or 21; -1 if unknown.
  std::int64_t ipuVersion() const noexcept { return ipuVersion_; }
  // The id of the device in the simulated system; -1 for an IPU Model device.
  std::int64_t id() const;
  std::int64_t numIpus() const;
  bool isIpuModel() const;
  // Every simulated device supports remote buffers (DeviceConstraints).
  bool supportsRemoteBuffers() const noexcept { return true; }

  // ---- the active session (used by Session; seed: protected, friend Session) ----
  //
  // A session is named by an opaque token, its address. A device has at most
  // one active session: the one whose executable is loaded on it. When a
  // second session binds, the first one is told through the `onDisplaced`
  // callback it gave when binding (so it can run its Save programs and
  // unload) before the second becomes active.
  using SessionToken = const void *;
  using DisplacedCallback = std::function<void()>;

  bool isActiveSession(SessionToken session) const;
  // Makes `session` the active session. If another session is active, its
  // onDisplaced callback runs first, on this thread; if it throws, the
  // exception propagates and the other session stays active. Binding the
  // active session again only replaces its callback. Calls are serialized;
  // the callback may call isActiveSession() and unbindSession() but not
  // bindToSession().
  void bindToSession(SessionToken session, DisplacedCallback onDisplaced = {});
  // Leaves the device without an active session (its callback is not called).
  void unbindSession();

 private:
  hwsim::Device device_;
  std::int64_t ipuVersion_;

  std::mutex bindMutex_;          // serializes bindToSession, held while a displaced session is told
  mutable std::mutex slotMutex_;  // guards the two fields below
  SessionToken activeSession_ = nullptr;
  DisplacedCallback onDisplaced_;
};

}  // namespace mrt
