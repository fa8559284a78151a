// ParallelGate: whether one compute set is worth handing to the worker pool.
// Handing chunks to a pool thread still polling after its last job and
// waiting for it costs about 1-2 us (an Ice Lake Xeon VM, bench_worker_pool);
// waking a parked one from about 10 us to tens of microseconds (an idle VM,
// whose vCPUs halt), longer than a small compute set takes on one thread, and
// modelled cycles do not tell host time (the host kernels differ per codelet
// and per ISA level). So the gate measures:
//   1. the compute set's first kSamples runs go inline on the calling thread,
//      timed by its CPU time (a run preempted by other processes does not
//      look longer); T is the fastest;
//   2. if on k threads T / k + kMinWakeNs < T (the pool could win more than
//      a hand-off costs), the next runs go to the pool, timed by the
//      caller's wall time, until kSamples runs in a row did not beat the
//      fastest (at least kMinTrials runs, at most kMaxTrials); P is the
//      fastest. A pool thread's first runs of a compute set are slow: the
//      mlp's batch-16 layer1 in two parts took 25-198 us on the pool for 3
//      to 6 runs, then 11-13 us against 17 us inline (a Xeon VM with AMX,
//      session 26), so three trials kept it inline for good;
//   3. if P < T by kCompareBelowNs or more, it runs on the pool for good.
//      Otherwise the pool may have won inside the compute set while a pool
//      thread polling for its next job slowed what the caller ran meanwhile
//      (a polling hyperthread beside it; a busy VM): with 1 us below and no
//      step 3, the mlp's batch-1 layer1 won its trials on a loaded Ice Lake
//      VM while requests took 5.6-7.1 us against 5.2 on one thread (session
//      25). So the gate compares cycles, the wall time from one run's start
//      to the next one's, which holds all the rest of a request: kRounds
//      rounds of kCycleRuns runs on the pool, then kCycleRuns inline, each
//      block measured after kWarmRuns runs (and, inline, once the pool's
//      threads stopped polling for this compute set's jobs,
//      WorkerPool::kSpinNs). The fastest cycles decide. kCompareBelowNs is
//      half of kSpinNs: a polling thread slows what runs beside it for at
//      most that long, by at most half even as its hyperthread sibling;
//      above it the comparison's inline runs would only cost (batch 1024's
//      about 20 ms). On an AMD EPYC VM (session 28) batch 1's layer1 (4.5 us
//      inline) keeps the pool, and requests take 5.0-5.4 us against
//      6.8-7.0 inline;
//   4. a verdict of step 3 is one moment's: a busy spell of the other vCPU
//      kept batch 16's layer1 inline (52 us requests against 32). So step 3
//      comes again kFirstRecheckNs after its verdict, then after twice as
//      long each time the verdict holds, up to kLastRecheckNs; a changed
//      verdict starts the periods again. A recheck's runs in the losing
//      mode, about 20, cost some microseconds a second at worst.
// So the pool keeps no compute set that it made slower than the calling
// thread alone, on any machine, but for the runs of steps 2 to 4.
// kMinWakeNs, 1 us, is what a hand-off to a polling thread costs at least:
// a compute set that could not save that much is not tried.
// docs/performance.md ("Worker pool") says how the wake costs were measured.
// Replicas of one engine share a gate.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>

#include "worker_pool.hpp"

namespace hwsim::detail {

// CPU time the calling thread has used, in ns.
std::uint64_t threadCpuNs();
// A monotonic wall clock, in ns.
std::uint64_t wallNs();
// The same clock at its last tick (a few ms at most behind wallNs(), never
// ahead): cheaper, for what each run checks.
std::uint64_t coarseWallNs();

class ParallelGate {
 public:
  static constexpr std::uint32_t kSamples = 3;
  static constexpr std::uint32_t kMinTrials = 8;
  static constexpr std::uint32_t kMaxTrials = 16;
  static constexpr std::uint64_t kMinWakeNs = 1000;
  static constexpr std::uint32_t kRounds = 2;
  static constexpr std::uint32_t kCycleRuns = 8;
  static constexpr std::uint32_t kWarmRuns = 2;
  static constexpr std::uint64_t kCompareBelowNs = WorkerPool::kSpinNs / 2;
  static constexpr std::uint64_t kFirstRecheckNs = 125'000'000;
  static constexpr std::uint64_t kLastRecheckNs = 64'000'000'000;

  enum class Mode : std::uint8_t {
    TimeInline,   // step 1: run inline and recordInline() its CPU time
    TryParallel,  // step 2: run on the pool and recordParallel() its wall time
    CompareCycles,  // steps 3 and 4: run on the pool if startCycle() says so
    Inline,
    Parallel,
  };
  // What the next run on `threads` threads does.
  Mode mode(unsigned threads) const;
  void recordInline(std::uint64_t cpuNs);
  void recordParallel(std::uint64_t wallNs);
  // Steps 3 and 4: a run of the compute set starts at wallNs() nowNs;
  // whether it runs on the pool. Ends the cycle the previous run started.
  bool startCycle(std::uint64_t nowNs);

 private:
  struct Fastest {
    std::atomic<std::uint64_t> ns{std::numeric_limits<std::uint64_t>::max()};
    std::atomic<std::uint32_t> samples{0};
    // Whether t beat the fastest so far.
    bool record(std::uint64_t t);
  };
  bool inlineDone() const { return inline_.samples.load(std::memory_order_acquire) >= kSamples; }
  bool trialsDone() const;
  enum Verdict : std::uint8_t { kNone, kInline, kPool };
  // Steps 3 and 4, under the mutex: only their runs take it.
  struct Cycles {
    std::mutex mutex;
    std::uint32_t rounds = 0;      // rounds done
    bool onPool = true;            // the block being run
    std::uint32_t blockRuns = 0;   // runs started in it
    std::uint32_t measured = 0;    // of them, cycles measured
    std::uint64_t blockStart = 0;  // wall ns
    std::uint64_t lastStart = 0;   // of the previous run, if measured
    bool lastMeasured = false, lastOnPool = false;
    std::uint64_t fastest[2] = {std::numeric_limits<std::uint64_t>::max(),
                                std::numeric_limits<std::uint64_t>::max()};  // inline, pool
    Verdict last = kNone;  // the last verdict
    std::uint64_t recheckPeriod = kFirstRecheckNs;
    // A new comparison, after a verdict.
    void restart();
  };
  // Whether step 3 decides, after trials found fastest times t inline and p
  // on the pool.
  static bool comparesCycles(std::uint64_t t, std::uint64_t p) { return p >= t || t - p < kCompareBelowNs; }
  bool startCycleLocked(std::uint64_t now);
  Fastest inline_, parallel_;
  Cycles cycles_;
  std::atomic<Verdict> verdict_{kNone};     // step 3's last
  std::atomic<std::uint64_t> recheckAt_{0};  // wallNs() of step 4's next comparison
  std::atomic<std::uint32_t> trialsSinceFastest_{0};  // pool trials in a row that did not beat parallel_
};

}  // namespace hwsim::detail
