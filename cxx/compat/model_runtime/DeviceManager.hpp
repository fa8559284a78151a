// model_runtime::DeviceManager, Device, DeviceWaitConfig, DeviceConstraints:
// attaching simulated IPUs (hwsim) with the Model Runtime API's signatures.
// Every DeviceManager call may be made from any thread. get* calls throw
// mrt::Error (a std::runtime_error) with MRT_UNAVAILABLE when no device can be
// attached; tryGet* calls return nullptr instead.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>

#include "mrt.hpp"
#include "popef/Model.hpp"
#include "poplar/Device.hpp"
#include "poplar/OptionFlags.hpp"

namespace model_runtime {

class Session;

enum class DeviceWaitStrategy {
  NO_WAIT = MRT_DEVICE_NO_WAIT,
  WAIT_WITH_TIMEOUT = MRT_DEVICE_WAIT_WITH_TIMEOUT,
  WAIT_FOREVER = MRT_DEVICE_WAIT_FOREVER
};

struct DeviceWaitConfig {
  constexpr DeviceWaitConfig() = default;
  constexpr DeviceWaitConfig(DeviceWaitStrategy p_strategy, std::chrono::seconds p_timeout = std::chrono::seconds{0},
                             std::chrono::seconds p_sleepTime = std::chrono::seconds{15})
      : strategy(p_strategy), timeout(p_timeout), sleepTime(p_sleepTime) {}
  // WAIT_WITH_TIMEOUT for p_timeout.
  explicit constexpr DeviceWaitConfig(std::chrono::seconds p_timeout,
                                      std::chrono::seconds p_sleepTime = std::chrono::seconds{15})
      : strategy(DeviceWaitStrategy::WAIT_WITH_TIMEOUT), timeout(p_timeout), sleepTime(p_sleepTime) {}

  DeviceWaitStrategy strategy = {DeviceWaitStrategy::NO_WAIT};
  std::chrono::seconds timeout = std::chrono::seconds{0};
  std::chrono::seconds sleepTime = std::chrono::seconds{15};

  // libmrt extension: the same wait for mrt.hpp.
  mrt::DeviceWaitConfig toMrt() const { return mrt::DeviceWaitConfig(static_cast<mrt::DeviceWaitStrategy>(strategy), timeout, sleepTime); }
};

struct DeviceConstraints {
  constexpr DeviceConstraints() = default;
  explicit constexpr DeviceConstraints(bool p_requiresRemoteBuffersSupport)
      : requiresRemoteBuffersSupport(p_requiresRemoteBuffersSupport) {}
  constexpr operator bool() const { return requiresRemoteBuffersSupport; }

  bool requiresRemoteBuffersSupport = false;
};

// One attached device; its IPUs stay attached while any Device, ModelRunner
// or Session refers to them. Accessors: any thread. Move-only.
class Device {
 public:
  Device(const Device &) = delete;
  Device &operator=(const Device &other) = delete;
  Device(Device &&) = default;
  Device &operator=(Device &&) = default;
  // `device` (std::invalid_argument if it holds none) reporting
  // `ipu_version` as its architecture version.
  Device(poplar::Device device, int64_t ipu_version) : device_(std::move(device)), ipuVersion_(ipu_version) {
    if (!device_) throw std::invalid_argument("model_runtime::Device: the poplar::Device holds no device");
  }
  // libmrt extension: an mrt.hpp device, with its own architecture version.
  explicit Device(mrt::Device device) : Device(poplar::Device(std::move(device)), -1) {
    ipuVersion_ = mrtDevice().ipuVersion();
  }

  poplar::Device &device() { return device_; }
  const poplar::Device &device() const { return device_; }

  // The architecture version (2 for Mk2, 21 for C600; -1 if unknown).
  int64_t ipuVersion() const { return ipuVersion_; }

  // libmrt extensions: the device id (-1 for IPU Model devices), its IPUs,
  // and the mrt.hpp device underneath.
  int64_t id() const { return mrtDevice().id(); }
  int64_t numIpus() const { return mrtDevice().numIpus(); }
  const mrt::Device &mrtDevice() const { return device_.mrtDevice(); }

 private:
  poplar::Device device_;
  int64_t ipuVersion_;
};

// A view of the simulated system (MRT_HWSIM_IPUS, MRT_HWSIM_LOCK_DIR read at
// construction). Copies share one view.
class DeviceManager {
 public:
  DeviceManager &operator=(const DeviceManager &other) = delete;
  DeviceManager &operator=(DeviceManager &&) = delete;
  DeviceManager() : manager_(std::make_shared<mrt::DeviceManager>()) {}
  DeviceManager(const DeviceManager &) = default;
  DeviceManager(DeviceManager &&) = default;

  // 2 (Mk2) or 21 (C600); 0 if the system has no IPU.
  int64_t ipuHardwareVersion() { return manager_->ipuHardwareVersion(); }

  std::shared_ptr<Device> getDevice(std::shared_ptr<popef::Model> model, const DeviceWaitConfig &wait_config = {}) {
    return wrap(manager_->getDevice(checked(model).mrtModel(), wait_config.toMrt()));
  }
  std::shared_ptr<Device> tryGetDevice(std::shared_ptr<popef::Model> model, const DeviceWaitConfig &wait_config = {}) {
    return wrap(manager_->tryGetDevice(checked(model).mrtModel(), wait_config.toMrt()));
  }
  std::shared_ptr<Device> getDevice(int64_t num_ipus, const poplar::OptionFlags &device_options = {},
                                    const DeviceWaitConfig &wait_config = {},
                                    const DeviceConstraints &constrains = {}) {
    return wrap(manager_->getDevice(num_ipus, options(device_options), wait_config.toMrt(),
                                    constrains.requiresRemoteBuffersSupport));
  }
  std::shared_ptr<Device> tryGetDevice(int64_t num_ipus, const poplar::OptionFlags &device_options = {},
                                       const DeviceWaitConfig &wait_config = {},
                                       const DeviceConstraints &constrains = {}) {
    return wrap(manager_->tryGetDevice(num_ipus, options(device_options), wait_config.toMrt(),
                                       constrains.requiresRemoteBuffersSupport));
  }
  std::shared_ptr<Device> getSpecificDevice(int64_t device_id, std::shared_ptr<popef::Model> model,
                                            const DeviceWaitConfig &wait_config = {}) {
    return wrap(manager_->getSpecificDevice(device_id, checked(model).mrtModel(), wait_config.toMrt()));
  }
  std::shared_ptr<Device> getSpecificDevice(int64_t device_id, const poplar::OptionFlags &device_options = {},
                                            const DeviceWaitConfig &wait_config = {}) {
    return wrap(manager_->getSpecificDevice(device_id, options(device_options), wait_config.toMrt()));
  }
  std::shared_ptr<Device> tryGetSpecificDevice(int64_t device_id, std::shared_ptr<popef::Model> model,
                                               const DeviceWaitConfig &wait_config = {}) {
    return wrap(manager_->tryGetSpecificDevice(device_id, checked(model).mrtModel(), wait_config.toMrt()));
  }
  std::shared_ptr<Device> tryGetSpecificDevice(int64_t device_id, const poplar::OptionFlags &device_options = {},
                                               const DeviceWaitConfig &wait_config = {}) {
    return wrap(manager_->tryGetSpecificDevice(device_id, options(device_options), wait_config.toMrt()));
  }
  std::shared_ptr<Device> createIpuModelDevice(int64_t num_ipus, int64_t ipu_version = 2, int64_t tiles_per_ipu = 0) {
    return wrap(manager_->createIpuModelDevice(num_ipus, ipu_version, tiles_per_ipu));
  }
  std::shared_ptr<Device> createIpuModelDevice(std::shared_ptr<popef::Model> model, int64_t tiles_per_ipu = 0) {
    return wrap(manager_->createIpuModelDevice(checked(model).mrtModel(), tiles_per_ipu));
  }
  std::shared_ptr<Device> createSmallIpuModelDevice(int64_t num_ipus, int64_t ipu_version = 2) {
    return wrap(manager_->createSmallIpuModelDevice(num_ipus, ipu_version));
  }
  std::shared_ptr<Device> createSmallIpuModelDevice(std::shared_ptr<popef::Model> model) {
    return wrap(manager_->createSmallIpuModelDevice(checked(model).mrtModel()));
  }

 private:
  static const popef::Model &checked(const std::shared_ptr<popef::Model> &model) {
    if (!model) throw std::invalid_argument("model_runtime::DeviceManager: the model is null");
    return *model;
  }
  static mrt::DeviceOptions options(const poplar::OptionFlags &flags) {
    return mrt::DeviceOptions(flags.begin(), flags.end());
  }
  static std::shared_ptr<Device> wrap(mrt::Device device) { return std::make_shared<Device>(std::move(device)); }
  static std::shared_ptr<Device> wrap(std::optional<mrt::Device> device) {
    return device ? wrap(std::move(*device)) : nullptr;
  }

  std::shared_ptr<mrt::DeviceManager> manager_;
};

}  // namespace model_runtime
