// mrt::detail::ThreadCpus: the CPUs a thread may run on (its affinity mask),
// taken on one thread and given to another.
//
// Why: a runner's device thread comes from a process-wide cache of threads
// (common/reused_thread.hpp) and starts when a request first needs it, on
// whichever thread that is: a new thread inherits the mask of the thread
// that starts it, a cached one keeps the mask it had. A client pinned to a
// CPU would then pin the device thread beside it. So the replica takes the
// mask of the thread creating the runner, and its device thread runs on
// those CPUs, as if the creator had started it.
#pragma once

#include <sched.h>

namespace mrt::detail {

class ThreadCpus {
 public:
  // The calling thread's CPUs (all of them if the kernel does not say).
  static ThreadCpus ofThisThread() noexcept;
  // Confines the calling thread to these CPUs unless it is already; a
  // refusal (a cpuset that shrank since) leaves it where it may run.
  void applyToThisThread() const noexcept;

 private:
  cpu_set_t cpus_{};
  bool known_ = false;
};

}  // namespace mrt::detail
