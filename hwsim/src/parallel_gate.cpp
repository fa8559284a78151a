#include "parallel_gate.hpp"

#include <algorithm>
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
std::uint64_t coarseWallNs() { return clockNs(CLOCK_MONOTONIC_COARSE); }

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
  if (!comparesCycles(t, parallel_.ns.load(std::memory_order_relaxed))) return Mode::Parallel;
  const Verdict verdict = verdict_.load(std::memory_order_acquire);
  if (verdict == kNone || coarseWallNs() >= recheckAt_.load(std::memory_order_relaxed)) return Mode::CompareCycles;
  return verdict == kPool ? Mode::Parallel : Mode::Inline;
}

void ParallelGate::Cycles::restart() {
  rounds = blockRuns = measured = 0;
  onPool = true;
  lastMeasured = false;
  fastest[0] = fastest[1] = std::numeric_limits<std::uint64_t>::max();
}

bool ParallelGate::startCycle(std::uint64_t now) {
  std::lock_guard lock(cycles_.mutex);
  if (const Verdict verdict = verdict_.load(std::memory_order_relaxed); verdict != kNone) {
    // Another replica's run may have found the verdict since its mode().
    if (now < recheckAt_.load(std::memory_order_relaxed)) return verdict == kPool;
    cycles_.restart();
    verdict_.store(kNone, std::memory_order_relaxed);
  }
  return startCycleLocked(now);
}

bool ParallelGate::startCycleLocked(std::uint64_t now) {
  Cycles &c = cycles_;
  if (c.lastMeasured) {
    std::uint64_t &fastest = c.fastest[c.lastOnPool ? 1 : 0];
    fastest = std::min(fastest, now - c.lastStart);
  }
  if (c.measured == kCycleRuns) {  // the block is done: the next one
    if (!c.onPool) ++c.rounds;
    c.onPool = !c.onPool;
    c.blockRuns = c.measured = 0;
    c.blockStart = now;
  }
  if (c.rounds == kRounds) {
    const Verdict verdict = c.fastest[1] < c.fastest[0] ? kPool : kInline;
    c.recheckPeriod = c.last == verdict ? std::min(2 * c.recheckPeriod, kLastRecheckNs) : kFirstRecheckNs;
    c.last = verdict;
    verdict_.store(verdict, std::memory_order_release);
    recheckAt_.store(now + c.recheckPeriod, std::memory_order_relaxed);
    return verdict == kPool;
  }
  // An inline block measures once no pool thread polls for this compute
  // set's jobs any more: that poll is part of the pool's cost.
  const bool warm = c.blockRuns >= kWarmRuns && (c.onPool || now - c.blockStart >= WorkerPool::kSpinNs);
  if (warm) ++c.measured;
  c.lastMeasured = warm;
  c.lastOnPool = c.onPool;
  c.lastStart = now;
  ++c.blockRuns;
  return c.onPool;
}

}  // namespace hwsim::detail
