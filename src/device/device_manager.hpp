// mrt::DeviceManager (seed 001, 10.1.1): finds and attaches devices of the
// simulated IPU system (hwsim's device pool), waiting for busy ones as a
// DeviceWaitConfig says, or creates IPU Model devices outside the pool.
//
// The system comes from the environment (hwsim/include/hwsim/device.hpp):
// MRT_HWSIM_IPUS ("4" by default, "8", "2x21"; "0" = a system without IPUs)
// and MRT_HWSIM_LOCK_DIR (where the cross-process attach locks live).
//
// Failures: getX throws mrt::Error - Unavailable when no device could be
// attached (the message lists the devices of the system, which are busy and
// how long it waited), NotFound for a device id the system does not have,
// InvalidArgument for bad arguments (num_ipus 0 or not a power of two,
// unknown device options, negative wait times). tryX return nullptr where
// getX would throw Unavailable, and throw like getX for everything else.
//
// Thread safety: the manager only holds the system's immutable description,
// so every member may be called from any number of threads at once; which
// caller gets a contended device is decided by the OS locks.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <hwsim/device.hpp>

#include "device/device.hpp"
#include "device/device_options.hpp"
#include "device/device_wait_config.hpp"
#include "popef/model.hpp"

namespace mrt {

class DeviceManager {
 public:
  // The system described by MRT_HWSIM_IPUS and MRT_HWSIM_LOCK_DIR. Throws
  // InvalidArgument naming the variable if MRT_HWSIM_IPUS is malformed.
  DeviceManager();
  // An explicit system; config.numIpus == 0 makes a system without IPUs.
  explicit DeviceManager(hwsim::SystemConfig config);

  DeviceManager(const DeviceManager &) = default;
  DeviceManager(DeviceManager &&) = default;
  DeviceManager &operator=(const DeviceManager &) = delete;
  DeviceManager &operator=(DeviceManager &&) = delete;

  // The IPU architecture version of the system: 2 (Mk2: GC200, Bow) or 21
  // (C600); 0 if the system has no IPUs.
  std::int64_t ipuHardwareVersion() const;

  // ---- the simulated system ----
  // Every device id, in id order (singles, then pairs, then quads, ...).
  const std::vector<hwsim::DeviceInfo> &deviceInfos() const noexcept;
  // True if nobody (in any process) holds any IPU of device `id` right now.
  bool isFree(std::int64_t id) const;

  // ---- pool devices for a number of IPUs ----
  std::shared_ptr<Device> getDevice(std::int64_t num_ipus, const DeviceOptions &device_options = {},
                                    const DeviceWaitConfig &wait_config = {},
                                    const DeviceConstraints &constraints = {}) const;
  std::shared_ptr<Device> tryGetDevice(std::int64_t num_ipus, const DeviceOptions &device_options = {},
                                       const DeviceWaitConfig &wait_config = {},
                                       const DeviceConstraints &constraints = {}) const;

  // ---- pool devices for a model: its numIpus, ipuVersion and deviceOptions;
  // remote buffer support if any anchor lives in a remote buffer ----
  std::shared_ptr<Device> getDevice(const std::shared_ptr<const popef::Model> &model,
                                    const DeviceWaitConfig &wait_config = {}) const;
  std::shared_ptr<Device> tryGetDevice(const std::shared_ptr<const popef::Model> &model,
                                       const DeviceWaitConfig &wait_config = {}) const;

  // ---- one device by id ----
  std::shared_ptr<Device> getSpecificDevice(std::int64_t device_id, const DeviceOptions &device_options = {},
                                            const DeviceWaitConfig &wait_config = {}) const;
  std::shared_ptr<Device> tryGetSpecificDevice(std::int64_t device_id,
                                               const DeviceOptions &device_options = {},
                                               const DeviceWaitConfig &wait_config = {}) const;
  // With a model: its device options; the device must have at least the
  // model's number of IPUs (InvalidArgument otherwise) and its IPU version
  // (Unavailable otherwise, as for getDevice(model)).
  std::shared_ptr<Device> getSpecificDevice(std::int64_t device_id,
                                            const std::shared_ptr<const popef::Model> &model,
                                            const DeviceWaitConfig &wait_config = {}) const;
  std::shared_ptr<Device> tryGetSpecificDevice(std::int64_t device_id,
                                               const std::shared_ptr<const popef::Model> &model,
                                               const DeviceWaitConfig &wait_config = {}) const;

  // ---- IPU Model devices: outside the pool, never busy ----
  // num_ipus >= 1; ipu_version 2 or 21; tiles_per_ipu 0 (the architecture's
  // 1472) up to 1472.
  std::shared_ptr<Device> createIpuModelDevice(std::int64_t num_ipus, std::int64_t ipu_version = 2,
                                               std::int64_t tiles_per_ipu = 0) const;
  std::shared_ptr<Device> createIpuModelDevice(const std::shared_ptr<const popef::Model> &model,
                                               std::int64_t tiles_per_ipu = 0) const;
  // 4 tiles per IPU: quick to create and run, for small programs.
  std::shared_ptr<Device> createSmallIpuModelDevice(std::int64_t num_ipus,
                                                    std::int64_t ipu_version = 2) const;
  std::shared_ptr<Device> createSmallIpuModelDevice(const std::shared_ptr<const popef::Model> &model) const;

 private:
  struct Request;
  std::shared_ptr<Device> acquire(const Request &request, bool throwIfUnavailable) const;
  std::shared_ptr<Device> attachFirstFree(const std::vector<unsigned> &candidates) const;
  std::vector<unsigned> candidatesFor(std::int64_t num_ipus, const DeviceConstraints &constraints) const;
  Request requestFor(std::int64_t num_ipus, const DeviceOptions &device_options,
                     const DeviceWaitConfig &wait_config, const DeviceConstraints &constraints) const;
  Request requestFor(const std::shared_ptr<const popef::Model> &model,
                     const DeviceWaitConfig &wait_config) const;
  Request specificRequest(std::int64_t device_id, const DeviceOptions &device_options,
                          const DeviceWaitConfig &wait_config) const;
  Request specificRequest(std::int64_t device_id, const std::shared_ptr<const popef::Model> &model,
                          const DeviceWaitConfig &wait_config) const;
  std::string describeRequest(const Request &request) const;
  std::string describeSystem() const;

  struct System;
  static std::shared_ptr<const System> systemFor(hwsim::SystemConfig config);
  const hwsim::DeviceManager &pool() const;  // the simulated system's device pool

  std::shared_ptr<const System> system_;  // null: the system has no IPUs
};

}  // namespace mrt
