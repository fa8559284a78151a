// Engine::Impl: the loaded state of an engine and the program interpreter.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "copy_plan.hpp"
#include "device_state.hpp"
#include "elementwise_runs.hpp"
#include "engine_plan.hpp"
#include "exe_data.hpp"
#include "hwsim/engine.hpp"
#include "hwsim/pipeline.hpp"
#include "operand_mirrors.hpp"
#include "parallel_gate.hpp"
#include "vertex_operands.hpp"
#include "zeroed_arena.hpp"

namespace hwsim {

struct ProfileEvent {
  std::uint32_t node = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

struct Engine::Impl {
  using ResolvedView = detail::ResolvedView;

  struct StreamConn {
    enum class Kind : std::uint8_t { None, Callback, Circular, Fixed };
    Kind kind = Kind::None;
    std::unique_ptr<StreamCallback> callback;
    std::uint8_t *begin = nullptr, *end = nullptr, *cursor = nullptr;
    std::unique_ptr<std::uint8_t[]> prefetchBuffer;  // one transfer, host-to-device streams only
    bool prefetched = false;
    // With IO tiles: the modelled cycle at which the prefetched transfer has
    // landed on them (it travels while the other tiles compute).
    std::uint64_t prefetchReadyAt = 0;
    std::vector<std::uint8_t> staging;  // for views that are not contiguous
  };

  // Runs of a pipelined program in flight on one replica (pipeline_run.cpp).
  struct PipelineRuns {
    unsigned program = 0;
    std::vector<bool> holds;  // holds[k]: a run waits to execute stage k
    std::mutex callbacks;     // stream callbacks of one step of the pipeline never overlap
    bool inFlight() const;
  };

  // Set on a thread while it runs a pipeline stage or transfer: the stage's
  // own cycle count (stages run at once, so they do not add to the
  // replica's), and the lock its stream callbacks take.
  struct StageContext {
    std::uint64_t cycles = 0;
    std::mutex *callbacks = nullptr;
  };
  static inline thread_local StageContext *t_stage = nullptr;

  struct Replica {
    detail::ZeroedArena memory;
    std::vector<std::vector<std::uint8_t>> remote;
    std::vector<StreamConn> streams;
    std::atomic<std::uint64_t> cycles{0};  // written only by the thread running this replica
    std::vector<ProfileEvent> events;
    std::vector<std::uint32_t> profiledRuns;  // per program
    bool profileThisRun = false;
    std::unique_ptr<PipelineRuns> pipeline;  // made at the first pipelined run, dropped at load
    // Per operand mirror (operand_mirrors.hpp): whether its copies still
    // hold their sources' bytes. Atomic: pipelined stages on other threads
    // mark mirrors stale.
    std::unique_ptr<std::atomic<bool>[]> freshMirrors;
    // Per operand mirror: its copy is deferred and not made yet (only ever
    // set by runs on the replica's own thread, never inside pipelined stages).
    std::unique_ptr<std::uint8_t[]> pendingCopies;
    // Per joined MatMul b (matmul_rows.hpp): its blocks' bytes side by
    // side (the plan's JoinedB::shape, allocated at the first run that
    // needs them), the arena offsets they were read at and whether they
    // still hold those bytes (atomic, as freshMirrors).
    struct JoinedB {
      // 64-byte aligned: oneDNN's GEMM takes 1.28x the time with a b that
      // is not (20.3 against 25.9 us for 16 x 784 x 128 on an Ice Lake Xeon).
      struct FreeAligned {
        void operator()(float *p) const { ::operator delete[](p, std::align_val_t{64}); }
      };
      std::atomic<bool> fresh{false};
      std::vector<std::uint64_t> from;
      std::unique_ptr<float[], FreeAligned> data;
    };
    std::unique_ptr<JoinedB[]> joinedBs;
  };

  enum class State : std::uint8_t { Constructed, Prepared, Loaded, Faulted };

  Impl(const Executable &exe, const OptionFlags &options);
  // An engine's loaded state, for the hwsim tests that check a plan made at
  // engine creation (a nested class may read the engine's private members).
  static const Impl &of(const Engine &engine) { return *engine.impl_; }

  // ---- setup ----
  void planIOTiles();
  // Before the host writes: makes the pending copies, then marks every
  // mirror and every joined MatMul b stale.
  void beforeHostWrite(unsigned replica);
  // After a load: every mirror stale, nothing pending (the arena is new).
  void resetMirrors(Replica &rep);
  // Makes a deferred copy that is pending (operand_mirrors.hpp).
  void makePendingCopy(std::uint32_t mirror, unsigned replica);
  void makePendingCopies(unsigned replica);
  // Before a node runs: makes the pending copies it reads or writes, or
  // drops those it may (operand_mirrors.hpp).
  void settlePendingCopies(std::uint32_t node, unsigned replica);
  void makeCopiesReadBy(std::uint32_t node, unsigned replica);
  void deploy();
  std::uint8_t *base(unsigned replica) const { return replicas[replica]->memory.data(); }

  // ---- execution (interpreter.cpp) ----
  RunStatus runOne(unsigned program, unsigned replica);
  void checkRunnable(unsigned program) const;
  // Runs the steps in order; Stopped if stop() was seen.
  RunStatus runSteps(const std::vector<unsigned> &steps, unsigned replica);
  void addCycles(Replica &rep, std::uint64_t cycles);
  // The replica's modelled "now" on the calling thread: its clock, plus
  // inside a pipeline stage what the stage has run so far (the stages of a
  // pipeline step all start at the replica's clock). Host transfers and
  // prefetches are timed against it, so they land where addCycles puts them.
  static std::uint64_t now(const Replica &rep);
  // Held while a pipeline stage's thread calls a stream callback; empty otherwise.
  static std::unique_lock<std::mutex> callbackLock();

  // ---- pipelined runs (pipeline_run.cpp) ----
  const PipelinePlan &planFor(unsigned program);
  RunStatus pipelineStep(unsigned program, unsigned replica, bool startNew);
  RunStatus flushPipeline(unsigned replica);
  void exec(std::uint32_t node, unsigned replica);
  void executeComputeSet(std::uint32_t cs, unsigned replica);
  // MatMul rows (matmul_rows.hpp, matmul_rows_run.cpp); fresh: the
  // replica's mirror flags. Joins the row's b blocks unless the joined b
  // already holds the bytes the row reads; on the replica's own thread,
  // before the compute set's vertices run.
  void joinB(const detail::MatMulRow &row, const detail::PreparedVertices &prepared, std::uint8_t *base,
             const std::atomic<bool> *fresh, Replica &rep) const;
  // Runs the row (or only its part, if not null) as one GEMM; false
  // (nothing run) when its vertices do not read one a, or its b is not
  // joined as they read it.
  bool runMatMulRow(const detail::MatMulRow &row, const detail::MatMulRowPart *part,
                    const detail::PreparedVertices &prepared, std::uint8_t *base, const std::atomic<bool> *fresh,
                    Replica &rep) const;
  void copyView(std::uint32_t node, unsigned replica);
  // Returns the step's modelled cycles (less than its static cost when the
  // transfer was prefetched onto IO tiles).
  std::uint64_t streamToTensor(const detail::ExeNode &n, unsigned replica);
  std::uint64_t prefetchedCost(const StreamConn &conn, std::uint32_t node, unsigned replica) const;
  // Counts its own cycles before the host hears of the data, and returns
  // what is left to count (none).
  std::uint64_t tensorToStream(const detail::ExeNode &n, unsigned replica);
  void remoteCopy(const detail::ExeNode &n, unsigned replica);
  void printTensor(const detail::ExeNode &n, unsigned replica);
  double readScalar(std::uint32_t view, unsigned replica) const;
  void hostSync(unsigned replica);
  void checkStop() const;
  [[noreturn]] void raiseSimulated(std::uint32_t node, unsigned replica);
  void gather(const ResolvedView &v, const std::uint8_t *base, std::uint8_t *out) const;
  void scatter(const ResolvedView &v, std::uint8_t *base, const std::uint8_t *in) const;

  // ---- profiling (profile.cpp) ----
  void writeAutoReports() const;
  void writeGraphProfile() const;

  unsigned checkReplica(unsigned replica) const;
  StreamConn &connection(std::string_view handle, unsigned replica);

  Executable exe;
  const detail::ExecutableData *d = nullptr;
  OptionFlags options;
  bool prefetch = true;
  unsigned ioTiles = 0;  // exchange.numIOTiles
  // Per node (StreamToTensor only, with IO tiles): cycles of moving a
  // prefetched transfer from the IO tiles to its destination.
  std::vector<std::uint64_t> ioExchangeCycles;
  std::atomic<bool> profiling{false};
  bool everProfiled = false;
  std::uint32_t profileRunLimit = 2;
  bool autoExecutionProfile = false;
  bool autoGraphProfile = false;
  bool streamAtEachRun = true;
  std::string reportDir = ".";

  // Shared with the other engines of the executable (engine_plan.hpp); its
  // tables are named here as they were when each engine made its own.
  std::shared_ptr<const detail::EnginePlan> enginePlan;
  const std::vector<std::uint64_t> &varOffsets;
  const std::uint64_t &arenaBytes;
  const std::vector<ResolvedView> &views;
  const std::vector<std::vector<std::uint32_t>> &csChunks;  // vertex index boundaries per compute set
  const std::vector<detail::ElementwiseRuns> &csRuns;       // per compute set (elementwise_runs.hpp)
  const std::vector<detail::PreparedVertices> &csVertices;  // per compute set (vertex_operands.hpp)
  // Per node: a Copy's direct memcpys (copy_plan.hpp); empty for other
  // nodes and for copies whose source and destination share bytes.
  const std::vector<std::vector<detail::CopyChunk>> &copyChunks;
  const detail::OperandMirrors &mirrors;
  const detail::MatMulRowPlan &matMulRows;
  std::unique_ptr<detail::ParallelGate[]> csGates;  // per compute set: inline or on the pool

  std::vector<std::unique_ptr<Replica>> replicas;
  std::shared_ptr<detail::DeviceState> device;
  std::atomic<State> state{State::Constructed};  // runs of different replicas read it concurrently
  std::atomic<bool> stopRequested{false};

  std::map<ErrorLocation, DeviceErrorCode> simulatedErrors;
  std::vector<std::uint8_t> nodeHasError;
  bool anySimulatedError = false;

  std::ostream *printStream = nullptr;
  std::ostream *printTensorStream = nullptr;

  std::unordered_map<std::string, std::uint32_t> streamIndex, hostCopyIndex, remoteIndex;
};

}  // namespace hwsim
