#include "session/session.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>

#include <fmt/format.h>
#include <hwsim/device_error.hpp>
#include <hwsim/engine.hpp>
#include <hwsim/executable.hpp>

#include "common/host_memory.hpp"
#include "common/logging.hpp"
#include "device/device_manager.hpp"
#include "device/hwsim_error.hpp"
#include "popef/executable_check.hpp"
#include "popef/package_hash.hpp"
#include "popef/reader.hpp"
#include "session/look_ahead.hpp"

namespace mrt {

namespace {

// How an anchor's stream is connected on the engine.
enum class Binding { None, PopefData, Empty, User };

std::shared_ptr<const popef::Model> requireModel(std::shared_ptr<const popef::Model> model) {
  if (!model) throw Error(ErrorCode::InvalidArgument, "Session: model must not be null");
  return model;
}

// What the engine allocates on the host for an executable: each replica's
// tile memory, remote buffers and a prefetch buffer per host-to-device stream.
// Saturates rather than wraps, so a huge claim stays huge and is refused.
std::uint64_t hostBytesOf(const hwsim::Executable &exe) {
  // hwsim refuses more than 2^30 bytes on a tile, so the sum over fewer than
  // 2^32 tiles cannot overflow: a plain sum, which the compiler vectorizes
  // (1472 tiles a chip; with an overflow check per tile this loop was 5% of
  // a small model's runner creation).
  const std::vector<std::uint64_t> &tiles = exe.memoryPerTile();
  std::uint64_t total = std::accumulate(tiles.begin(), tiles.end(), std::uint64_t{0});
  const auto add = [&](std::uint64_t bytes) {
    if (__builtin_add_overflow(total, bytes, &total)) total = UINT64_MAX;
  };
  // hwsim keeps all remote buffers within 2^36 bytes, so no product overflows.
  for (const hwsim::RemoteBufferInfo &buffer : exe.remoteBuffers()) add(buffer.slotBytes() * buffer.repeats);
  for (const hwsim::StreamInfo &stream : exe.streams()) {
    if (stream.direction == hwsim::StreamDirection::HostToDevice) add(stream.numBytes());
  }
  if (__builtin_mul_overflow(total, std::uint64_t{exe.replicationFactor()}, &total)) total = UINT64_MAX;
  return total;
}

}  // namespace

struct Session::Impl {
  std::shared_ptr<const popef::Model> model;
  SessionConfig config;
  std::string name;  // the executable's name, for messages
  hwsim::Executable executable;
  // The host memory the engine takes for the simulated device, held from
  // before the engine exists until after it is gone.
  HostMemoryReservation hostMemory;
  // Declared before the engine, whose stream callbacks refer to it, so the
  // engine is destroyed first.
  // One QueueManager per replica (queues[r] serves replica r).
  std::vector<std::unique_ptr<QueueManager>> queues;
  // queues[r].get() for stop(), which reads them from any thread.
  std::unique_ptr<std::atomic<QueueManager *>[]> queuesForStop;
  std::unique_ptr<hwsim::Engine> engine;
  // Input transfers prepared ahead (max_look_ahead); shared with the stream
  // callbacks, which may outlive a replaced binding inside the engine.
  std::shared_ptr<LookAhead> lookAhead;

  std::shared_ptr<Device> device;  // bound last; kept after unloadFromDevice() for reload()
  bool bound = false;              // bindToDevice/reload called and no unloadFromDevice since
  bool onDevice = false;           // the executable is loaded and this session is the device's active one
  // loadRun[r]: replica r's Load programs ran since the executable was
  // loaded; each element is written only by the thread running replica r.
  std::vector<std::uint8_t> loadRun;
  std::atomic<bool> loaded{false};   // what stop() may act on (read from any thread)
  std::atomic<bool> stopped{false};
  // After a device error until reload(): its message (failureMutex), and
  // whether there is one. Replicas running on their own threads
  // (runMainPrograms(replica)) set and read them concurrently.
  mutable std::mutex failureMutex;
  std::string failure;
  std::atomic<bool> failed{false};

  // By handle, streams only: the binding of each replica.
  std::map<std::string, std::vector<Binding>, std::less<>> bindings;
  // Remote-buffer anchor name -> the user's bytes that replace its TensorData.
  std::map<std::string, popef::SharedBytes> remoteData;
  // verifiedPrograms[r][i]: program i's anchors of replica r were all bound
  // when last checked; cleared on rebinding. Each replica's runs touch only
  // their own vector.
  std::vector<std::vector<char>> verifiedPrograms;
  std::vector<const popef::Anchor *> inputs, userInputs, userOutputs;
  unsigned replicas = 1;  // the executable's replication factor

  Impl(std::shared_ptr<const popef::Model> m, const SessionConfig &c)
      : model(requireModel(std::move(m))), config(c), name(model->metadata.executable()) {
    validate(config);
    popef::requireModelName(*model, config.model_name);
    verifyModel();
    if (config.executable.valid()) {
      executable = config.executable;
    } else {
      executable = popef::readExecutable(*model);
      popef::checkAgainstExecutable(*model, executable);
    }
    replicas = executable.replicationFactor();
    queues.resize(replicas);
    queuesForStop = std::make_unique<std::atomic<QueueManager *>[]>(replicas);
    loadRun.assign(replicas, 0);
    verifiedPrograms.resize(replicas);
    hostMemory =
        HostMemoryReservation(hostBytesOf(executable), [&] { return fmt::format("session of model '{}'", name); });
    engine = callHwsim([&] {
      return std::make_unique<hwsim::Engine>(executable, hwsim::OptionFlags(model->metadata.engineOptions().begin(),
                                                                            model->metadata.engineOptions().end()));
    });
    lookAhead = std::make_shared<LookAhead>(resolveLookAhead());
    bindPopefData();
  }

  // "unlimited" prepares ahead only where it overlaps compute: on an
  // executable with IO tiles (session_config.hpp).
  std::optional<std::uint64_t> resolveLookAhead() const {
    const std::optional<std::uint64_t> limit = lookAheadLimit(config);
    if (limit) return limit;
    const hwsim::OptionFlags options = engine->getEngineOptions();
    const auto ioTiles = options.find("exchange.numIOTiles");
    const bool overlaps = ioTiles != options.end() && ioTiles->second != "0";
    return overlaps ? std::nullopt : std::optional<std::uint64_t>(0);
  }

  ~Impl() {
    if (device) device->unbindSession(this);
  }

  // ---- creation ----

  void verifyModel() const {
    const popef::Metadata &metadata = model->metadata;
    if (config.check_package_hash && metadata.packageHash() != popef::runtimePackageHash()) {
      throw Error(ErrorCode::VersionMismatch,
                  "model '{}' was built for runtime package '{}', this runtime is '{}' "
                  "(set check_package_hash to false to skip this check)",
                  name, metadata.packageHash(), popef::runtimePackageHash());
    }
    for (const popef::Anchor &anchor : metadata.anchors()) {
      if (anchor.useRemoteBuffers() && model->findTensorData(anchor.name()) == nullptr) {
        throw Error(ErrorCode::InvalidArgument,
                    "model '{}': anchor '{}' lives in remote buffer '{}' but the model has no TensorData '{}' "
                    "to fill it",
                    name, anchor.name(), anchor.remoteBuffer()->name, anchor.name());
      }
    }
  }

  // Binds TensorData / FeedData to input anchors unless pred_tensor_data
  // says USE_USER_DATA, and sorts anchors into the getter lists.
  void bindPopefData() {
    for (const popef::Anchor &anchor : model->metadata.anchors()) {
      const bool input = anchor.type() == popef::TensorType::INPUT;
      if (input) inputs.push_back(&anchor);
      if (anchor.useRemoteBuffers()) continue;
      bindings.emplace(anchor.handle(), std::vector<Binding>(replicas, Binding::None));
      if (anchor.type() == popef::TensorType::OUTPUT) userOutputs.push_back(&anchor);
      if (!input) continue;
      const bool usePopef = !config.pred_tensor_data ||
                            config.pred_tensor_data(anchor) == PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY;
      if (usePopef && connectPopefData(anchor)) continue;
      userInputs.push_back(&anchor);
    }
  }

  // H2D streams only read from the memory they are connected to, so the
  // model's read-only (memory-mapped) bytes are used in place.
  bool connectPopefData(const popef::Anchor &anchor) {
    if (const popef::TensorData *data = model->findTensorData(anchor.name())) {
      auto *bytes = const_cast<std::byte *>(data->data());
      callHwsim([&] { engine->connectStream(anchor.handle(), bytes); });
    } else if (const popef::FeedData *feed = model->findFeedData(anchor.name())) {
      // A circular buffer over the feed: tensor i, i+1, ... wrapping around.
      auto *begin = const_cast<std::byte *>(feed->bytes().data());
      callHwsim([&] { engine->connectStream(anchor.handle(), begin, begin + feed->bytes().size()); });
    } else {
      return false;
    }
    setBinding(anchor.handle(), Binding::PopefData);
    return true;
  }

  // ---- bindings ----

  const popef::Anchor &streamAnchor(std::string_view handle) const {
    const popef::Anchor *anchor = model->metadata.findAnchorByHandle(handle);
    if (anchor == nullptr) {
      throw Error(ErrorCode::NotFound, "model '{}' has no anchor with handle '{}'", name, handle);
    }
    if (anchor->useRemoteBuffers()) {
      throw Error(ErrorCode::InvalidArgument,
                  "model '{}': anchor '{}' lives in remote buffer '{}', which the session fills itself; it "
                  "takes no callback",
                  name, handle, anchor->remoteBuffer()->name);
    }
    return *anchor;
  }

  unsigned checkReplica(unsigned replica) const {
    if (replica != kAllReplicas && replica >= replicas) {
      throw Error(ErrorCode::InvalidArgument, "session '{}': replica {} out of range: the model has {} replica{}", name,
                  replica, replicas, replicas == 1 ? "" : "s");
    }
    return replica;
  }

  // The replica argument that addresses replica r's streams: a model that is
  // not replicated has one replica, bound and checked as "every replica".
  unsigned streamReplica(unsigned r) const { return replicas == 1 ? kAllReplicas : r; }

  // Of `replica`, or of every replica for kAllReplicas.
  void setBinding(const std::string &handle, Binding binding, unsigned replica = kAllReplicas) {
    std::vector<Binding> &of = bindings[handle];
    if (replica == kAllReplicas) {
      std::fill(of.begin(), of.end(), binding);
    } else {
      of.at(replica) = binding;
    }
    for (auto &verified : verifiedPrograms) std::fill(verified.begin(), verified.end(), 0);
  }

  // True if the anchor has no binding on `replica` (on any replica, for kAllReplicas).
  bool unbound(const std::string &handle, unsigned replica) const {
    const std::vector<Binding> &of = bindings.at(handle);
    if (replica != kAllReplicas) return of[replica] == Binding::None;
    return std::find(of.begin(), of.end(), Binding::None) != of.end();
  }

  // A callback bound to every replica of a replicated model is called from
  // each replica's run (concurrently when they run together). With
  // `prefetch` (an input queue's, bound to one replica or to the only one),
  // the stream's next transfer may be prepared ahead as max_look_ahead allows.
  void connect(const popef::Anchor &anchor, CallbackHandle callback, unsigned replica = kAllReplicas,
               StreamPrefetchFn prefetch = nullptr) {
    const Binding binding = callback ? Binding::User : Binding::Empty;
    if (!callback) callback = [](void *) {};
    callHwsim([&] {
      if (prefetch) {
        engine->connectStreamToCallback(anchor.handle(), replica == kAllReplicas ? 0 : replica,
                                        prefetchingCallback(std::move(callback), std::move(prefetch), lookAhead));
      } else if (replica == kAllReplicas) {
        engine->connectStreamToCallback(anchor.handle(), std::move(callback));
      } else {
        engine->connectStreamToCallback(anchor.handle(), replica, std::move(callback));
      }
    });
    setBinding(anchor.handle(), binding, replica);
  }

  void setHandler(const CallbackFactory &factory, const AnchorCallbackPredicate &predicate, bool skipConnected,
                  popef::TensorType type) {
    if (!factory) throw Error(ErrorCode::InvalidArgument, "session '{}': the callback factory is empty", name);
    for (const popef::Anchor &anchor : model->metadata.anchors()) {
      if (anchor.type() != type || anchor.useRemoteBuffers()) continue;
      const AnchorCallbackPolicy policy = predicate ? predicate(anchor) : AnchorCallbackPolicy::BIND_USER_CB;
      if (policy == AnchorCallbackPolicy::SKIP_CB) continue;
      if (policy == AnchorCallbackPolicy::BIND_EMPTY_CB) {
        connect(anchor, {});
        continue;
      }
      // Replicated models: a callback per replica (CallbackInfo::replica).
      for (unsigned r = 0; r < replicas; ++r) {
        const unsigned replica = streamReplica(r);
        if (skipConnected && !unbound(anchor.handle(), replica)) continue;
        CallbackHandle callback = factory(CallbackInfo{anchor, r});
        if (callback) connect(anchor, std::move(callback), replica);
      }
    }
  }

  void requireKnownPrograms(const std::vector<ProgIdxType> &progs) const {
    const auto &programs = model->metadata.programFlow().programsMap();
    for (const ProgIdxType index : progs) {
      if (programs.find(index) == programs.end()) {
        throw Error(ErrorCode::NotFound, "model '{}' has no program {} (it has {} programs)", name, index,
                    programs.size());
      }
    }
  }

  // Unbound on `replica`, or on any replica for kAllReplicas.
  ProgramsAndAnchorsMap notConnected(const std::vector<ProgIdxType> &progs, unsigned replica = kAllReplicas) const {
    requireKnownPrograms(progs);
    ProgramsAndAnchorsMap result;
    for (const ProgIdxType index : progs) {
      for (const popef::Anchor &anchor : model->metadata.anchors()) {
        if (anchor.useRemoteBuffers() || !unbound(anchor.handle(), replica)) continue;
        if (std::find(anchor.programs().begin(), anchor.programs().end(), index) == anchor.programs().end()) continue;
        result[index].push_back(&anchor);
      }
    }
    return result;
  }

  // "'x'", or for a replicated model "'x' (replicas 1)": those without one.
  std::string describeUnbound(const popef::Anchor &anchor, unsigned replica) const {
    if (replicas == 1) return fmt::format("'{}'", anchor.handle());
    std::vector<unsigned> missing;
    for (unsigned r = 0; r < replicas; ++r) {
      if ((replica == kAllReplicas || replica == r) && unbound(anchor.handle(), r)) missing.push_back(r);
    }
    return fmt::format("'{}' (replica{} {})", anchor.handle(), missing.size() == 1 ? "" : "s", fmt::join(missing, ", "));
  }

  void errorIfNotConnected(const std::vector<ProgIdxType> &progs, unsigned replica = kAllReplicas) const {
    const ProgramsAndAnchorsMap missing = notConnected(progs, replica);
    if (missing.empty()) return;
    std::string list;
    for (const auto &[index, anchors] : missing) {
      std::vector<std::string> names;
      for (const popef::Anchor *anchor : anchors) names.push_back(describeUnbound(*anchor, replica));
      list += fmt::format("{}program {} ('{}'): {}", list.empty() ? "" : "; ", index,
                          model->metadata.programFlow().programsMap().at(index), fmt::join(names, ", "));
    }
    throw Error(ErrorCode::FailedPrecondition, "session '{}': anchors without a callback: {}", name, list);
  }

  // ---- device and executable ----

  void requireBound(const char *what) const {
    if (!bound) {
      throw Error(ErrorCode::FailedPrecondition, "session '{}': cannot {}: the session is not bound to a device{}",
                  name, what, device ? " (call reload() or bindToDevice())" : " (call bindToDevice())");
    }
  }

  void requireRunnable(const char *what) const {
    requireBound(what);
    if (failed.load()) {
      throw Error(ErrorCode::FailedPrecondition, "session '{}': cannot {} after a device error ({}): call reload()",
                  name, what, failureMessage());
    }
    if (stopped.load()) {
      throw Error(ErrorCode::FailedPrecondition, "session '{}': cannot {}: the session is stopped, call reload()",
                  name, what);
    }
  }

  // Makes this session the device's active one with its executable loaded.
  void activate() {
    // onDevice is cleared by onDisplaced() when another session takes the
    // device, so the slot's mutex stays off the hot path.
    if (onDevice) return;
    device->bindToSession(this, [this] { onDisplaced(); }, residency());
    try {
      loadExecutable();
    } catch (...) {
      device->unbindSession(this);
      throw;
    }
  }

  // The executable runs on exactly its IPUs: those of one replica times the
  // replication factor.
  void requireIpus(const Device &candidate) const {
    const auto need = static_cast<std::int64_t>(executable.numIpus());
    const std::int64_t have = candidate.numIpus();
    if (have == need) return;
    throw Error(ErrorCode::InvalidArgument,
                "session '{}': the model needs a device of {} IPU{} ({} IPU{} per replica x {} replica{}), device {} "
                "has {} IPU{}",
                name, need, need == 1 ? "" : "s", need / replicas, need / replicas == 1 ? "" : "s", replicas,
                replicas == 1 ? "" : "s", candidate.id(), have, have == 1 ? "" : "s");
  }

  // A fused model shares its device with the sessions of the models fused
  // with it (same executable, so the hash, and another model's tiles).
  Device::Residency residency() const {
    const std::string &shared = model->metadata.sharedExecutable();
    if (shared.empty()) return {};
    return {fmt::format("{}#{:016x}", shared, executable.hash()), name};
  }

  void loadExecutable() {
    hwsim::Device &hw = device->device();
    callHwsim([&] {
      if (hw.pendingRecovery() != hwsim::RecoveryAction::None) {
        log::logger().info("session '{}': resetting device {} ({}) before loading", name, device->id(),
                           hwsim::toString(hw.pendingRecovery()));
        hw.reset();
      }
      engine->load(hw);
      fillRemoteBuffers();
    });
    log::logger().info("session '{}': loaded onto device {}", name, device->id());
    onDevice = true;
    std::fill(loadRun.begin(), loadRun.end(), 0);
    setFailure({});
    stopped.store(false);
    loaded.store(true);
  }

  void fillRemoteBuffers() {
    for (const popef::Anchor &anchor : model->metadata.anchors()) {
      if (anchor.useRemoteBuffers()) fillRemoteBuffer(anchor);
    }
  }

  // From the user's bytes if given, else from the anchor's TensorData.
  void fillRemoteBuffer(const popef::Anchor &anchor) {
    const auto user = remoteData.find(anchor.name());
    const std::byte *data =
        user != remoteData.end() ? user->second.data() : model->tensorData(anchor.name()).data();
    const auto slots = static_cast<std::uint64_t>(std::max<std::int64_t>(1, anchor.remoteBuffer()->repeats));
    const auto slotBytes = static_cast<std::size_t>(anchor.tensorInfo().sizeInBytes()) / slots;
    for (unsigned replica = 0; replica < replicas; ++replica) {
      for (std::uint64_t slot = 0; slot < slots; ++slot) {
        engine->copyToRemoteBuffer(data + slot * slotBytes, anchor.remoteBuffer()->name, slot, replica);
      }
    }
  }

  std::string failureMessage() const {
    std::lock_guard lock(failureMutex);
    return failure;
  }

  void setFailure(std::string message) {
    std::lock_guard lock(failureMutex);
    failed.store(!message.empty());
    failure = std::move(message);
  }

  bool stateLoaded() const {
    return std::all_of(loadRun.begin(), loadRun.end(), [](std::uint8_t ran) { return ran != 0; });
  }

  // Save keeps the state when every replica's Load has run since loading
  // and no run failed or was stopped.
  bool stateToSave() const {
    return stateLoaded() && !failed.load() && !stopped.load();
  }

  // Another session takes the device: keep the state (Save) and let go.
  void onDisplaced() {
    if (onDevice && stateToSave()) runPhase(model->metadata.programFlow().save(), "Save");
    leaveDevice();
  }

  void leaveDevice() {
    onDevice = false;
    std::fill(loadRun.begin(), loadRun.end(), 0);
    loaded.store(false);
  }

  void unbind() {
    if (onDevice && device->isActiveSession(this)) {
      if (stateToSave()) runPhase(model->metadata.programFlow().save(), "Save");
      device->unbindSession(this);
    }
    leaveDevice();
    bound = false;
  }

  // ---- running ----

  // On every replica together, or on one (kAllReplicas or its index).
  void runPhase(const std::vector<ProgIdxType> &progs, const char *phase, unsigned replica = kAllReplicas) {
    verifyConnected(progs, replica);
    for (const ProgIdxType index : progs) runOne(index, phase, replica);
  }

  // Checked once per program until a binding changes, so Main stays cheap.
  void verifyConnected(const std::vector<ProgIdxType> &progs, unsigned replica) {
    const unsigned first = replica == kAllReplicas ? 0 : replica;
    const unsigned last = replica == kAllReplicas ? replicas : replica + 1;
    for (const ProgIdxType index : progs) {
      for (unsigned r = first; r < last; ++r) {
        std::vector<char> &verified = verifiedPrograms[r];
        if (index < verified.size() && verified[index]) continue;
        errorIfNotConnected({index}, streamReplica(r));
        if (index >= verified.size()) verified.resize(index + 1, 0);
        verified[index] = 1;
      }
    }
  }

  void runOne(ProgIdxType index, const char *phase, unsigned replica) {
    runGuarded(index, phase, replica, [&] {
      return replica == kAllReplicas ? engine->run(static_cast<unsigned>(index))
                                     : engine->runReplica(static_cast<unsigned>(index), replica);
    });
  }

  // Runs `run` (an engine run of program `index` on `replica`), turning
  // what it reports into the session's errors.
  template <typename Run>
  void runGuarded(ProgIdxType index, const char *phase, unsigned replica, Run &&run) {
    // For messages only: no allocation on the hot path.
    const auto where = [&] {
      return replica == kAllReplicas || replicas == 1 ? std::string() : fmt::format(" on replica {}", replica);
    };
    hwsim::RunStatus status;
    try {
      status = run();
    } catch (const hwsim::RuntimeError &error) {
      setFailure(fmt::format("{} (recovery action {})", error.what(), hwsim::toString(error.recoveryAction())));
      throw Error(ErrorCode::DeviceError, "session '{}': {} program {}{}: device error: {}; call reload()", name,
                  phase, index, where(), failureMessage())
          .withRecoveryAction(recoveryActionOf(error.recoveryAction()));
    } catch (const hwsim::Error &error) {
      throw Error(errorCodeOf(error.kind()), "session '{}': {} program {}{}: {}", name, phase, index, where(),
                  error.what());
    }
    if (status == hwsim::RunStatus::Stopped) {
      stopped.store(true);
      throw Error(ErrorCode::Cancelled, "session '{}': {} program {}{} was stopped by stop(); call reload()", name,
                  phase, index, where());
    }
  }

  void prepareRun(const char *what) {
    requireRunnable(what);
    activate();
  }
};

Session::Session(const std::vector<std::string> &popef_paths, const SessionConfig &config)
    : Session(std::shared_ptr<const popef::Model>(popef::loadModel(popef_paths, config.model_name)), config) {}

Session::Session(std::shared_ptr<const popef::Model> model, const SessionConfig &config)
    : impl_(std::make_unique<Impl>(std::move(model), config)) {
  if (impl_->config.policy == LaunchPolicy::Immediate) {
    bindToDevice(DeviceManager().getDevice(impl_->model, impl_->config.wait_config));
  }
}

Session::~Session() = default;
Session::Session(Session &&) noexcept = default;
Session &Session::operator=(Session &&) noexcept = default;

void Session::bindToDevice(std::shared_ptr<Device> device) {
  Impl &im = *impl_;
  if (!device) throw Error(ErrorCode::InvalidArgument, "session '{}': bindToDevice: device must not be null", im.name);
  im.requireIpus(*device);
  if (im.bound) im.unbind();
  im.device = std::move(device);
  im.bound = true;
  try {
    im.activate();
  } catch (...) {
    im.bound = false;
    throw;
  }
}

void Session::unloadFromDevice() {
  impl_->requireBound("unload from the device");
  impl_->unbind();
}

void Session::reload() {
  Impl &im = *impl_;
  if (!im.device) {
    throw Error(ErrorCode::FailedPrecondition,
                "session '{}': cannot reload: it was never bound to a device (call bindToDevice())", im.name);
  }
  // Whatever was on the device is discarded (stopped or failed runs leave it undefined).
  im.leaveDevice();
  for (auto &queues : im.queues) {
    if (queues) queues->resetAll();  // no run is in progress: the queues are idle
  }
  im.bound = true;
  try {
    im.activate();
  } catch (...) {
    im.bound = false;
    throw;
  }
}

void Session::runLoadPrograms() { runLoadPrograms(kAllReplicas); }

void Session::runLoadPrograms(unsigned replica) {
  Impl &im = *impl_;
  im.checkReplica(replica);
  im.prepareRun("run Load programs");
  im.runPhase(im.model->metadata.programFlow().load(), "Load", replica);
  if (replica == kAllReplicas) {
    std::fill(im.loadRun.begin(), im.loadRun.end(), 1);
  } else {
    im.loadRun[replica] = 1;
  }
}

void Session::runMainPrograms() { runMainPrograms(kAllReplicas); }

void Session::runMainPrograms(unsigned replica) {
  Impl &im = *impl_;
  im.checkReplica(replica);
  im.prepareRun("run Main programs");
  const bool loadRun = replica == kAllReplicas ? im.stateLoaded() : im.loadRun[replica] != 0;
  if (!loadRun) runLoadPrograms(replica);
  im.runPhase(im.model->metadata.programFlow().main(), "Main", replica);
}

unsigned Session::replicationFactor() const { return impl_->replicas; }

// hwsim pipelines one replica's runs; a replicated model's Main runs whole
// on every replica instead (runMainProgramsPipelined falls back to it).
bool Session::mainIsPipelined() const {
  const Impl &im = *impl_;
  const auto &main = im.model->metadata.programFlow().main();
  return im.replicas == 1 && main.size() == 1 &&
         im.engine->pipelinePlanOf(static_cast<unsigned>(main[0])).pipelined();
}

bool Session::mainCopiesEachStreamAtMostOnce() const {
  const Impl &im = *impl_;
  std::vector<unsigned> streams;
  for (const auto program : im.model->metadata.programFlow().main()) {
    const hwsim::ProgramTransfers &moved = im.engine->getExecutable().transfers(static_cast<unsigned>(program));
    if (!moved.eachStreamAtMostOnce) return false;
    streams.insert(streams.end(), moved.streams.begin(), moved.streams.end());
  }
  std::sort(streams.begin(), streams.end());
  return std::adjacent_find(streams.begin(), streams.end()) == streams.end();
}

void Session::runMainProgramsPipelined(bool start_new) {
  Impl &im = *impl_;
  const auto &main = im.model->metadata.programFlow().main();
  if (!mainIsPipelined()) {
    if (start_new) runMainPrograms();
    return;
  }
  if (!start_new && !mainPipelineBusy()) return;
  im.prepareRun("run Main programs");
  if (!im.stateLoaded()) runLoadPrograms();
  im.verifyConnected(main, kAllReplicas);
  const ProgIdxType index = main[0];
  im.runGuarded(index, "Main", kAllReplicas,
                [&] { return im.engine->runPipelined(static_cast<unsigned>(index), 0, start_new); });
}

bool Session::mainPipelineBusy() const {
  const Impl &im = *impl_;
  return im.loaded.load() && im.engine->pipelineRunsInFlight() > 0;
}

void Session::runSavePrograms() { runSavePrograms(kAllReplicas); }

void Session::runSavePrograms(unsigned replica) {
  Impl &im = *impl_;
  im.checkReplica(replica);
  im.prepareRun("run Save programs");
  im.runPhase(im.model->metadata.programFlow().save(), "Save", replica);
}

void Session::runPrograms(const std::vector<ProgIdxType> &progs) {
  Impl &im = *impl_;
  im.requireKnownPrograms(progs);
  im.prepareRun("run programs");
  im.runPhase(progs, "");
}

std::shared_ptr<const popef::Model> Session::model() const { return impl_->model; }
std::shared_ptr<Device> Session::device() const { return impl_->device; }

void Session::setCallbackForAnchor(const std::string &anchor_handle, CallbackHandle callback) {
  impl_->connect(impl_->streamAnchor(anchor_handle), std::move(callback));
}

void Session::setCallbackForAnchor(const std::string &anchor_handle, unsigned replica, CallbackHandle callback) {
  const popef::Anchor &anchor = impl_->streamAnchor(anchor_handle);
  impl_->connect(anchor, std::move(callback), impl_->streamReplica(impl_->checkReplica(replica)));
}

const popef::Anchor &Session::checkRemoteBufferData(const std::string &anchor_handle, const void *data,
                                                    std::uint64_t size) const {
  const popef::Anchor *anchor = impl_->model->metadata.findAnchorByHandle(anchor_handle);
  if (anchor == nullptr) {
    throw Error(ErrorCode::NotFound, "model '{}' has no anchor with handle '{}'", impl_->name, anchor_handle);
  }
  if (!anchor->useRemoteBuffers()) {
    throw Error(ErrorCode::InvalidArgument,
                "model '{}': anchor '{}' does not live in a remote buffer (bind a callback to its stream instead)",
                impl_->name, anchor_handle);
  }
  const auto expected = static_cast<std::uint64_t>(anchor->tensorInfo().sizeInBytes());
  if (size != expected || (expected > 0 && data == nullptr)) {
    throw Error(ErrorCode::InvalidArgument, "model '{}': remote buffer '{}' of anchor '{}' takes {} bytes ({}), got {}",
                impl_->name, anchor->remoteBuffer()->name, anchor_handle, expected, anchor->tensorInfo().toString(),
                size);
  }
  return *anchor;
}

void Session::setRemoteBufferData(const std::string &anchor_handle, popef::SharedBytes bytes) {
  const popef::Anchor &anchor = checkRemoteBufferData(anchor_handle, bytes.data(), bytes.size());
  impl_->remoteData[anchor.name()] = std::move(bytes);
  if (impl_->onDevice) callHwsim([&] { impl_->fillRemoteBuffer(anchor); });
}

void Session::setUserInputHandler(const CallbackFactory &factory, const AnchorCallbackPredicate &predicate,
                                  bool skip_connected) {
  impl_->setHandler(factory, predicate, skip_connected, popef::TensorType::INPUT);
}

void Session::setUserOutputHandler(const CallbackFactory &factory, const AnchorCallbackPredicate &predicate,
                                   bool skip_connected) {
  impl_->setHandler(factory, predicate, skip_connected, popef::TensorType::OUTPUT);
}

Session::ProgramsAndAnchorsMap Session::anchorsNotConnectedToCallbacks(const std::vector<ProgIdxType> &progs) const {
  return impl_->notConnected(progs);
}

void Session::errorIfAnchorsAreNotConnectedToCallbacks(const std::vector<ProgIdxType> &progs) const {
  impl_->errorIfNotConnected(progs);
}

void Session::stop() {
  Impl &im = *impl_;
  if (!im.loaded.load()) return;
  // The engine first: once isStopped() says true, the run in progress is
  // sure to end at its next host sync, compute set or loop iteration (a
  // callback that returns because it saw isStopped() must not let the run
  // complete).
  im.engine->stop();
  im.stopped.store(true);
  // Wakes stream callbacks blocked on empty queues, so the run reaches its host sync.
  for (unsigned r = 0; r < im.replicas; ++r) {
    if (QueueManager *queues = im.queuesForStop[r].load()) queues->disconnectAll();
  }
}

std::unique_ptr<QueueManager> Session::releaseQueueManager(unsigned replica) {
  Impl &im = *impl_;
  std::unique_ptr<QueueManager> &queues = im.queues.at(im.checkReplica(replica));
  if (!queues) return nullptr;
  // None of the manager's callbacks may stay on the engine.
  for (const QueueManager::AnchorStream &stream : queues->streams()) {
    im.connect(im.streamAnchor(stream.handle), {}, im.streamReplica(replica));
  }
  im.queuesForStop[replica].store(nullptr);
  return std::move(queues);
}

QueueManager *Session::adoptQueueManager(std::unique_ptr<QueueManager> manager, unsigned replica) {
  Impl &im = *impl_;
  if (replica == kAllReplicas) {
    if (im.replicas != 1) {
      throw Error(ErrorCode::InvalidArgument,
                  "session '{}': the model has {} replicas, each with its own queues: create them with "
                  "createQueueManagerForReplica(replica, ...)",
                  im.name, im.replicas);
    }
    replica = 0;
  }
  im.checkReplica(replica);
  releaseQueueManager(replica);  // the old manager, if any, goes
  for (const QueueManager::AnchorStream &stream : manager->streams()) {
    im.connect(im.streamAnchor(stream.handle), stream.callback, im.streamReplica(replica),
               stream.prefetch);
  }
  im.queuesForStop[replica].store(manager.get());
  im.queues[replica] = std::move(manager);
  return im.queues[replica].get();
}

hwsim::Engine &Session::engine() { return *impl_->engine; }

std::string Session::deviceFailure() const { return impl_->failureMessage(); }

bool Session::isStopped() const { return impl_->stopped.load(); }

std::uint64_t Session::preparedAhead() const { return impl_->lookAhead->preparedAhead(); }
std::uint64_t Session::totalPreparedAhead() const { return impl_->lookAhead->totalPrepared(); }

std::vector<const popef::Anchor *> Session::getInputAnchors() const { return impl_->inputs; }
std::vector<const popef::Anchor *> Session::getUserInputAnchors() const { return impl_->userInputs; }
std::vector<const popef::Anchor *> Session::getUserOutputAnchors() const { return impl_->userOutputs; }

}  // namespace mrt
