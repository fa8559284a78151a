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
//   3. from then on it runs on the pool if P < T, inline otherwise.
// So the pool never keeps a compute set that it made slower than the calling
// thread alone, on any machine; only the trial runs of step 2 may be.
// kMinWakeNs is 4 us, not the 1-2 us a hand-off to a polling thread takes:
// a fastest trial is the pool at its best, and the polling thread costs the
// caller time outside the compute set. At 1 us the mlp's batch-1 layer1
// (2 GEMVs a thread) won its trials on a loaded Ice Lake VM, and requests
// took 5.6-7.1 us against 5.2 us on one thread (session 25); at 4 us batch 1
// stays on one thread and batch 16's parts, 64 and 1024 still go to the pool.
// docs/performance.md ("Worker pool") says how the wake costs were measured.
// Replicas of one engine share a gate.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

namespace hwsim::detail {

// CPU time the calling thread has used, in ns.
std::uint64_t threadCpuNs();
// A monotonic wall clock, in ns.
std::uint64_t wallNs();

class ParallelGate {
 public:
  static constexpr std::uint32_t kSamples = 3;
  static constexpr std::uint32_t kMinTrials = 8;
  static constexpr std::uint32_t kMaxTrials = 16;
  static constexpr std::uint64_t kMinWakeNs = 4000;

  enum class Mode : std::uint8_t {
    TimeInline,   // step 1: run inline and recordInline() its CPU time
    TryParallel,  // step 2: run on the pool and recordParallel() its wall time
    Inline,
    Parallel,
  };
  // What the next run on `threads` threads does.
  Mode mode(unsigned threads) const;
  void recordInline(std::uint64_t cpuNs);
  void recordParallel(std::uint64_t wallNs);

 private:
  struct Fastest {
    std::atomic<std::uint64_t> ns{std::numeric_limits<std::uint64_t>::max()};
    std::atomic<std::uint32_t> samples{0};
    // Whether t beat the fastest so far.
    bool record(std::uint64_t t);
  };
  bool inlineDone() const { return inline_.samples.load(std::memory_order_acquire) >= kSamples; }
  bool trialsDone() const;
  Fastest inline_, parallel_;
  std::atomic<std::uint32_t> trialsSinceFastest_{0};  // pool trials in a row that did not beat parallel_
};

}  // namespace hwsim::detail
