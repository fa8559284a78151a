// WorkerPool: a small process-wide pool of host threads that run the chunks of
// a compute set. The calling thread works too, so with N host CPUs the process
// may use (its affinity mask, at first use) the pool has N-1 threads. Several engines/replicas may submit work concurrently.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace hwsim::detail {

class WorkerPool {
 public:
  static WorkerPool &instance();
  explicit WorkerPool(unsigned threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool &) = delete;
  WorkerPool &operator=(const WorkerPool &) = delete;

  // Runs fn(0) .. fn(numChunks - 1), each exactly once, and returns when all
  // are done. Chunks run on the caller and the pool threads. If a chunk throws,
  // the first exception is rethrown here after every chunk has finished.
  void parallelFor(std::size_t numChunks, const std::function<void(std::size_t)> &fn);
  unsigned numThreads() const { return static_cast<unsigned>(threads_.size()); }

 private:
  struct Job;
  void workerLoop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::deque<Job *> jobs_;
  bool quit_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace hwsim::detail
