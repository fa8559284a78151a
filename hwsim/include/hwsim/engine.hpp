// hwsim::Engine: loads an Executable on a Device and runs its programs, like
// poplar::Engine. Results are computed for real on the host; time is modelled
// in device cycles from the Target's rates.
//
// Threading:
//  - run()/runReplica() execute on the calling thread (vertices of a compute
//    set are spread over a small process-wide pool of host threads). Stream
//    callbacks are called on the thread running that replica, in program
//    order; calls for one replica never overlap.
//  - run() with replicationFactor R > 1 runs replica 0 on the caller and the
//    others on helper threads, and returns when all finished; alternatively
//    call runReplica(program, r) from one thread per replica (concurrently for
//    different replicas). Replicas share nothing but the executable.
//  - stop() may be called from any thread at any time; everything else must
//    not be called while a run is in progress.
//
// Lifecycle: construct -> load(device) (= prepare + deploy) -> run(...)*.
// load() zeroes all variables, writes constants, clears remote buffers, and
// may be called again at any time to start afresh (required after stop() or a
// device error).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hwsim/compiler.hpp"
#include "hwsim/device.hpp"
#include "hwsim/device_error.hpp"
#include "hwsim/executable.hpp"
#include "hwsim/options.hpp"
#include "hwsim/pipeline.hpp"

namespace hwsim {

// A stream callback object (Poplar's StreamCallback). For a host-to-device
// stream the engine asks for the bytes of each transfer; for device-to-host it
// hands over the bytes the device wrote. The pointer passed is valid only
// during the call and holds exactly StreamInfo::numBytes() bytes.
class StreamCallback {
 public:
  enum class Result { Success, NotAvailable };
  virtual ~StreamCallback() = default;
  // Host-to-device only, when the engine option exchange.enablePrefetch is
  // true (default): called right after a transfer completed, to fill p with
  // the NEXT transfer's data early. Return Success if p was filled (fetch is
  // then not called for that transfer) or NotAvailable.
  virtual Result prefetch(void *p) {
    (void)p;
    return Result::NotAvailable;
  }
  // H2D: write the transfer's bytes to p now. D2H: read the bytes at p now.
  virtual void fetch(void *p) = 0;
  // The transfer has finished (the device has consumed or produced the data).
  virtual void complete() {}
  // Data supplied by a successful prefetch will never be used (load/stop).
  virtual void invalidatePrefetched() {}
};

// The simple form: called as fetch(p); prefetch is never used.
using StreamCallbackFn = std::function<void(void *p)>;

enum class RunStatus : std::uint8_t {
  Completed = 0,
  Stopped = 1,  // stop() was called: the engine must be loaded again
};

// A record of host and device time (Engine::getTimeStamp).
struct TimerTimePoint {
  std::chrono::steady_clock::time_point host;
  std::uint64_t deviceCycles = 0;
  double clockHz = 1.0;
};

// Writes to/reads from every replica (writeTensor) when passed as replica.
inline constexpr unsigned kAllReplicas = ~0u;

class Engine {
 public:
  // Throws InvalidOption for bad options (after the MRT_ENGINE_OPTIONS override).
  explicit Engine(const Executable &exe, const OptionFlags &options = {});
  // Compiles first (see compileGraph for what it throws).
  Engine(const Graph &graph, const std::vector<program::Program> &programs, const OptionFlags &options = {},
         const ProgressFunc &progress = {});
  ~Engine();
  Engine(Engine &&) noexcept;
  Engine &operator=(Engine &&) noexcept;
  Engine(const Engine &) = delete;
  Engine &operator=(const Engine &) = delete;

  const Executable &getExecutable() const;
  void serializeExecutable(std::ostream &out) const;

  // ---- loading and running ----
  // The device must be attached, compatible (IPU version, tiles, memory) and
  // have exactly getExecutable().numIpus() IPUs, with no pending recovery.
  void prepare(const Device &device);
  void deploy();
  void load(const Device &device);
  // Runs program `program` on every replica. Returns Stopped if stop() was
  // called (see stop() for where the run ends). Throws RuntimeError on a
  // device error (simulated), FailedPrecondition if not loaded or if a stream
  // it uses is not connected, InvalidArgument for a bad program index.
  RunStatus run(unsigned program = 0, std::string_view debugName = {});
  RunStatus runReplica(unsigned program, unsigned replica);
  RunStatus loadAndRun(const Device &device, unsigned program = 0);
  // Streams runs of `program` through its pipeline stages (pipelinePlan(),
  // docs/hwsim.md "Pipelining"). Each call is one step of the pipeline: with
  // startNew a new run executes its first stage while each run started
  // before executes its next stage, the stages on host threads of their own
  // and their device cycles overlapping; then the transfers between the
  // stages. A run ends S - 1 calls after it started (S stages), or in
  // flushPipeline(). Stream callbacks of different stages run on different
  // threads, one at a time (they never overlap). Execution profiles do not
  // record pipelined runs. A program that is not a pipeline runs whole
  // (startNew) or not at all. Starting another program first flushes the
  // runs in flight, and so do run() and runReplica(); load() drops them.
  // Errors as run(); after an error or a stop the runs in flight are lost.
  RunStatus runPipelined(unsigned program, unsigned replica = 0, bool startNew = true);
  // Runs every run in flight on `replica` to its end.
  RunStatus flushPipeline(unsigned replica = 0);
  // Runs started with runPipelined() on `replica` that have not ended.
  unsigned pipelineRunsInFlight(unsigned replica = 0) const;
  // The pipeline plan of `program` (computed once per engine).
  const PipelinePlan &pipelinePlanOf(unsigned program);
  // Asks running programs to stop at their next host sync (stream copy,
  // remote-buffer copy, PrintTensor or global Sync), compute set (Execute) or
  // loop iteration (Repeat, RepeatWhileTrue/False), so that a program that
  // never syncs with the host stops too. Returns at once; no stream callback
  // is started after the stop is seen. Until the next load(), run() returns
  // Stopped immediately.
  void stop();

  // ---- streams ----
  // Connect before running; a connection persists across load().
  void connectStream(std::string_view handle, void *begin, void *end, unsigned replica = kAllReplicas);
  void connectStream(std::string_view handle, void *p, unsigned replica = kAllReplicas);
  void connectStreamToCallback(std::string_view handle, StreamCallbackFn f);  // every replica
  void connectStreamToCallback(std::string_view handle, unsigned replica, StreamCallbackFn f);
  void connectStreamToCallback(std::string_view handle, unsigned replica, std::unique_ptr<StreamCallback> cb);
  // "handle+" for host-to-device streams, "handle-" for device-to-host.
  std::vector<std::string> listStreams() const;

  // ---- host access to tensors and remote buffers ----
  // [buf, bufEnd) must be exactly the tensor's size in bytes.
  void readTensor(std::string_view handle, void *buf, void *bufEnd, unsigned replica = 0) const;
  void writeTensor(std::string_view handle, const void *buf, const void *bufEnd, unsigned replica = kAllReplicas);
  void copyToRemoteBuffer(const void *data, std::string_view handle, std::uint64_t repeatIndex, unsigned replica = 0);
  void copyFromRemoteBuffer(std::string_view handle, void *data, std::uint64_t repeatIndex, unsigned replica = 0) const;

  OptionFlags getEngineOptions() const;
  void setPrintStream(std::ostream &stream);
  void setPrintTensorStream(std::ostream &stream);

  // ---- simulated errors (call after load(), not during a run) ----
  void insertSimulatedError(DeviceErrorCode code, const ErrorLocation &location);
  void eraseSimulatedError(const ErrorLocation &location);  // throws NotFound
  void clearSimulatedErrors();
  // Locations of a program step (Executable::programSteps ids) on each tile it
  // runs on, or only on `tile`.
  std::vector<ErrorLocation> getSimulatedErrorLocations(unsigned programStep, unsigned tile = ~0u) const;
  // Locations of the steps executing vertices of codelet `name` (e.g. "MatMul"),
  // or named `name` (compute set, stream, or debug name).
  std::vector<ErrorLocation> getSimulatedErrorLocations(std::string_view name, unsigned tile = ~0u) const;

  // ---- time and profiling ----
  TimerTimePoint getTimeStamp() const;
  static std::string reportTiming(const TimerTimePoint &start, const TimerTimePoint &end);
  std::uint64_t deviceCycles(unsigned replica = 0) const;  // since load()
  void enableExecutionProfiling();
  void disableExecutionProfiling();
  void resetExecutionProfile();
  bool isExecutionProfilingEnabled() const;
  // Text summary: target, memory per tile, and cycles per program step.
  void printProfileSummary(std::ostream &out, const OptionFlags &options = {}) const;
  // CSV "begin,end,compute_tiles,exchange_tiles,sync_tiles" per profiled step
  // (cycles). Throws ProfilingDisabled if execution profiling was never on.
  void reportIntervals(std::ostream &out) const;
  // Chrome trace event JSON (load in ui.perfetto.dev or chrome://tracing).
  void writeTrace(std::ostream &out) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hwsim
