// WorkerPool: a small process-wide pool of host threads that run the chunks of
// a compute set. The calling thread works too, so with N host CPUs the process
// may use (its affinity mask, at first use) the pool has N-1 threads. They are
// started by the first parallelFor that needs them, so a process whose
// compute sets all run inline never creates them. Several engines/replicas
// may submit work concurrently; each job says how many threads it may use.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace hwsim::detail {

// The CPUs the process may run on (taskset, a cpuset), at least 1.
unsigned allowedCpus();

class WorkerPool {
 public:
  static WorkerPool &instance();
  // A pool of `threads` threads, none started yet.
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  // Runs fn(0) .. fn(numChunks - 1), each exactly once, and returns when all
  // are done. Chunks run on the caller and on at most maxThreads - 1 pool
  // threads (maxThreads <= 1: the caller alone). If a chunk throws, the first
  // exception is rethrown here after every chunk has finished.
  void parallelFor(std::size_t numChunks, const std::function<void(std::size_t)> &fn,
                   unsigned maxThreads = std::numeric_limits<unsigned>::max());
  // The threads the pool has or will start when first needed.
  unsigned capacity() const { return capacity_; }
  // The threads started so far (0 until a parallelFor needed them).
  unsigned startedThreads();

 private:
  struct Job;
  void workerLoop();
  Job *jobWithRoom() const;  // under mutex_

  const unsigned capacity_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::deque<Job *> jobs_;
  bool quit_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace hwsim::detail
