// Engine: construction, loading, host access, stream connections, simulated
// error bookkeeping. Execution itself is in interpreter.cpp.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "codelets/registry.hpp"
#include "cost_model.hpp"
#include "engine_impl.hpp"
#include "fail.hpp"
#include "host_threads.hpp"
#include "io_tiles.hpp"

namespace hwsim {

using detail::fail;

namespace {
// A scan, not o.find(key): OptionFlags's comparator is not transparent, so
// find() would make a std::string of the key, a heap block for most keys
// (ten per engine made). Engines have a few options.
bool flag(const OptionFlags &o, std::string_view key, bool dflt) {
  for (const auto &[name, value] : o) {
    if (name == key) return value == "true";
  }
  return dflt;
}

// Options: compile-time ones first, then the engine's, then the environment.
OptionFlags engineOptions(const detail::ExecutableData &d, const OptionFlags &given) {
  OptionFlags merged = d.options;
  for (const auto &[k, v] : given) merged[k] = v;
  return resolveEngineOptions(merged);
}

detail::PlanSettings planSettings(const OptionFlags &options) {
  return {detail::hostThreads(options), flag(options, "host.elementwiseRuns", true),
          flag(options, "host.planarOperands", true), flag(options, "host.matMulRows", true)};
}
}  // namespace

Engine::Impl::Impl(const Executable &executable, const OptionFlags &opts)
    : exe(executable),
      d(&executable.data()),
      options(engineOptions(*d, opts)),
      enginePlan(detail::EnginePlan::of(*d, planSettings(options))),
      varOffsets(enginePlan->varOffsets),
      arenaBytes(enginePlan->arenaBytes),
      views(enginePlan->views),
      csChunks(enginePlan->csChunks),
      csRuns(enginePlan->csRuns),
      csVertices(enginePlan->csVertices),
      copyChunks(enginePlan->copyChunks),
      mirrors(enginePlan->mirrors),
      matMulRows(enginePlan->matMulRows),
      csGates(std::make_unique<detail::ParallelGate[]>(d->computeSets.size())) {
  prefetch = flag(options, "exchange.enablePrefetch", true);
  planIOTiles();
  const bool all = flag(options, "autoReport.all", false);
  autoExecutionProfile = flag(options, "autoReport.outputExecutionProfile", all);
  autoGraphProfile = flag(options, "autoReport.outputGraphProfile", all);
  const bool instrument = flag(options, "debug.instrument", autoExecutionProfile);
  profiling = flag(options, "debug.instrumentCompute", instrument) || flag(options, "debug.instrumentExternalExchange", instrument) ||
              flag(options, "debug.instrumentControlFlow", instrument);
  everProfiled = profiling;
  streamAtEachRun = flag(options, "autoReport.streamAtEachRun", true);
  if (auto it = options.find("autoReport.executionProfileProgramRunCount"); it != options.end()) {
    profileRunLimit = static_cast<std::uint32_t>(std::stoul(it->second));
  }
  if (auto it = options.find("autoReport.directory"); it != options.end()) reportDir = it->second;

  for (std::uint32_t i = 0; i < d->streams.size(); ++i) streamIndex.emplace(d->streams[i].handle, i);
  for (std::uint32_t i = 0; i < d->hostCopies.size(); ++i) hostCopyIndex.emplace(d->hostCopies[i].handle, i);
  for (std::uint32_t i = 0; i < d->remoteBuffers.size(); ++i) remoteIndex.emplace(d->remoteBuffers[i].handle, i);
  nodeHasError.assign(d->nodes.size(), 0);
  for (unsigned r = 0; r < d->replicationFactor; ++r) {
    auto rep = std::make_unique<Replica>();
    rep->streams.resize(d->streams.size());
    rep->profiledRuns.assign(d->programs.size(), 0);
    replicas.push_back(std::move(rep));
  }
}

void Engine::Impl::planIOTiles() {
  ioTiles = detail::numIOTiles(options);
  if (ioTiles == 0) return;
  // Given to the engine rather than the compiler, the option still must not
  // put vertices on the tiles it takes.
  try {
    detail::checkIOTiles(*d, ioTiles, ErrorKind::InvalidArgument);
  } catch (const Error &e) {
    throw InvalidOption(detail::kNumIOTilesOption, e.what());
  }
  ioExchangeCycles.assign(d->nodes.size(), 0);
  for (std::size_t i = 0; i < d->nodes.size(); ++i) {
    const auto &n = d->nodes[i];
    if (n.kind == detail::NodeKind::StreamToTensor) ioExchangeCycles[i] = detail::ioToComputeCycles(*d, d->views[n.view1], ioTiles);
  }
}

void Engine::Impl::deploy() {
  for (auto &rep : replicas) {
    // Zeroed memory at every load (a reload after a device error starts
    // from zeros too): fresh zero pages, or a destroyed arena zeroed where
    // it was written, not a memset of the whole arena: see ZeroedArena.
    rep->memory = detail::ZeroedArena(arenaBytes);
    for (std::size_t i = 0; i < d->variables.size(); ++i) {
      const auto &v = d->variables[i];
      if (v.isConstant && !v.constantData.empty()) std::memcpy(rep->memory.data() + varOffsets[i], v.constantData.data(), v.constantData.size());
    }
    rep->remote.clear();
    for (const auto &rb : d->remoteBuffers) rep->remote.emplace_back(rb.slotBytes() * rb.repeats, 0);
    resetMirrors(*rep);
    rep->joinedBs.reset();
    if (!matMulRows.joinedBs.empty()) rep->joinedBs = std::make_unique<Replica::JoinedB[]>(matMulRows.joinedBs.size());
    rep->cycles.store(0, std::memory_order_relaxed);
    rep->pipeline.reset();  // runs in flight are lost with the state they had
    for (auto &s : rep->streams) {
      if (s.prefetched && s.callback) s.callback->invalidatePrefetched();
      s.prefetched = false;
      s.cursor = s.begin;
    }
  }
  stopRequested.store(false);
  state = State::Loaded;
  if (autoGraphProfile) writeGraphProfile();
}

unsigned Engine::Impl::checkReplica(unsigned replica) const {
  if (replica >= replicas.size()) fail(ErrorKind::InvalidArgument, "replica {} out of range (replication factor {})", replica, replicas.size());
  return replica;
}

Engine::Impl::StreamConn &Engine::Impl::connection(std::string_view handle, unsigned replica) {
  auto it = streamIndex.find(std::string(handle));
  if (it == streamIndex.end()) fail(ErrorKind::NotFound, "no stream '{}'", handle);
  return replicas[checkReplica(replica)]->streams[it->second];
}

// ------------------------------------------------------------------ Engine

Engine::Engine(const Executable &exe, const OptionFlags &options) {
  if (!exe.valid()) fail(ErrorKind::InvalidArgument, "Engine needs a compiled executable");
  impl_ = std::make_unique<Impl>(exe, options);
}

Engine::Engine(const Graph &graph, const std::vector<program::Program> &programs, const OptionFlags &options,
               const ProgressFunc &progress)
    : Engine(compileGraph(graph, programs, options, progress), options) {}

Engine::~Engine() {
  if (impl_) {
    try {
      impl_->writeAutoReports();
    } catch (...) {
      // A report that cannot be written must not turn destruction into a crash.
    }
  }
}
Engine::Engine(Engine &&) noexcept = default;
Engine &Engine::operator=(Engine &&) noexcept = default;

const Executable &Engine::getExecutable() const { return impl_->exe; }
void Engine::serializeExecutable(std::ostream &out) const { impl_->exe.serialize(out); }

void Engine::prepare(const Device &device) {
  if (!device.valid()) fail(ErrorKind::InvalidArgument, "prepare: empty device handle");
  if (!device.isAttached()) fail(ErrorKind::FailedPrecondition, "device {} is not attached", device.id());
  const auto pending = device.pendingRecovery();
  if (pending != RecoveryAction::None) {
    fail(ErrorKind::FailedPrecondition, "device {} needs {} after a device error: call Device::reset() first", device.id(), toString(pending));
  }
  const Target &want = impl_->d->target;
  const Target &have = device.getTarget();
  if (want.ipuVersion != have.ipuVersion || want.tilesPerIpu != have.tilesPerIpu || want.bytesPerTile != have.bytesPerTile) {
    fail(ErrorKind::FailedPrecondition, "executable for {} cannot run on device {} ({})", describe(want), device.id(), describe(have));
  }
  if (device.numIpus() != impl_->exe.numIpus()) {
    fail(ErrorKind::FailedPrecondition, "executable needs {} IPUs ({} per replica x {} replicas), device {} has {}",
         impl_->exe.numIpus(), want.numIpus, impl_->d->replicationFactor, device.id(), device.numIpus());
  }
  impl_->device = device.state();
  impl_->state = Impl::State::Prepared;
}

void Engine::deploy() {
  if (impl_->state == Impl::State::Constructed) fail(ErrorKind::FailedPrecondition, "deploy before prepare");
  const auto pending = static_cast<RecoveryAction>(impl_->device->pendingRecovery.load());
  if (pending != RecoveryAction::None) {
    fail(ErrorKind::FailedPrecondition, "device {} needs {} after a device error: call Device::reset() first", impl_->device->info.id, toString(pending));
  }
  impl_->deploy();
}

void Engine::load(const Device &device) {
  prepare(device);
  deploy();
}

RunStatus Engine::loadAndRun(const Device &device, unsigned program) {
  load(device);
  return run(program);
}

RunStatus Engine::run(unsigned program, std::string_view) {
  auto &im = *impl_;
  const unsigned n = static_cast<unsigned>(im.replicas.size());
  for (unsigned r = 0; r < n; ++r) {
    if (const RunStatus s = im.flushPipeline(r); s != RunStatus::Completed) return s;
  }
  // Reports are written once every replica has finished (they read all replicas' profiles).
  struct AutoReport {
    Impl &im;
    ~AutoReport() {
      if (im.autoExecutionProfile && im.streamAtEachRun) {
        try {
          im.writeAutoReports();
        } catch (...) {
          // Reporting must not replace the run's own outcome.
        }
      }
    }
  } report{im};
  if (n == 1) return im.runOne(program, 0);
  std::vector<std::exception_ptr> errors(n);
  std::vector<RunStatus> status(n, RunStatus::Completed);
  auto body = [&](unsigned r) {
    try {
      status[r] = im.runOne(program, r);
    } catch (...) {
      errors[r] = std::current_exception();
      im.stopRequested.store(true);  // let the other replicas end where they next look at it
    }
  };
  std::vector<std::thread> helpers;
  for (unsigned r = 1; r < n; ++r) helpers.emplace_back(body, r);
  body(0);
  for (auto &t : helpers) t.join();
  // Prefer reporting a device error over the stops it caused.
  for (unsigned r = 0; r < n; ++r) {
    if (errors[r]) {
      try {
        std::rethrow_exception(errors[r]);
      } catch (const RuntimeError &) {
        throw;
      } catch (...) {
      }
    }
  }
  for (auto &e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (auto s : status) {
    if (s == RunStatus::Stopped) return RunStatus::Stopped;
  }
  return RunStatus::Completed;
}

RunStatus Engine::runReplica(unsigned program, unsigned replica) {
  if (impl_->replicas.size() == 1) return run(program);
  if (const RunStatus s = impl_->flushPipeline(impl_->checkReplica(replica)); s != RunStatus::Completed) return s;
  return impl_->runOne(program, replica);
}

void Engine::stop() { impl_->stopRequested.store(true, std::memory_order_release); }

// ---- streams ----

void Engine::connectStream(std::string_view handle, void *begin, void *end, unsigned replica) {
  auto it = impl_->streamIndex.find(std::string(handle));
  if (it == impl_->streamIndex.end()) fail(ErrorKind::NotFound, "no stream '{}'", handle);
  const std::uint64_t bytes = impl_->d->streams[it->second].numBytes();
  auto *b = static_cast<std::uint8_t *>(begin), *e = static_cast<std::uint8_t *>(end);
  if (b == nullptr || e < b || static_cast<std::uint64_t>(e - b) < bytes) {
    fail(ErrorKind::InvalidArgument, "stream '{}': circular buffer of {} bytes is smaller than one transfer ({} bytes)", handle, e - b, bytes);
  }
  for (unsigned r = 0; r < impl_->replicas.size(); ++r) {
    if (replica != kAllReplicas && r != impl_->checkReplica(replica)) continue;
    auto &c = impl_->connection(handle, r);
    c = {};
    c.kind = Impl::StreamConn::Kind::Circular;
    c.begin = c.cursor = b;
    c.end = e;
  }
}

void Engine::connectStream(std::string_view handle, void *p, unsigned replica) {
  if (p == nullptr) fail(ErrorKind::InvalidArgument, "stream '{}': null buffer", handle);
  for (unsigned r = 0; r < impl_->replicas.size(); ++r) {
    if (replica != kAllReplicas && r != impl_->checkReplica(replica)) continue;
    auto &c = impl_->connection(handle, r);
    c = {};
    c.kind = Impl::StreamConn::Kind::Fixed;
    c.begin = c.cursor = static_cast<std::uint8_t *>(p);
  }
}

namespace {
class FunctionCallback final : public StreamCallback {
 public:
  explicit FunctionCallback(StreamCallbackFn f) : f_(std::move(f)) {}
  void fetch(void *p) override { f_(p); }

 private:
  StreamCallbackFn f_;
};
}  // namespace

void Engine::connectStreamToCallback(std::string_view handle, StreamCallbackFn f) {
  for (unsigned r = 0; r < impl_->replicas.size(); ++r) connectStreamToCallback(handle, r, f);
}

void Engine::connectStreamToCallback(std::string_view handle, unsigned replica, StreamCallbackFn f) {
  if (!f) fail(ErrorKind::InvalidArgument, "stream '{}': empty callback", handle);
  connectStreamToCallback(handle, replica, std::make_unique<FunctionCallback>(std::move(f)));
}

void Engine::connectStreamToCallback(std::string_view handle, unsigned replica, std::unique_ptr<StreamCallback> cb) {
  if (!cb) fail(ErrorKind::InvalidArgument, "stream '{}': null callback", handle);
  auto &c = impl_->connection(handle, replica);
  const auto &info = impl_->d->streams[impl_->streamIndex.at(std::string(handle))];
  c = {};
  c.kind = Impl::StreamConn::Kind::Callback;
  c.callback = std::move(cb);
  // Not zero-filled: prefetch writes it before anything reads it, and a big
  // one then costs nothing until the first prefetch touches it.
  if (info.direction == StreamDirection::HostToDevice) {
    c.prefetchBuffer = std::make_unique_for_overwrite<std::uint8_t[]>(info.numBytes());
  }
}

std::vector<std::string> Engine::listStreams() const {
  std::vector<std::string> out;
  for (const auto &s : impl_->d->streams) out.push_back(s.handle + (s.direction == StreamDirection::HostToDevice ? "+" : "-"));
  return out;
}

// ---- host access ----

void Engine::Impl::gather(const ResolvedView &v, const std::uint8_t *b, std::uint8_t *out) const {
  if (v.contiguous) {
    if (v.bytes) std::memcpy(out, b + v.offset, v.bytes);
    return;
  }
  for (const auto &[off, len] : v.segments) {
    std::memcpy(out, b + off, len);
    out += len;
  }
}

void Engine::Impl::scatter(const ResolvedView &v, std::uint8_t *b, const std::uint8_t *in) const {
  if (v.contiguous) {
    if (v.bytes) std::memcpy(b + v.offset, in, v.bytes);
    return;
  }
  for (const auto &[off, len] : v.segments) {
    std::memcpy(b + off, in, len);
    in += len;
  }
}

namespace {
const detail::ExeHostCopy &hostCopy(const Engine::Impl &im, std::string_view handle, bool isRead) {
  auto it = im.hostCopyIndex.find(std::string(handle));
  if (it == im.hostCopyIndex.end() || im.d->hostCopies[it->second].isRead != isRead) {
    fail(ErrorKind::NotFound, "no host {} handle '{}'", isRead ? "read" : "write", handle);
  }
  return im.d->hostCopies[it->second];
}
void requireLoaded(const Engine::Impl &im, const char *what) {
  if (im.state != Engine::Impl::State::Loaded && im.state != Engine::Impl::State::Faulted) {
    fail(ErrorKind::FailedPrecondition, "{}: the engine is not loaded on a device", what);
  }
}
}  // namespace

void Engine::readTensor(std::string_view handle, void *buf, void *bufEnd, unsigned replica) const {
  requireLoaded(*impl_, "readTensor");
  const auto &hc = hostCopy(*impl_, handle, true);
  const auto &v = impl_->views[hc.view];
  const auto have = static_cast<std::uint64_t>(static_cast<std::uint8_t *>(bufEnd) - static_cast<std::uint8_t *>(buf));
  if (buf == nullptr || bufEnd < buf || have != v.bytes) fail(ErrorKind::InvalidArgument, "readTensor '{}': expected {} bytes, got {}", handle, v.bytes, have);
  impl_->gather(v, impl_->base(impl_->checkReplica(replica)), static_cast<std::uint8_t *>(buf));
}

void Engine::writeTensor(std::string_view handle, const void *buf, const void *bufEnd, unsigned replica) {
  requireLoaded(*impl_, "writeTensor");
  const auto &hc = hostCopy(*impl_, handle, false);
  const auto &v = impl_->views[hc.view];
  const auto have = static_cast<std::uint64_t>(static_cast<const std::uint8_t *>(bufEnd) - static_cast<const std::uint8_t *>(buf));
  if (buf == nullptr || bufEnd < buf || have != v.bytes) fail(ErrorKind::InvalidArgument, "writeTensor '{}': expected {} bytes, got {}", handle, v.bytes, have);
  for (unsigned r = 0; r < impl_->replicas.size(); ++r) {
    if (replica != kAllReplicas && r != impl_->checkReplica(replica)) continue;
    impl_->beforeHostWrite(r);
    impl_->scatter(v, impl_->base(r), static_cast<const std::uint8_t *>(buf));
  }
}

namespace {
std::uint8_t *remoteSlot(Engine::Impl &im, std::string_view handle, std::uint64_t slot, unsigned replica) {
  requireLoaded(im, "remote buffer copy");
  auto it = im.remoteIndex.find(std::string(handle));
  if (it == im.remoteIndex.end()) fail(ErrorKind::NotFound, "no remote buffer '{}'", handle);
  const auto &rb = im.d->remoteBuffers[it->second];
  if (slot >= rb.repeats) fail(ErrorKind::InvalidArgument, "remote buffer '{}': slot {} out of range ({} slots)", handle, slot, rb.repeats);
  return im.replicas[im.checkReplica(replica)]->remote[it->second].data() + slot * rb.slotBytes();
}
}  // namespace

void Engine::copyToRemoteBuffer(const void *data, std::string_view handle, std::uint64_t repeatIndex, unsigned replica) {
  auto *slot = remoteSlot(*impl_, handle, repeatIndex, replica);
  const auto bytes = impl_->d->remoteBuffers[impl_->remoteIndex.at(std::string(handle))].slotBytes();
  if (bytes) std::memcpy(slot, data, bytes);
}

void Engine::copyFromRemoteBuffer(std::string_view handle, void *data, std::uint64_t repeatIndex, unsigned replica) const {
  auto *slot = remoteSlot(*impl_, handle, repeatIndex, replica);
  const auto bytes = impl_->d->remoteBuffers[impl_->remoteIndex.at(std::string(handle))].slotBytes();
  if (bytes) std::memcpy(data, slot, bytes);
}

OptionFlags Engine::getEngineOptions() const { return impl_->options; }
void Engine::setPrintStream(std::ostream &stream) { impl_->printStream = &stream; }
void Engine::setPrintTensorStream(std::ostream &stream) { impl_->printTensorStream = &stream; }

// ---- simulated errors ----

void Engine::insertSimulatedError(DeviceErrorCode code, const ErrorLocation &location) {
  if (location.programStep >= impl_->d->nodes.size()) {
    fail(ErrorKind::InvalidArgument, "simulated error at program step {} of {}", location.programStep, impl_->d->nodes.size());
  }
  if (location.tile >= impl_->d->target.numTiles()) fail(ErrorKind::InvalidArgument, "simulated error on tile {} of {}", location.tile, impl_->d->target.numTiles());
  if (!impl_->simulatedErrors.emplace(location, code).second) {
    fail(ErrorKind::InvalidArgument, "a simulated error is already at step {} tile {}", location.programStep, location.tile);
  }
  impl_->nodeHasError[location.programStep] = 1;
  impl_->anySimulatedError = true;
}

void Engine::eraseSimulatedError(const ErrorLocation &location) {
  if (impl_->simulatedErrors.erase(location) == 0) {
    fail(ErrorKind::NotFound, "no simulated error at step {} tile {}", location.programStep, location.tile);
  }
  auto &im = *impl_;
  im.nodeHasError[location.programStep] = std::any_of(im.simulatedErrors.begin(), im.simulatedErrors.end(),
                                                      [&](const auto &e) { return e.first.programStep == location.programStep; });
  im.anySimulatedError = !im.simulatedErrors.empty();
}

void Engine::clearSimulatedErrors() {
  impl_->simulatedErrors.clear();
  std::fill(impl_->nodeHasError.begin(), impl_->nodeHasError.end(), 0);
  impl_->anySimulatedError = false;
}

namespace {
// Tiles a step runs on: vertex tiles for Execute, tiles of the data for copies, else tile 0.
std::vector<unsigned> tilesOfStep(const detail::ExecutableData &d, std::uint32_t id) {
  const auto &n = d.nodes[id];
  std::vector<bool> seen(d.target.numTiles(), false);
  auto addView = [&](std::uint32_t v) {
    if (v == detail::kNoView) return;
    detail::forEachTileRun(d, d.views[v], [&](std::uint64_t, std::uint64_t, std::uint32_t t) { seen[t] = true; });
  };
  switch (n.kind) {
    case detail::NodeKind::Execute:
      for (const auto &vx : d.computeSets[n.index].vertices) seen[vx.tile] = true;
      break;
    case detail::NodeKind::Sequence:
    case detail::NodeKind::Repeat:
    case detail::NodeKind::Call:
    case detail::NodeKind::Sync:
      seen[0] = true;
      break;
    default:
      addView(n.view0);
      addView(n.view1);
      break;
  }
  std::vector<unsigned> out;
  for (unsigned t = 0; t < seen.size(); ++t) {
    if (seen[t]) out.push_back(t);
  }
  if (out.empty()) out.push_back(0);
  return out;
}
}  // namespace

std::vector<ErrorLocation> Engine::getSimulatedErrorLocations(unsigned programStep, unsigned tile) const {
  if (programStep >= impl_->d->nodes.size()) fail(ErrorKind::InvalidArgument, "program step {} of {}", programStep, impl_->d->nodes.size());
  std::vector<ErrorLocation> out;
  for (unsigned t : tilesOfStep(*impl_->d, programStep)) {
    if (tile == ~0u || t == tile) out.push_back({programStep, t});
  }
  return out;
}

std::vector<ErrorLocation> Engine::getSimulatedErrorLocations(std::string_view name, unsigned tile) const {
  const auto &d = *impl_->d;
  const auto &lib = detail::codeletLibrary();
  std::vector<ErrorLocation> out;
  for (std::uint32_t id = 0; id < d.nodes.size(); ++id) {
    const auto &n = d.nodes[id];
    bool match = n.name == name;
    if (n.kind == detail::NodeKind::Execute) {
      for (const auto &vx : d.computeSets[n.index].vertices) {
        if (lib[vx.codelet].name == name && (tile == ~0u || vx.tile == tile)) {
          match = true;
          break;
        }
      }
    }
    if (!match) continue;
    for (unsigned t : tilesOfStep(d, id)) {
      if (tile == ~0u || t == tile) out.push_back({id, t});
    }
  }
  return out;
}

// ---- time ----

TimerTimePoint Engine::getTimeStamp() const {
  return {std::chrono::steady_clock::now(), deviceCycles(0), impl_->d->target.clockHz};
}

std::string Engine::reportTiming(const TimerTimePoint &start, const TimerTimePoint &end) {
  const double hostUs = std::chrono::duration<double, std::micro>(end.host - start.host).count();
  const std::uint64_t cycles = end.deviceCycles >= start.deviceCycles ? end.deviceCycles - start.deviceCycles : 0;
  return fmt::format("host {:.3f} us, device {} cycles ({:.3f} us at {:.2f} GHz)", hostUs, cycles,
                     static_cast<double>(cycles) / end.clockHz * 1e6, end.clockHz / 1e9);
}

std::uint64_t Engine::deviceCycles(unsigned replica) const {
  return impl_->replicas[impl_->checkReplica(replica)]->cycles.load(std::memory_order_relaxed);
}

void Engine::enableExecutionProfiling() {
  impl_->profiling = true;
  impl_->everProfiled = true;
}
void Engine::disableExecutionProfiling() { impl_->profiling = false; }
bool Engine::isExecutionProfilingEnabled() const { return impl_->profiling; }
void Engine::resetExecutionProfile() {
  for (auto &r : impl_->replicas) {
    r->events.clear();
    std::fill(r->profiledRuns.begin(), r->profiledRuns.end(), 0);
  }
}

}  // namespace hwsim
