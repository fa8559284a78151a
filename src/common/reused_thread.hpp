// ReusedThread: runs a task on a thread of its own, as std::thread does,
// but the thread comes from a process-wide cache of threads whose tasks
// have returned, and goes back to it once its task returns.
//
// Why: starting and joining a thread costs 25-50 us of CPU on the VMs this
// was measured on (clone3 and the new thread's own setup calls, the exit's
// madvise of its stack, the join's futex): a third of what creating and
// destroying a small model's runner cost (issue 14, "cheap runner
// creation"). A runner's device thread is such a task, and a program that
// creates runners one after another (a server reloading models, a test
// suite) now takes the previous runner's thread.
//
// A thread whose task has returned waits kLinger for another, then ends;
// at most kKeptThreads wait at once (one more ends at once). At exit, or
// when libmrt is unloaded, the waiting threads are ended and joined, so none
// runs the library's code afterwards; a thread still running a task (a
// runner leaked, or held by a static object destroyed later) goes on. In
// the child of a fork the cache starts empty: the parent's threads were not
// copied.
//
// A task starts with whatever thread-local state the thread's last task
// left. The runner's thread-locals are caches (scratch buffers, spin
// tuning) or are restored when their scope ends, and a device thread's
// scheduling policy (common/batch_scheduling.hpp) is the same for all.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

namespace mrt::detail {

class ReusedThread {
 public:
  static constexpr std::chrono::seconds kLinger{2};
  static constexpr std::size_t kKeptThreads = 8;

  ReusedThread() noexcept = default;
  // Runs task on a waiting thread, or on a new one: std::system_error
  // when none can be started, as std::thread. The task must not throw.
  explicit ReusedThread(std::function<void()> task);
  ReusedThread(ReusedThread &&other) noexcept = default;
  ReusedThread &operator=(ReusedThread &&other) noexcept;  // std::terminate() if this one is joinable
  ReusedThread(const ReusedThread &) = delete;
  ReusedThread &operator=(const ReusedThread &) = delete;
  ~ReusedThread();  // std::terminate() if joinable, as std::thread

  bool joinable() const noexcept { return job_ != nullptr; }
  // Returns once the task has returned and what it captured is destroyed.
  void join();

  // Threads waiting for a task (tests).
  static std::size_t waitingThreads();

  struct Job;  // a task and whether it has returned (reused_thread.cpp)

 private:
  std::shared_ptr<Job> job_;
};

}  // namespace mrt::detail
