#include "parallel_gate.hpp"

#include <ctime>

namespace hwsim::detail {

std::uint64_t threadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

void ParallelGate::record(std::uint64_t ns) {
  // The fastest run: the first one also pays for first touches of the
  // arena, and any run may have been preempted.
  std::uint64_t best = best_.load(std::memory_order_relaxed);
  while (ns < best && !best_.compare_exchange_weak(best, ns, std::memory_order_relaxed)) {
  }
  samples_.fetch_add(1, std::memory_order_release);
}

bool ParallelGate::parallel(unsigned threads) const {
  if (threads < 2) return false;
  // T - T / k > kWakeNs, without dividing.
  const std::uint64_t best = best_.load(std::memory_order_relaxed);
  return best != std::numeric_limits<std::uint64_t>::max() && best * (threads - 1) > kWakeNs * threads;
}

}  // namespace hwsim::detail
