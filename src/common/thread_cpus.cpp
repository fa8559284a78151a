#include "common/thread_cpus.hpp"

namespace mrt::detail {

ThreadCpus ThreadCpus::ofThisThread() noexcept {
  ThreadCpus taken;
  CPU_ZERO(&taken.cpus_);
  taken.known_ = sched_getaffinity(0, sizeof taken.cpus_, &taken.cpus_) == 0;
  return taken;
}

void ThreadCpus::applyToThisThread() const noexcept {
  if (!known_) return;
  const ThreadCpus now = ofThisThread();
  if (now.known_ && CPU_EQUAL(&now.cpus_, &cpus_)) return;
  (void)sched_setaffinity(0, sizeof cpus_, &cpus_);
}

}  // namespace mrt::detail
