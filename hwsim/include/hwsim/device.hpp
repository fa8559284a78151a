// The simulated IPU system: a DeviceManager lists devices (single IPUs and
// groups of 2, 4, ... like a real Pod), and a Device is attached exclusively
// across processes with advisory open-file-description locks (fcntl
// F_OFD_SETLK) on one file per IPU. The OS drops the locks when the holder
// exits or dies, so a crashed process never keeps an IPU. Locks are per open
// file description, so two Device objects in the same process also exclude
// each other.
//
// System configuration (read by DeviceManager::createDeviceManager):
//   MRT_HWSIM_IPUS      "8" = 8 IPUs of version 2 (GC200), "2x21" = 2 IPUs of
//                       version 21 (C600), "4x2" = 4 of version 2; default "4".
//   MRT_HWSIM_LOCK_DIR  directory of the lock files; default
//                       $XDG_RUNTIME_DIR/mrt-hwsim, else /tmp/mrt-hwsim-<uid>.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hwsim/device_error.hpp"
#include "hwsim/target.hpp"

namespace hwsim {

namespace detail {
struct DeviceState;
}

// Device ids: 0..N-1 are the single IPUs, then the groups of 2 (N..N+N/2-1),
// then groups of 4, and so on up to one group of all N (N a power of two;
// otherwise the largest power-of-two groups that fit).
struct DeviceInfo {
  unsigned id = 0;
  unsigned numIpus = 1;
  std::vector<unsigned> ipus;  // physical IPU indices
  Target target;               // numIpus filled in
};

class Device {
 public:
  Device();  // an empty handle
  ~Device();
  Device(Device &&) noexcept;
  Device &operator=(Device &&) noexcept;
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  bool valid() const { return state_ != nullptr; }
  unsigned id() const;
  const Target &getTarget() const;
  unsigned numIpus() const;
  const std::vector<unsigned> &ipus() const;
  bool isIpuModel() const;  // an unlocked model device (not from the pool)

  // Tries to attach without waiting: false if another holder has any of its IPUs.
  bool attach();
  void detach();
  bool isAttached() const;

  // The recovery action still pending after a device error (None when healthy).
  RecoveryAction pendingRecovery() const;
  // Performs the pending reset (the device must be attached).
  void reset();

  const std::shared_ptr<detail::DeviceState> &state() const { return state_; }

 private:
  friend class DeviceManager;
  explicit Device(std::shared_ptr<detail::DeviceState> state);
  std::shared_ptr<detail::DeviceState> state_;
};

struct SystemConfig {
  unsigned numIpus = 4;
  IpuVersion ipuVersion = IpuVersion::Ipu2;
  std::string lockDirectory;  // empty = default (see above)

  // lockDirectory, or the default directory it stands for when empty.
  std::string resolvedLockDirectory() const;

  // Parses "8", "2x21", "4x2". Throws InvalidArgument naming the bad text.
  static SystemConfig parse(const std::string &text);
  // From MRT_HWSIM_IPUS and MRT_HWSIM_LOCK_DIR.
  static SystemConfig fromEnvironment();
};

class DeviceManager {
 public:
  static DeviceManager createDeviceManager();  // SystemConfig::fromEnvironment()
  explicit DeviceManager(SystemConfig config);

  const SystemConfig &config() const { return config_; }
  const std::string &lockDirectory() const { return lockDir_; }

  std::vector<DeviceInfo> getDeviceInfos() const;
  // All devices of exactly numIpus IPUs (unattached handles).
  std::vector<Device> getDevices(unsigned numIpus) const;
  Device getDevice(unsigned id) const;  // throws NotFound
  // Ids of the devices none of whose IPUs is attached by anyone right now.
  std::vector<unsigned> getFreeDeviceIds() const;
  bool isFree(unsigned id) const;

  // A model device outside the pool: always attachable, never locked.
  static Device createIpuModelDevice(const Target &target);
  static Device createSmallIpuModelDevice(unsigned numIpus = 1);

 private:
  SystemConfig config_;
  std::string lockDir_;
  std::vector<DeviceInfo> infos_;
};

}  // namespace hwsim
