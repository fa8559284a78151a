#include "common/adaptive_spin.hpp"

#include <sched.h>

namespace mrt::detail {

unsigned allowedCpus() noexcept {
  using Clock = std::chrono::steady_clock;
  constexpr auto kRefreshEvery = std::chrono::milliseconds(100);
  thread_local unsigned cpus = 0;
  thread_local Clock::time_point refreshed{};
  const auto now = Clock::now();
  if (cpus == 0 || now - refreshed >= kRefreshEvery) {
    cpu_set_t set;
    CPU_ZERO(&set);
    // 0: the calling thread. On failure assume several CPUs (spinning is
    // still bounded by its budget).
    cpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? static_cast<unsigned>(CPU_COUNT(&set)) : 2;
    refreshed = now;
  }
  return cpus;
}

}  // namespace mrt::detail
