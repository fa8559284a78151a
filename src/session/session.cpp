#include "session/session.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

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
  std::uint64_t total = 0;
  const auto add = [&](std::uint64_t bytes) {
    if (__builtin_add_overflow(total, bytes, &total)) total = UINT64_MAX;
  };
  for (const std::uint64_t bytes : exe.memoryPerTile()) add(bytes);
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
  std::unique_ptr<QueueManager> queues;
  std::atomic<QueueManager *> queuesForStop{nullptr};  // read by stop() from any thread
  std::unique_ptr<hwsim::Engine> engine;
  // Input transfers prepared ahead (max_look_ahead); shared with the stream
  // callbacks, which may outlive a replaced binding inside the engine.
  std::shared_ptr<LookAhead> lookAhead;

  std::shared_ptr<Device> device;  // bound last; kept after unloadFromDevice() for reload()
  bool bound = false;              // bindToDevice/reload called and no unloadFromDevice since
  bool onDevice = false;           // the executable is loaded and this session is the device's active one
  bool loadRun = false;            // Load programs ran since the executable was loaded
  std::atomic<bool> loaded{false};   // what stop() may act on (read from any thread)
  std::atomic<bool> stopped{false};
  std::string failure;  // non-empty after a device error: reload() needed

  std::map<std::string, Binding, std::less<>> bindings;  // by handle, streams only
  // Remote-buffer anchor name -> the user's bytes that replace its TensorData.
  std::map<std::string, popef::SharedBytes> remoteData;
  // verified[i]: program i's anchors were all bound when last checked; cleared on rebinding.
  std::vector<char> verifiedPrograms;
  std::vector<const popef::Anchor *> inputs, userInputs, userOutputs;

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
    hostMemory = HostMemoryReservation(hostBytesOf(executable), fmt::format("session of model '{}'", name));
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
    if (metadata.replicationFactor() != 1) {
      throw Error(ErrorCode::InvalidArgument,
                  "model '{}' has replication factor {}: a Session runs models with replication factor 1 "
                  "(ModelRunner handles replication)",
                  name, metadata.replicationFactor());
    }
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
      bindings.emplace(anchor.handle(), Binding::None);
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

  void setBinding(const std::string &handle, Binding binding) {
    bindings[handle] = binding;
    std::fill(verifiedPrograms.begin(), verifiedPrograms.end(), 0);
  }

  // With `prefetch` (an input queue's), the stream's next transfer may be
  // prepared ahead as max_look_ahead allows.
  void connect(const popef::Anchor &anchor, CallbackHandle callback, StreamPrefetchFn prefetch = nullptr) {
    const Binding binding = callback ? Binding::User : Binding::Empty;
    if (!callback) callback = [](void *) {};
    callHwsim([&] {
      if (prefetch) {
        engine->connectStreamToCallback(anchor.handle(), 0,
                                        prefetchingCallback(std::move(callback), std::move(prefetch), lookAhead));
      } else {
        engine->connectStreamToCallback(anchor.handle(), std::move(callback));
      }
    });
    setBinding(anchor.handle(), binding);
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
      if (skipConnected && bindings.at(anchor.handle()) != Binding::None) continue;
      CallbackHandle callback = factory(CallbackInfo{anchor});
      if (callback) connect(anchor, std::move(callback));
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

  ProgramsAndAnchorsMap notConnected(const std::vector<ProgIdxType> &progs) const {
    requireKnownPrograms(progs);
    ProgramsAndAnchorsMap result;
    for (const ProgIdxType index : progs) {
      for (const popef::Anchor &anchor : model->metadata.anchors()) {
        if (anchor.useRemoteBuffers() || bindings.at(anchor.handle()) != Binding::None) continue;
        if (std::find(anchor.programs().begin(), anchor.programs().end(), index) == anchor.programs().end()) continue;
        result[index].push_back(&anchor);
      }
    }
    return result;
  }

  void errorIfNotConnected(const std::vector<ProgIdxType> &progs) const {
    const ProgramsAndAnchorsMap missing = notConnected(progs);
    if (missing.empty()) return;
    std::string list;
    for (const auto &[index, anchors] : missing) {
      std::vector<std::string> names;
      for (const popef::Anchor *anchor : anchors) names.push_back(fmt::format("'{}'", anchor->handle()));
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
    if (!failure.empty()) {
      throw Error(ErrorCode::FailedPrecondition, "session '{}': cannot {} after a device error ({}): call reload()",
                  name, what, failure);
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
    loadRun = false;
    failure.clear();
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
    for (std::uint64_t slot = 0; slot < slots; ++slot) {
      engine->copyToRemoteBuffer(data + slot * slotBytes, anchor.remoteBuffer()->name, slot);
    }
  }

  // Another session takes the device: keep the state (Save) and let go.
  void onDisplaced() {
    if (onDevice && loadRun && failure.empty() && !stopped.load()) runPhase(model->metadata.programFlow().save(), "Save");
    leaveDevice();
  }

  void leaveDevice() {
    onDevice = false;
    loadRun = false;
    loaded.store(false);
  }

  void unbind() {
    if (onDevice && device->isActiveSession(this)) {
      if (loadRun && failure.empty() && !stopped.load()) runPhase(model->metadata.programFlow().save(), "Save");
      device->unbindSession(this);
    }
    leaveDevice();
    bound = false;
  }

  // ---- running ----

  void runPhase(const std::vector<ProgIdxType> &progs, const char *phase) {
    verifyConnected(progs);
    for (const ProgIdxType index : progs) runOne(index, phase);
  }

  // Checked once per program until a binding changes, so Main stays cheap.
  void verifyConnected(const std::vector<ProgIdxType> &progs) {
    for (const ProgIdxType index : progs) {
      if (index < verifiedPrograms.size() && verifiedPrograms[index]) continue;
      errorIfNotConnected({index});
      if (index >= verifiedPrograms.size()) verifiedPrograms.resize(index + 1, 0);
      verifiedPrograms[index] = 1;
    }
  }

  void runOne(ProgIdxType index, const char *phase) {
    runGuarded(index, phase, [&] { return engine->run(static_cast<unsigned>(index)); });
  }

  // Runs `run` (an engine run of program `index`), turning what it reports
  // into the session's errors.
  template <typename Run>
  void runGuarded(ProgIdxType index, const char *phase, Run &&run) {
    hwsim::RunStatus status;
    try {
      status = run();
    } catch (const hwsim::RuntimeError &error) {
      failure = fmt::format("{} (recovery action {})", error.what(), hwsim::toString(error.recoveryAction()));
      throw Error(ErrorCode::DeviceError, "session '{}': {} program {}: device error: {}; call reload()", name,
                  phase, index, failure)
          .withRecoveryAction(recoveryActionOf(error.recoveryAction()));
    } catch (const hwsim::Error &error) {
      throw Error(errorCodeOf(error.kind()), "session '{}': {} program {}: {}", name, phase, index, error.what());
    }
    if (status == hwsim::RunStatus::Stopped) {
      stopped.store(true);
      throw Error(ErrorCode::Cancelled, "session '{}': {} program {} was stopped by stop(); call reload()", name,
                  phase, index);
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
  if (im.queues) im.queues->resetAll();  // no run is in progress: the queues are idle
  im.bound = true;
  try {
    im.activate();
  } catch (...) {
    im.bound = false;
    throw;
  }
}

void Session::runLoadPrograms() {
  Impl &im = *impl_;
  im.prepareRun("run Load programs");
  im.runPhase(im.model->metadata.programFlow().load(), "Load");
  im.loadRun = true;
}

void Session::runMainPrograms() {
  Impl &im = *impl_;
  im.prepareRun("run Main programs");
  if (!im.loadRun) runLoadPrograms();
  im.runPhase(im.model->metadata.programFlow().main(), "Main");
}

bool Session::mainIsPipelined() const {
  const Impl &im = *impl_;
  const auto &main = im.model->metadata.programFlow().main();
  return main.size() == 1 && im.engine->pipelinePlanOf(static_cast<unsigned>(main[0])).pipelined();
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
  if (!im.loadRun) runLoadPrograms();
  im.verifyConnected(main);
  const ProgIdxType index = main[0];
  im.runGuarded(index, "Main", [&] { return im.engine->runPipelined(static_cast<unsigned>(index), 0, start_new); });
}

bool Session::mainPipelineBusy() const {
  const Impl &im = *impl_;
  return im.loaded.load() && im.engine->pipelineRunsInFlight() > 0;
}

void Session::runSavePrograms() {
  Impl &im = *impl_;
  im.prepareRun("run Save programs");
  im.runPhase(im.model->metadata.programFlow().save(), "Save");
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
  if (QueueManager *queues = im.queuesForStop.load()) queues->disconnectAll();
}

std::unique_ptr<QueueManager> Session::releaseQueueManager() {
  Impl &im = *impl_;
  if (!im.queues) return nullptr;
  // None of the manager's callbacks may stay on the engine.
  for (const QueueManager::AnchorStream &stream : im.queues->streams()) {
    im.connect(im.streamAnchor(stream.handle), {});
  }
  im.queuesForStop.store(nullptr);
  return std::move(im.queues);
}

QueueManager *Session::adoptQueueManager(std::unique_ptr<QueueManager> manager) {
  Impl &im = *impl_;
  releaseQueueManager();  // the old manager, if any, goes
  for (const QueueManager::AnchorStream &stream : manager->streams()) {
    im.connect(im.streamAnchor(stream.handle), stream.callback, stream.prefetch);
  }
  im.queuesForStop.store(manager.get());
  im.queues = std::move(manager);
  return im.queues.get();
}

hwsim::Engine &Session::engine() { return *impl_->engine; }

std::string Session::deviceFailure() const { return impl_->failure; }

bool Session::isStopped() const { return impl_->stopped.load(); }

std::uint64_t Session::preparedAhead() const { return impl_->lookAhead->preparedAhead(); }
std::uint64_t Session::totalPreparedAhead() const { return impl_->lookAhead->totalPrepared(); }

std::vector<const popef::Anchor *> Session::getInputAnchors() const { return impl_->inputs; }
std::vector<const popef::Anchor *> Session::getUserInputAnchors() const { return impl_->userInputs; }
std::vector<const popef::Anchor *> Session::getUserOutputAnchors() const { return impl_->userOutputs; }

}  // namespace mrt
