// ParallelGate: whether one compute set is worth handing to the worker pool.
// Waking a parked pool thread and waiting for it costs tens of microseconds
// (more on an idle VM, whose vCPUs halt), longer than a small compute set
// takes on one thread, and modelled cycles do not tell host time (the host
// kernels differ per codelet and per ISA level). So the gate times the
// compute set's first runs on the calling thread (its CPU time: a run
// preempted by other processes does not look longer) and lets it go
// parallel on k threads only if the fastest of them took T with
// T / k + kWakeNs < T: the pool must win what waking it costs.
// docs/performance.md ("Worker pool") says how kWakeNs was measured.
// Replicas of one engine share a gate.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>

namespace hwsim::detail {

// CPU time the calling thread has used, in ns.
std::uint64_t threadCpuNs();

class ParallelGate {
 public:
  static constexpr std::uint32_t kSamples = 3;
  static constexpr std::uint64_t kWakeNs = 60000;

  // True while the compute set is still being timed: run it inline and
  // record() how long it took.
  bool timing() const { return samples_.load(std::memory_order_acquire) < kSamples; }
  void record(std::uint64_t ns);
  // After timing: whether running it on `threads` threads beats one.
  bool parallel(unsigned threads) const;

 private:
  std::atomic<std::uint64_t> best_{std::numeric_limits<std::uint64_t>::max()};
  std::atomic<std::uint32_t> samples_{0};
};

}  // namespace hwsim::detail
