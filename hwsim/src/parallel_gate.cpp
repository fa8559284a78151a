#include "parallel_gate.hpp"

#include <ctime>

namespace hwsim::detail {

namespace {
std::uint64_t clockNs(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}
}  // namespace

std::uint64_t threadCpuNs() { return clockNs(CLOCK_THREAD_CPUTIME_ID); }
std::uint64_t wallNs() { return clockNs(CLOCK_MONOTONIC); }

bool ParallelGate::Fastest::record(std::uint64_t t) {
  // The fastest run: the first one also pays for first touches of the
  // arena (and the pool's for starting its threads), and any run may have
  // been preempted.
  std::uint64_t best = ns.load(std::memory_order_relaxed);
  const bool faster = t < best;
  while (t < best && !ns.compare_exchange_weak(best, t, std::memory_order_relaxed)) {
  }
  samples.fetch_add(1, std::memory_order_release);
  return faster;
}

bool ParallelGate::trialsDone() const {
  const std::uint32_t n = parallel_.samples.load(std::memory_order_acquire);
  return n >= kMaxTrials ||
         (n >= kMinTrials && trialsSinceFastest_.load(std::memory_order_relaxed) >= kSamples);
}

void ParallelGate::recordInline(std::uint64_t cpuNs) { inline_.record(cpuNs); }

void ParallelGate::recordParallel(std::uint64_t wall) {
  // Replicas sharing the gate may record at once: a lost count only moves
  // the end of the trials by a run.
  if (parallel_.record(wall)) trialsSinceFastest_.store(0, std::memory_order_relaxed);
  else trialsSinceFastest_.fetch_add(1, std::memory_order_relaxed);
}

ParallelGate::Mode ParallelGate::mode(unsigned threads) const {
  if (!inlineDone()) return Mode::TimeInline;
  // T - T / k > kMinWakeNs, without dividing.
  const std::uint64_t t = inline_.ns.load(std::memory_order_relaxed);
  if (threads < 2 || t * (threads - 1) <= kMinWakeNs * threads) return Mode::Inline;
  if (!trialsDone()) return Mode::TryParallel;
  return parallel_.ns.load(std::memory_order_relaxed) < t ? Mode::Parallel : Mode::Inline;
}

}  // namespace hwsim::detail
