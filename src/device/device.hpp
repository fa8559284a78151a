// mrt::Device (seed 001, 10.1.1): one attached simulated IPU device - a
// device of the pool, held exclusively across processes until this object
// is destroyed, or an IPU Model device that nobody else can see - plus the
// slot that tells which Sessions currently have their executable loaded on it.
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
#include <string>
#include <vector>

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

  // ---- the active sessions (used by Session; seed: protected, friend Session) ----
  //
  // A session is named by an opaque token, its address. A device has one
  // active session, the one whose executable is loaded on it, or several
  // when they are sessions of different models fused into one executable
  // (popef/fuse.hpp): each runs its own programs on its own tiles, so they
  // coexist. When a session binds that cannot coexist with the active ones,
  // each of them is told through the `onDisplaced` callback it gave when
  // binding (so it can run its Save programs and unload) before the new one
  // becomes active.
  using SessionToken = const void *;
  using DisplacedCallback = std::function<void()>;
  // What a session has loaded: sessions with the same non-empty `executable`
  // and different `model`s coexist. Empty `executable`: a model of its own.
  struct Residency {
    std::string executable;
    std::string model;
  };

  bool isActiveSession(SessionToken session) const;
  // Makes `session` an active session. Active sessions it cannot coexist
  // with are displaced first: their onDisplaced callbacks run on this
  // thread, in binding order; if one throws, the exception propagates and
  // that session and those after it stay active. Binding an active session
  // again only replaces its callback. Calls are serialized; the callback may
  // call isActiveSession() and unbindSession() but not bindToSession().
  void bindToSession(SessionToken session, DisplacedCallback onDisplaced = {}, Residency residency = {});
  // `session` leaves the device (its callback is not called); nothing if it
  // is not active.
  void unbindSession(SessionToken session);

 private:
  struct Active {
    SessionToken session;
    DisplacedCallback onDisplaced;
    Residency residency;
  };

  hwsim::Device device_;
  std::int64_t ipuVersion_;

  std::mutex bindMutex_;          // serializes bindToSession, held while displaced sessions are told
  mutable std::mutex slotMutex_;  // guards active_
  std::vector<Active> active_;
};

}  // namespace mrt
