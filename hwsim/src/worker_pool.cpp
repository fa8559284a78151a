#include "worker_pool.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <exception>

namespace hwsim::detail {

// Not all the CPUs the machine has: confined to one CPU, compute sets run
// inline on the caller rather than on threads that could only take turns
// with it.
unsigned allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

struct WorkerPool::Job {
  const std::function<void(std::size_t)> *fn = nullptr;
  std::size_t numChunks = 0;
  unsigned maxHelpers = 0;  // pool threads that may hold the job at once
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;    // guarded by the pool mutex
  unsigned active = 0;     // pool threads currently holding this job (guarded)
  std::exception_ptr error;  // guarded
};

namespace {

// Claims and runs chunks of the job until none is left; returns how many ran.
std::size_t runChunks(std::atomic<std::size_t> &next, std::size_t numChunks, const std::function<void(std::size_t)> &fn,
                      std::exception_ptr &error) {
  std::size_t mine = 0;
  for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < numChunks;) {
    try {
      fn(i);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    ++mine;
  }
  return mine;
}

}  // namespace

WorkerPool &WorkerPool::instance() {
  static WorkerPool pool(allowedCpus() - 1);
  return pool;
}

WorkerPool::WorkerPool(unsigned threads) : capacity_(threads) {}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_all();
  for (auto &t : threads_) t.join();
}

unsigned WorkerPool::startedThreads() {
  std::lock_guard lock(mutex_);
  return static_cast<unsigned>(threads_.size());
}

void WorkerPool::parallelFor(std::size_t numChunks, const std::function<void(std::size_t)> &fn, unsigned maxThreads) {
  if (numChunks <= 1 || maxThreads <= 1 || capacity_ == 0) {
    for (std::size_t i = 0; i < numChunks; ++i) fn(i);
    return;
  }
  const auto helpers = static_cast<unsigned>(std::min<std::size_t>({capacity_, maxThreads - 1, numChunks - 1}));
  Job job;
  job.fn = &fn;
  job.numChunks = numChunks;
  job.maxHelpers = helpers;
  {
    std::lock_guard lock(mutex_);
    if (threads_.empty()) {
      threads_.reserve(capacity_);
      for (unsigned i = 0; i < capacity_; ++i) threads_.emplace_back([this] { workerLoop(); });
    }
    jobs_.push_back(&job);
  }
  for (unsigned i = 0; i < helpers; ++i) wake_.notify_one();
  std::exception_ptr myError;
  const std::size_t mine = runChunks(job.next, numChunks, fn, myError);
  std::unique_lock lock(mutex_);
  job.done += mine;
  if (myError && !job.error) job.error = myError;
  // Nobody may pick the job up any more; wait for the threads still on it.
  if (auto it = std::find(jobs_.begin(), jobs_.end(), &job); it != jobs_.end()) jobs_.erase(it);
  finished_.wait(lock, [&] { return job.done == numChunks && job.active == 0; });
  if (job.error) std::rethrow_exception(job.error);
}

WorkerPool::Job *WorkerPool::jobWithRoom() const {
  for (Job *job : jobs_) {
    if (job->active < job->maxHelpers && job->next.load(std::memory_order_relaxed) < job->numChunks) return job;
  }
  return nullptr;
}

void WorkerPool::workerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    Job *job = nullptr;
    wake_.wait(lock, [&] { return quit_ || (job = jobWithRoom()) != nullptr; });
    if (quit_) return;
    ++job->active;
    lock.unlock();
    std::exception_ptr error;
    const std::size_t mine = runChunks(job->next, job->numChunks, *job->fn, error);
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
