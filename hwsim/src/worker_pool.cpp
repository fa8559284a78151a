#include "worker_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace hwsim::detail {

namespace {

// The CPUs the process may run on (taskset, a cpuset), not all the machine
// has: confined to one CPU, compute sets run inline on the caller rather
// than on threads that could only take turns with it.
unsigned allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

struct WorkerPool::Job {
  const std::function<void(std::size_t)> *fn = nullptr;
  std::size_t numChunks = 0;
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;    // guarded by the pool mutex
  unsigned active = 0;     // pool threads currently holding this job (guarded)
  std::exception_ptr error;  // guarded
};

WorkerPool &WorkerPool::instance() {
  static WorkerPool pool(allowedCpus() - 1);
  return pool;
}

WorkerPool::WorkerPool(unsigned threads) {
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { workerLoop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  for (auto &t : threads_) t.join();
}

void WorkerPool::parallelFor(std::size_t numChunks, const std::function<void(std::size_t)> &fn) {
  if (numChunks == 0) return;
  if (numChunks == 1 || threads_.empty()) {
    for (std::size_t i = 0; i < numChunks; ++i) fn(i);
    return;
  }
  Job job;
  job.fn = &fn;
  job.numChunks = numChunks;
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(&job);
  }
  wake_.notify_all();
  std::size_t mine = 0;
  std::exception_ptr myError;
  for (std::size_t i; (i = job.next.fetch_add(1, std::memory_order_relaxed)) < numChunks;) {
    try {
      fn(i);
    } catch (...) {
      if (!myError) myError = std::current_exception();
    }
    ++mine;
  }
  std::unique_lock lock(mutex_);
  job.done += mine;
  if (myError && !job.error) job.error = myError;
  // Nobody may pick the job up any more; wait for the threads still on it.
  if (auto it = std::find(jobs_.begin(), jobs_.end(), &job); it != jobs_.end()) jobs_.erase(it);
  finished_.wait(lock, [&] { return job.done == numChunks && job.active == 0; });
  if (job.error) std::rethrow_exception(job.error);
}

void WorkerPool::workerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return quit_ || !jobs_.empty(); });
    if (quit_) return;
    Job *job = jobs_.front();
    ++job->active;
    lock.unlock();
    std::size_t mine = 0;
    std::exception_ptr error;
    for (std::size_t i; (i = job->next.fetch_add(1, std::memory_order_relaxed)) < job->numChunks;) {
      try {
        (*job->fn)(i);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
      ++mine;
    }
    lock.lock();
    job->done += mine;
    if (error && !job->error) job->error = error;
    --job->active;
    // All chunks are claimed: take the job off the queue so threads go back to sleep.
    if (auto it = std::find(jobs_.begin(), jobs_.end(), job); it != jobs_.end()) jobs_.erase(it);
    finished_.notify_all();
  }
}

}  // namespace hwsim::detail
