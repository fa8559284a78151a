// The device part of the C API (include/mrt_c.h, "Devices"), over
// src/device. A manager handle holds its own copy of the immutable
// mrt::DeviceManager; a device handle holds one shared reference to an
// mrt::Device, so sessions can keep using the device after
// mrt_device_destroy() (the IPUs are detached with the last reference).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "capi/device.hpp"
#include "capi/sized_struct.hpp"
#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/option_pairs.hpp"
#include "device/device_manager.hpp"

struct mrt_device_manager {
  mrt::DeviceManager manager;
};

namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::fillSized;
using mrt::capi::modelOf;
using mrt::capi::waitConfigOf;
using mrt::capi::requireNotNull;

static_assert(static_cast<int>(mrt::DeviceWaitStrategy::NO_WAIT) == MRT_DEVICE_NO_WAIT);
static_assert(static_cast<int>(mrt::DeviceWaitStrategy::WAIT_WITH_TIMEOUT) == MRT_DEVICE_WAIT_WITH_TIMEOUT);
static_assert(static_cast<int>(mrt::DeviceWaitStrategy::WAIT_FOREVER) == MRT_DEVICE_WAIT_FOREVER);

// The first published layouts: callers may pass these sizes or larger.

const mrt::DeviceManager &managerOf(const mrt_device_manager *handle) {
  requireNotNull(handle, "manager");
  return handle->manager;
}

const mrt::Device &deviceOf(const mrt_device *handle) {
  requireNotNull(handle, "device");
  return *handle->device;
}

// { key, value, key, value, ..., NULL } or NULL.
mrt::DeviceOptions deviceOptionsOf(const char *const *pairs) {
  return mrt::capi::optionPairsOf(pairs, "device_options", "device option");
}

// The body of every export that hands out a device: checks the manager and
// `out`, then gives the caller what get(manager) returns - a device, or
// nullptr from a tryGet call when none is free.
template <typename Get>
mrt_status giveDevice(const char *function, const mrt_device_manager *manager, mrt_device **out,
                      Get &&get) noexcept {
  return mrt::capi::guard(function, [&] {
    const mrt::DeviceManager &m = managerOf(manager);
    requireNotNull(out, "out");
    std::shared_ptr<mrt::Device> device = get(m);
    *out = device ? new mrt_device{std::move(device)} : nullptr;
  });
}

// As giveDevice, for the calls that take a model: get(manager, model).
template <typename Get>
mrt_status giveDeviceForModel(const char *function, const mrt_device_manager *manager, const mrt_model *model,
                              mrt_device **out, Get &&get) noexcept {
  return giveDevice(function, manager, out,
                    [&](const mrt::DeviceManager &m) { return get(m, modelOf(model, "model")); });
}

// The body of the device accessors: *out = read(device).
template <typename Value, typename Read>
mrt_status readDevice(const char *function, const mrt_device *device, Value *out, const char *out_name,
                      Read &&read) noexcept {
  return mrt::capi::guard(function, [&] {
    const mrt::Device &d = deviceOf(device);
    requireNotNull(out, out_name);
    *out = read(d);
  });
}

const char *staticTargetName(const std::string &name) {
  for (const char *known : {"GC200", "Bow", "C600", "IPU-Model", "IPU-Model small"}) {
    if (name == known) return known;
  }
  return "unknown";
}

}  // namespace

namespace mrt::capi {

// NULL: the defaults (NO_WAIT). Fields beyond the caller's struct_size keep
// their defaults; all fields are in the first version today.
mrt::DeviceWaitConfig waitConfigOf(const mrt_device_wait_config *config, const char *argument) {
  mrt::DeviceWaitConfig result;
  if (config == nullptr) return result;
  mrt_device_wait_config defaults;
  mrt_device_wait_config_init(&defaults);
  const mrt_device_wait_config c = readSized(config, defaults, MRT_DEVICE_WAIT_CONFIG_V1_SIZE, argument);
  if (c.strategy < MRT_DEVICE_NO_WAIT || c.strategy > MRT_DEVICE_WAIT_FOREVER) {
    throw mrt::Error(mrt::ErrorCode::InvalidArgument,
                "{}->strategy {} is not an mrt_device_wait_strategy value", argument,
                c.strategy);
  }
  if (c.sleep_time_ns < 0) {
    throw mrt::Error(mrt::ErrorCode::InvalidArgument, "{}->sleep_time_ns must not be negative (got {})", argument,
                c.sleep_time_ns);
  }
  result.strategy = static_cast<mrt::DeviceWaitStrategy>(c.strategy);
  // A timeout of MRT_FOREVER is what the WAIT_FOREVER strategy does.
  if (c.strategy == MRT_DEVICE_WAIT_WITH_TIMEOUT && c.timeout_ns < 0)
    result.strategy = mrt::DeviceWaitStrategy::WAIT_FOREVER;
  else
    result.timeout = std::chrono::nanoseconds(std::max<int64_t>(c.timeout_ns, 0));
  result.sleepTime = std::chrono::nanoseconds(c.sleep_time_ns);
  return result;
}

}  // namespace mrt::capi

extern "C" {

MRT_API mrt_status mrt_device_wait_config_init_sized(mrt_device_wait_config *config, size_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt::DeviceWaitConfig defaults;
    mrt_device_wait_config c{};
    c.strategy = static_cast<int32_t>(defaults.strategy);
    c.timeout_ns = defaults.timeout.count();
    c.sleep_time_ns = defaults.sleepTime.count();
    mrt::capi::initSized(config, c, size, MRT_DEVICE_WAIT_CONFIG_V1_SIZE,
                         MRT_STRUCT_SIZE(mrt_device_wait_config, sleep_time_ns), "config");
  });
}

// The symbol of callers built before mrt_device_wait_config_init_sized: V1 fields.
MRT_API void(mrt_device_wait_config_init)(mrt_device_wait_config *config) noexcept {
  if (config != nullptr) mrt_device_wait_config_init_sized(config, MRT_DEVICE_WAIT_CONFIG_V1_SIZE);
}

MRT_API mrt_status mrt_device_manager_create(mrt_device_manager **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(out, "out");
    *out = new mrt_device_manager{mrt::DeviceManager()};
  });
}

MRT_API void mrt_device_manager_destroy(mrt_device_manager *manager) noexcept { delete manager; }

MRT_API mrt_status mrt_device_manager_ipu_hardware_version(const mrt_device_manager *manager,
                                                           int64_t *out_version) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = managerOf(manager);
    requireNotNull(out_version, "out_version");
    *out_version = m.ipuHardwareVersion();
  });
}

MRT_API mrt_status mrt_device_manager_device_count(const mrt_device_manager *manager,
                                                   size_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = managerOf(manager);
    requireNotNull(out_count, "out_count");
    *out_count = m.deviceInfos().size();
  });
}

MRT_API mrt_status mrt_device_manager_device_info(const mrt_device_manager *manager, size_t index,
                                                  mrt_device_info *out_info) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = managerOf(manager);
    const auto &infos = m.deviceInfos();
    if (index >= infos.size()) {
      throw Error(ErrorCode::InvalidArgument, "device index {} is out of range (the system has {} devices)",
                  index, infos.size());
    }
    const hwsim::DeviceInfo &device = infos[index];
    mrt_device_info info{};
    info.id = device.id;
    info.num_ipus = device.numIpus;
    info.ipu_version = static_cast<int64_t>(device.target.ipuVersion);
    info.tiles_per_ipu = device.target.tilesPerIpu;
    info.is_free = m.isFree(device.id);
    info.target_name = staticTargetName(device.target.name);
    fillSized(out_info, info, MRT_DEVICE_INFO_V1_SIZE, "out_info");
  });
}

MRT_API mrt_status mrt_device_manager_get_device(const mrt_device_manager *manager, int64_t num_ipus,
                                                 const char *const *device_options,
                                                 const mrt_device_wait_config *wait_config,
                                                 bool requires_remote_buffers, mrt_device **out) noexcept {
  return giveDevice(__func__, manager, out, [&](const mrt::DeviceManager &m) {
    return m.getDevice(num_ipus, deviceOptionsOf(device_options), waitConfigOf(wait_config, "wait_config"),
                       mrt::DeviceConstraints(requires_remote_buffers));
  });
}

MRT_API mrt_status mrt_device_manager_try_get_device(const mrt_device_manager *manager, int64_t num_ipus,
                                                     const char *const *device_options,
                                                     const mrt_device_wait_config *wait_config,
                                                     bool requires_remote_buffers,
                                                     mrt_device **out) noexcept {
  return giveDevice(__func__, manager, out, [&](const mrt::DeviceManager &m) {
    return m.tryGetDevice(num_ipus, deviceOptionsOf(device_options), waitConfigOf(wait_config, "wait_config"),
                          mrt::DeviceConstraints(requires_remote_buffers));
  });
}

MRT_API mrt_status mrt_device_manager_get_device_for_model(const mrt_device_manager *manager,
                                                           const mrt_model *model,
                                                           const mrt_device_wait_config *wait_config,
                                                           mrt_device **out) noexcept {
  return giveDeviceForModel(__func__, manager, model, out, [&](const mrt::DeviceManager &m, const auto &popef) {
    return m.getDevice(popef, waitConfigOf(wait_config, "wait_config"));
  });
}

MRT_API mrt_status mrt_device_manager_try_get_device_for_model(const mrt_device_manager *manager,
                                                               const mrt_model *model,
                                                               const mrt_device_wait_config *wait_config,
                                                               mrt_device **out) noexcept {
  return giveDeviceForModel(__func__, manager, model, out, [&](const mrt::DeviceManager &m, const auto &popef) {
    return m.tryGetDevice(popef, waitConfigOf(wait_config, "wait_config"));
  });
}

MRT_API mrt_status mrt_device_manager_get_specific_device(const mrt_device_manager *manager,
                                                          int64_t device_id,
                                                          const char *const *device_options,
                                                          const mrt_device_wait_config *wait_config,
                                                          mrt_device **out) noexcept {
  return giveDevice(__func__, manager, out, [&](const mrt::DeviceManager &m) {
    return m.getSpecificDevice(device_id, deviceOptionsOf(device_options), waitConfigOf(wait_config, "wait_config"));
  });
}

MRT_API mrt_status mrt_device_manager_try_get_specific_device(const mrt_device_manager *manager,
                                                              int64_t device_id,
                                                              const char *const *device_options,
                                                              const mrt_device_wait_config *wait_config,
                                                              mrt_device **out) noexcept {
  return giveDevice(__func__, manager, out, [&](const mrt::DeviceManager &m) {
    return m.tryGetSpecificDevice(device_id, deviceOptionsOf(device_options),
                                  waitConfigOf(wait_config, "wait_config"));
  });
}

MRT_API mrt_status mrt_device_manager_get_specific_device_for_model(const mrt_device_manager *manager,
                                                                    int64_t device_id, const mrt_model *model,
                                                                    const mrt_device_wait_config *wait_config,
                                                                    mrt_device **out) noexcept {
  return giveDeviceForModel(__func__, manager, model, out, [&](const mrt::DeviceManager &m, const auto &popef) {
    return m.getSpecificDevice(device_id, popef, waitConfigOf(wait_config, "wait_config"));
  });
}

MRT_API mrt_status mrt_device_manager_try_get_specific_device_for_model(
    const mrt_device_manager *manager, int64_t device_id, const mrt_model *model,
    const mrt_device_wait_config *wait_config, mrt_device **out) noexcept {
  return giveDeviceForModel(__func__, manager, model, out, [&](const mrt::DeviceManager &m, const auto &popef) {
    return m.tryGetSpecificDevice(device_id, popef, waitConfigOf(wait_config, "wait_config"));
  });
}

MRT_API mrt_status mrt_device_manager_create_ipu_model_device(const mrt_device_manager *manager,
                                                              int64_t num_ipus, int64_t ipu_version,
                                                              int64_t tiles_per_ipu,
                                                              mrt_device **out) noexcept {
  return giveDevice(__func__, manager, out, [&](const mrt::DeviceManager &m) {
    return m.createIpuModelDevice(num_ipus, ipu_version, tiles_per_ipu);
  });
}

MRT_API mrt_status mrt_device_manager_create_ipu_model_device_for_model(const mrt_device_manager *manager,
                                                                        const mrt_model *model,
                                                                        int64_t tiles_per_ipu,
                                                                        mrt_device **out) noexcept {
  return giveDeviceForModel(__func__, manager, model, out, [&](const mrt::DeviceManager &m, const auto &popef) {
    return m.createIpuModelDevice(popef, tiles_per_ipu);
  });
}

MRT_API mrt_status mrt_device_manager_create_small_ipu_model_device(const mrt_device_manager *manager,
                                                                    int64_t num_ipus, int64_t ipu_version,
                                                                    mrt_device **out) noexcept {
  return giveDevice(__func__, manager, out, [&](const mrt::DeviceManager &m) {
    return m.createSmallIpuModelDevice(num_ipus, ipu_version);
  });
}

MRT_API mrt_status mrt_device_manager_create_small_ipu_model_device_for_model(
    const mrt_device_manager *manager, const mrt_model *model, mrt_device **out) noexcept {
  return giveDeviceForModel(__func__, manager, model, out, [&](const mrt::DeviceManager &m, const auto &popef) {
    return m.createSmallIpuModelDevice(popef);
  });
}

MRT_API void mrt_device_destroy(mrt_device *device) noexcept { delete device; }

MRT_API mrt_status mrt_device_ipu_version(const mrt_device *device, int64_t *out_version) noexcept {
  return readDevice(__func__, device, out_version, "out_version", [](const mrt::Device &d) { return d.ipuVersion(); });
}

MRT_API mrt_status mrt_device_id(const mrt_device *device, int64_t *out_id) noexcept {
  return readDevice(__func__, device, out_id, "out_id", [](const mrt::Device &d) { return d.id(); });
}

MRT_API mrt_status mrt_device_num_ipus(const mrt_device *device, int64_t *out_num_ipus) noexcept {
  return readDevice(__func__, device, out_num_ipus, "out_num_ipus", [](const mrt::Device &d) { return d.numIpus(); });
}

}  // extern "C"
