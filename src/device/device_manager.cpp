#include "device/device_manager.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <support/process_singleton.hpp>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "device/duration_text.hpp"
#include "device/hwsim_error.hpp"

namespace mrt {

namespace {

constexpr std::int64_t kMaxIpus = 256;  // as hwsim::SystemConfig allows

bool isPowerOfTwo(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

std::string ipusText(std::int64_t n) { return fmt::format("{} IPU{}", n, n == 1 ? "" : "s"); }

// "IPUs 0-3", "IPU 2".
std::string ipuListText(const std::vector<unsigned> &ipus) {
  if (ipus.size() == 1) return fmt::format("IPU {}", ipus.front());
  return fmt::format("IPUs {}-{}", ipus.front(), ipus.back());
}

// A system given as "0" or "0xV" has no IPUs; hwsim itself needs at least one.
bool environmentHasNoIpus() {
  const char *text = std::getenv("MRT_HWSIM_IPUS");
  if (text == nullptr) return false;
  const std::string value(text);
  const std::string count = value.substr(0, value.find('x'));
  return !count.empty() && count.find_first_not_of('0') == std::string::npos;
}

hwsim::SystemConfig systemFromEnvironment() {
  if (environmentHasNoIpus()) {
    hwsim::SystemConfig empty;
    empty.numIpus = 0;
    return empty;
  }
  return callHwsim([] { return hwsim::SystemConfig::fromEnvironment(); });
}

void requireModel(const std::shared_ptr<const popef::Model> &model) {
  if (!model) throw Error(ErrorCode::InvalidArgument, "model must not be null");
}

std::string modelPrefix(const popef::Model &model) {
  return fmt::format("model '{}': ", model.metadata.executable());
}

// The prefix is made only when there are options to check.
void validateModelDeviceOptions(const popef::Model &model) {
  if (!model.metadata.deviceOptions().empty()) validateDeviceOptions(model.metadata.deviceOptions(), modelPrefix(model));
}

// Every simulated pool device supports remote buffers (as Device says); the
// constraint is still applied through this, for the day one does not.
bool supportsRemoteBuffers(const hwsim::DeviceInfo &) { return true; }

bool usesRemoteBuffers(const popef::Model &model) {
  const auto &anchors = model.metadata.anchors();
  return std::any_of(anchors.begin(), anchors.end(),
                     [](const popef::Anchor &a) { return a.remoteBuffer().has_value(); });
}

hwsim::Target ipuModelTarget(std::int64_t numIpus, std::int64_t ipuVersion, std::int64_t tilesPerIpu) {
  if (numIpus < 1 || numIpus > kMaxIpus) {
    throw Error(ErrorCode::InvalidArgument, "num_ipus must be between 1 and {} (got {})", kMaxIpus, numIpus);
  }
  if (ipuVersion != 2 && ipuVersion != 21) {
    throw Error(ErrorCode::InvalidArgument, "ipu_version {} is not 2 (Mk2) or 21 (C600)", ipuVersion);
  }
  hwsim::Target target =
      hwsim::Target::forVersion(static_cast<hwsim::IpuVersion>(ipuVersion), static_cast<unsigned>(numIpus));
  if (tilesPerIpu < 0 || tilesPerIpu > static_cast<std::int64_t>(target.tilesPerIpu)) {
    throw Error(ErrorCode::InvalidArgument, "tiles_per_ipu {} is out of range: 0 (the default) to {}",
                tilesPerIpu, target.tilesPerIpu);
  }
  if (tilesPerIpu != 0) target.tilesPerIpu = static_cast<unsigned>(tilesPerIpu);
  target.name = "IPU-Model";
  return target;
}

std::shared_ptr<Device> ipuModelDevice(const hwsim::Target &target) {
  hwsim::Device device = hwsim::DeviceManager::createIpuModelDevice(target);
  device.attach();  // a model device is never busy
  return std::make_shared<Device>(std::move(device), static_cast<std::int64_t>(target.ipuVersion));
}

}  // namespace

// The simulated system's description, immutable once made.
struct DeviceManager::System {
  hwsim::DeviceManager devices;
  std::vector<hwsim::DeviceInfo> infos;
};

// What one get/tryGet call asks for, checked and resolved to device ids.
// What was asked is described (describeRequest()) only for a message: formatting
// it was a tenth of taking a device for a runner (issue 14).
struct DeviceManager::Request {
  std::int64_t num_ipus = 0;               // a device of this many IPUs, or
  std::optional<unsigned> device;          // this device
  const popef::Model *model = nullptr;     // for this model, if given
  std::vector<unsigned> candidates;        // ids to try, in order
  std::string impossible;                  // why no device can ever match (then no candidates)
  DeviceWaitConfig wait;
};

// "a device of 2 IPUs", "device 4 (IPUs 0-1)", then " for model 'm'".
std::string DeviceManager::describeRequest(const Request &request) const {
  std::string what = request.device ? fmt::format("device {} ({})", *request.device,
                                                  ipuListText(deviceInfos()[*request.device].ipus))
                                    : fmt::format("a device of {}", ipusText(request.num_ipus));
  if (request.model != nullptr) what += fmt::format(" for model '{}'", request.model->metadata.executable());
  return what;
}

// Made once per configuration and shared by the managers made for it: every
// runner made without a device of its own makes a manager, and building
// the device list (a Target per device) and copying it was about 5% of a
// small model's runner creation (issue 14). The most recent configuration
// is kept; the lock directory is compared resolved, as the default one
// depends on the environment.
std::shared_ptr<const DeviceManager::System> DeviceManager::systemFor(hwsim::SystemConfig config) {
  struct Kept {
    std::mutex &mutex() { return mutex_; }
    std::mutex mutex_;
    std::shared_ptr<const System> system;
  };
  // Managers may be made while static objects are destroyed.
  Kept *const kept = &support::processSingleton<Kept>();
  config.lockDirectory = config.resolvedLockDirectory();
  std::lock_guard lock(kept->mutex());
  if (kept->system) {
    const hwsim::SystemConfig &had = kept->system->devices.config();
    if (had.numIpus == config.numIpus && had.ipuVersion == config.ipuVersion &&
        had.lockDirectory == config.lockDirectory) {
      return kept->system;
    }
  }
  hwsim::DeviceManager devices = callHwsim([&] { return hwsim::DeviceManager(std::move(config)); });
  std::vector<hwsim::DeviceInfo> infos = devices.getDeviceInfos();
  kept->system = std::make_shared<const System>(System{std::move(devices), std::move(infos)});
  return kept->system;
}

DeviceManager::DeviceManager() : DeviceManager(systemFromEnvironment()) {}

DeviceManager::DeviceManager(hwsim::SystemConfig config) {
  if (config.numIpus != 0) system_ = systemFor(std::move(config));
}

const std::vector<hwsim::DeviceInfo> &DeviceManager::deviceInfos() const noexcept {
  static const std::vector<hwsim::DeviceInfo> kNone;
  return system_ ? system_->infos : kNone;
}

const hwsim::DeviceManager &DeviceManager::pool() const { return system_->devices; }

std::int64_t DeviceManager::ipuHardwareVersion() const {
  return system_ ? static_cast<std::int64_t>(pool().config().ipuVersion) : 0;
}

bool DeviceManager::isFree(std::int64_t id) const {
  if (id < 0 || id >= static_cast<std::int64_t>(deviceInfos().size())) {
    throw Error(ErrorCode::NotFound, "no device {}: {}", id, describeSystem());
  }
  return callHwsim([&] { return pool().isFree(static_cast<unsigned>(id)); });
}

// ------------------------------------------------------------ requests

std::vector<unsigned> DeviceManager::candidatesFor(std::int64_t num_ipus,
                                                   const DeviceConstraints &constraints) const {
  std::vector<unsigned> ids;
  for (const hwsim::DeviceInfo &info : deviceInfos()) {
    if (info.numIpus == num_ipus &&
        (!constraints.requiresRemoteBuffersSupport || supportsRemoteBuffers(info))) {
      ids.push_back(info.id);
    }
  }
  return ids;
}

DeviceManager::Request DeviceManager::requestFor(std::int64_t num_ipus, const DeviceOptions &device_options,
                                                 const DeviceWaitConfig &wait_config,
                                                 const DeviceConstraints &constraints) const {
  validate(wait_config);
  validateDeviceOptions(device_options);
  if (num_ipus < 1) throw Error(ErrorCode::InvalidArgument, "num_ipus must be at least 1 (got {})", num_ipus);
  if (!isPowerOfTwo(num_ipus)) {
    throw Error(ErrorCode::InvalidArgument,
                "num_ipus {} is not a power of two (devices have 1, 2, 4, 8, ... IPUs)", num_ipus);
  }
  Request request;
  request.num_ipus = num_ipus;
  request.wait = wait_config;
  if (!system_) {
    request.impossible = "the system has no IPUs";
    return request;
  }
  request.candidates = candidatesFor(num_ipus, constraints);
  if (request.candidates.empty())
    request.impossible = fmt::format("the system has no device of {}", ipusText(num_ipus));
  return request;
}

DeviceManager::Request DeviceManager::requestFor(const std::shared_ptr<const popef::Model> &model,
                                                 const DeviceWaitConfig &wait_config) const {
  requireModel(model);
  const popef::Metadata &meta = model->metadata;
  validateModelDeviceOptions(*model);
  const auto numIpus = static_cast<std::int64_t>(meta.numIpus());
  if (!isPowerOfTwo(numIpus)) {
    throw Error(ErrorCode::InvalidArgument,
                "{}needs {}, which no device has (devices have 1, 2, 4, 8, ... IPUs)", modelPrefix(*model),
                ipusText(numIpus));
  }
  Request request =
      requestFor(numIpus, DeviceOptions{}, wait_config, DeviceConstraints(usesRemoteBuffers(*model)));
  request.model = model.get();
  if (system_ && meta.ipuVersion() != ipuHardwareVersion()) {
    request.candidates.clear();
    request.impossible = fmt::format("the model needs IPU version {}, but the system's IPUs are version {}",
                                     meta.ipuVersion(), ipuHardwareVersion());
  }
  return request;
}

DeviceManager::Request DeviceManager::specificRequest(std::int64_t device_id,
                                                      const DeviceOptions &device_options,
                                                      const DeviceWaitConfig &wait_config) const {
  validate(wait_config);
  validateDeviceOptions(device_options);
  if (device_id < 0 || device_id >= static_cast<std::int64_t>(deviceInfos().size())) {
    throw Error(ErrorCode::NotFound, "no device {}: {}", device_id, describeSystem());
  }
  const hwsim::DeviceInfo &info = deviceInfos()[static_cast<std::size_t>(device_id)];
  Request request;
  request.device = info.id;
  request.candidates = {info.id};
  request.wait = wait_config;
  return request;
}

DeviceManager::Request DeviceManager::specificRequest(std::int64_t device_id,
                                                      const std::shared_ptr<const popef::Model> &model,
                                                      const DeviceWaitConfig &wait_config) const {
  requireModel(model);
  const popef::Metadata &meta = model->metadata;
  validateModelDeviceOptions(*model);
  Request request = specificRequest(device_id, DeviceOptions{}, wait_config);
  const hwsim::DeviceInfo &info = deviceInfos()[static_cast<std::size_t>(device_id)];
  if (info.numIpus < meta.numIpus()) {
    throw Error(ErrorCode::InvalidArgument, "{}needs {}, but device {} has {}", modelPrefix(*model),
                ipusText(static_cast<std::int64_t>(meta.numIpus())), device_id, ipusText(info.numIpus));
  }
  request.model = model.get();
  if (meta.ipuVersion() != ipuHardwareVersion()) {
    request.candidates.clear();
    request.impossible = fmt::format("the model needs IPU version {}, but the system's IPUs are version {}",
                                     meta.ipuVersion(), ipuHardwareVersion());
  }
  return request;
}

// ------------------------------------------------------------ attaching

std::shared_ptr<Device> DeviceManager::attachFirstFree(const std::vector<unsigned> &candidates) const {
  for (unsigned id : candidates) {
    hwsim::Device device = callHwsim([&] { return pool().getDevice(id); });
    if (callHwsim([&] { return device.attach(); })) {
      return std::make_shared<Device>(std::move(device), ipuHardwareVersion());
    }
  }
  return nullptr;
}

std::shared_ptr<Device> DeviceManager::acquire(const Request &request, bool throwIfUnavailable) const {
  if (!request.impossible.empty()) {
    if (!throwIfUnavailable) return nullptr;
    throw Error(ErrorCode::Unavailable, "cannot attach {}: {}; {}", describeRequest(request), request.impossible,
                describeSystem());
  }
  using Clock = std::chrono::steady_clock;
  const DeviceWaitConfig &wait = request.wait;
  const auto start = Clock::now();
  std::chrono::nanoseconds waited{0};
  for (;;) {
    if (auto device = attachFirstFree(request.candidates)) {
      if (log::logger().should_log(spdlog::level::info)) {
        log::logger().info("attached device {} ({}) for {}", device->id(), ipusText(device->numIpus()),
                           describeRequest(request));
      }
      return device;
    }
    waited = Clock::now() - start;
    if (wait.strategy == DeviceWaitStrategy::NO_WAIT) break;
    auto pause = std::max(wait.sleepTime, DeviceWaitConfig::kMinSleepTime);
    if (wait.strategy == DeviceWaitStrategy::WAIT_WITH_TIMEOUT) {
      if (waited >= wait.timeout) break;
      pause = std::min(pause, wait.timeout - waited);  // one last attempt at the deadline
    }
    std::this_thread::sleep_for(pause);
  }
  if (!throwIfUnavailable) return nullptr;

  std::vector<std::string> states;
  for (unsigned id : request.candidates) {
    states.push_back(fmt::format("{} ({}) {}", id, ipuListText(deviceInfos()[id].ipus),
                                 callHwsim([&] { return pool().isFree(id); }) ? "free now" : "busy"));
  }
  const std::string howLong = wait.strategy == DeviceWaitStrategy::NO_WAIT
                                  ? std::string("did not wait (NO_WAIT)")
                                  : fmt::format("waited {} ({})", durationText(waited), describe(wait));
  throw Error(ErrorCode::Unavailable, "cannot attach {}: candidates {}; {}; {}", describeRequest(request),
              fmt::join(states, ", "), howLong, describeSystem());
}

// "system: 4 IPUs of version 2 (GC200) as devices 0-3 (1 IPU each),
//  4-5 (2 IPUs each), 6 (4 IPUs); busy: 0, 4, 6"
std::string DeviceManager::describeSystem() const {
  if (!system_) return "system: no IPUs";
  const hwsim::SystemConfig &config = pool().config();
  const std::vector<hwsim::DeviceInfo> &infos = deviceInfos();
  std::vector<std::string> groups;
  for (std::size_t first = 0; first < infos.size();) {
    std::size_t last = first;
    while (last + 1 < infos.size() && infos[last + 1].numIpus == infos[first].numIpus) ++last;
    const std::string ids = first == last ? fmt::format("{}", first) : fmt::format("{}-{}", first, last);
    groups.push_back(fmt::format("{} ({}{})", ids, ipusText(infos[first].numIpus), first == last ? "" : " each"));
    first = last + 1;
  }
  // Devices 0..numIpus-1 are the single IPUs: one query each, then every
  // device is busy if any of its IPUs is.
  std::vector<bool> ipuBusy(config.numIpus);
  for (unsigned ipu = 0; ipu < config.numIpus; ++ipu)
    ipuBusy[ipu] = !callHwsim([&] { return pool().isFree(ipu); });
  std::vector<unsigned> busy;
  for (const hwsim::DeviceInfo &info : infos) {
    if (std::any_of(info.ipus.begin(), info.ipus.end(), [&](unsigned ipu) { return ipuBusy[ipu]; })) {
      busy.push_back(info.id);
    }
  }
  return fmt::format("system: {} of version {} ({}) as devices {}; busy: {}", ipusText(config.numIpus),
                     static_cast<unsigned>(config.ipuVersion), infos.front().target.name,
                     fmt::join(groups, ", "),
                     busy.empty() ? std::string("none") : fmt::format("{}", fmt::join(busy, ", ")));
}

// ------------------------------------------------------------ public calls

std::shared_ptr<Device> DeviceManager::getDevice(std::int64_t num_ipus, const DeviceOptions &device_options,
                                                 const DeviceWaitConfig &wait_config,
                                                 const DeviceConstraints &constraints) const {
  return acquire(requestFor(num_ipus, device_options, wait_config, constraints), true);
}

std::shared_ptr<Device> DeviceManager::tryGetDevice(std::int64_t num_ipus,
                                                    const DeviceOptions &device_options,
                                                    const DeviceWaitConfig &wait_config,
                                                    const DeviceConstraints &constraints) const {
  return acquire(requestFor(num_ipus, device_options, wait_config, constraints), false);
}

std::shared_ptr<Device> DeviceManager::getDevice(const std::shared_ptr<const popef::Model> &model,
                                                 const DeviceWaitConfig &wait_config) const {
  return acquire(requestFor(model, wait_config), true);
}

std::shared_ptr<Device> DeviceManager::tryGetDevice(const std::shared_ptr<const popef::Model> &model,
                                                    const DeviceWaitConfig &wait_config) const {
  return acquire(requestFor(model, wait_config), false);
}

std::shared_ptr<Device> DeviceManager::getSpecificDevice(std::int64_t device_id,
                                                         const DeviceOptions &device_options,
                                                         const DeviceWaitConfig &wait_config) const {
  return acquire(specificRequest(device_id, device_options, wait_config), true);
}

std::shared_ptr<Device> DeviceManager::tryGetSpecificDevice(std::int64_t device_id,
                                                            const DeviceOptions &device_options,
                                                            const DeviceWaitConfig &wait_config) const {
  return acquire(specificRequest(device_id, device_options, wait_config), false);
}

std::shared_ptr<Device> DeviceManager::getSpecificDevice(std::int64_t device_id,
                                                         const std::shared_ptr<const popef::Model> &model,
                                                         const DeviceWaitConfig &wait_config) const {
  return acquire(specificRequest(device_id, model, wait_config), true);
}

std::shared_ptr<Device> DeviceManager::tryGetSpecificDevice(std::int64_t device_id,
                                                            const std::shared_ptr<const popef::Model> &model,
                                                            const DeviceWaitConfig &wait_config) const {
  return acquire(specificRequest(device_id, model, wait_config), false);
}

std::shared_ptr<Device> DeviceManager::createIpuModelDevice(std::int64_t num_ipus, std::int64_t ipu_version,
                                                            std::int64_t tiles_per_ipu) const {
  return ipuModelDevice(ipuModelTarget(num_ipus, ipu_version, tiles_per_ipu));
}

std::shared_ptr<Device> DeviceManager::createIpuModelDevice(const std::shared_ptr<const popef::Model> &model,
                                                            std::int64_t tiles_per_ipu) const {
  requireModel(model);
  return createIpuModelDevice(static_cast<std::int64_t>(model->metadata.numIpus()),
                              model->metadata.ipuVersion(), tiles_per_ipu);
}

std::shared_ptr<Device> DeviceManager::createSmallIpuModelDevice(std::int64_t num_ipus,
                                                                 std::int64_t ipu_version) const {
  hwsim::Target target = ipuModelTarget(num_ipus, ipu_version, 0);
  const hwsim::Target small = hwsim::Target::smallIpuModel(target.numIpus);
  target.tilesPerIpu = small.tilesPerIpu;
  target.name = small.name;
  return ipuModelDevice(target);
}

std::shared_ptr<Device> DeviceManager::createSmallIpuModelDevice(
    const std::shared_ptr<const popef::Model> &model) const {
  requireModel(model);
  return createSmallIpuModelDevice(static_cast<std::int64_t>(model->metadata.numIpus()),
                                   model->metadata.ipuVersion());
}

}  // namespace mrt
