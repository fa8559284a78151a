#include "worker_pool.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>

#include "parallel_gate.hpp"

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
  const ChunkFn *fn = nullptr;
  std::size_t numChunks = 0;
  unsigned maxHelpers = 0;  // pool threads that may hold the job at once
  // The chunks not claimed yet, [front, back) packed as front << 32 | back.
  // The caller claims from the front and pool threads from the back, so in
  // a steady stream of runs each thread keeps running the same chunks and
  // finds their operands in its own caches (a batch-1 GEMV's 200 KB of
  // weights per thread); whoever comes first still takes what is left.
  std::atomic<std::uint64_t> unclaimed{0};
  bool anyUnclaimed() const {
    const std::uint64_t r = unclaimed.load(std::memory_order_relaxed);
    return (r >> 32) < (r & 0xffffffffu);
  }
  // Written under the pool mutex; the caller polls them without it, and
  // once done == numChunks and active == 0 no pool thread touches the job.
  std::atomic<std::size_t> done{0};
  std::atomic<unsigned> active{0};  // pool threads currently holding this job
  std::exception_ptr error;         // set under the pool mutex
  bool finished() const {
    return done.load(std::memory_order_acquire) == numChunks && active.load(std::memory_order_acquire) == 0;
  }
};

namespace {

// The spin-wait hint (as src/common/futex.hpp's, which hwsim, below src/,
// does not link).
void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Polls done() for up to kSpinNs of wall time; whether it came true.
template <typename Done>
bool spinUntil(Done done) {
  const std::uint64_t start = wallNs();
  for (unsigned polls = 0;; ++polls) {
    if (done()) return true;
    cpuRelax();
    if (polls % 64 == 63 && wallNs() - start > WorkerPool::kSpinNs) return done();
  }
}

// Claims and runs chunks of the job, from its front or its back, until none
// is left; returns how many ran.
std::size_t runChunks(std::atomic<std::uint64_t> &unclaimed, bool fromBack, const ChunkFn &fn,
                      std::exception_ptr &error) {
  std::size_t mine = 0;
  for (std::uint64_t r = unclaimed.load(std::memory_order_relaxed);;) {
    const std::uint64_t front = r >> 32, back = r & 0xffffffffu;
    if (front >= back) return mine;
    const std::uint64_t claimed = fromBack ? back - 1 : front;
    const std::uint64_t rest = fromBack ? (front << 32 | (back - 1)) : ((front + 1) << 32 | back);
    if (!unclaimed.compare_exchange_weak(r, rest, std::memory_order_relaxed)) continue;
    try {
      fn(static_cast<std::size_t>(claimed));
    } catch (...) {
      if (!error) error = std::current_exception();
    }
    ++mine;
    r = unclaimed.load(std::memory_order_relaxed);
  }
}

}  // namespace

WorkerPool &WorkerPool::instance() {
  static WorkerPool pool(allowedCpus() - 1);
  return pool;
}

WorkerPool::WorkerPool(unsigned threads)
    : capacity_(threads),
      numCallerCounts_(std::clamp<long>(::sysconf(_SC_NPROCESSORS_CONF), 1, kMaxCallerCounts)),
      callerCounts_(std::make_unique<CallerCount[]>(numCallerCounts_)) {}

std::atomic<unsigned> &WorkerPool::callersOnThisCpu() {
  // glibc 2.35 and later read it from the thread's rseq area, with no
  // system call (Debian 12 has 2.36).
  const int cpu = ::sched_getcpu();
  return callerCounts_[cpu < 0 ? 0 : static_cast<std::size_t>(cpu) % numCallerCounts_].count;
}

bool WorkerPool::everyCpuRunsACaller() const {
  unsigned callers = 0;
  for (std::size_t i = 0; i < numCallerCounts_; ++i) callers += callerCounts_[i].count.load(std::memory_order_relaxed);
  return callers > capacity_;
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard lock(mutex_);
    quit_.store(true, std::memory_order_relaxed);
  }
  wake_.notify_all();
  for (auto &t : threads_) t.join();
}

unsigned WorkerPool::startedThreads() {
  std::lock_guard lock(mutex_);
  return static_cast<unsigned>(threads_.size());
}

void WorkerPool::parallelFor(std::size_t numChunks, ChunkFn fn, unsigned maxThreads) {
  if (numChunks <= 1 || maxThreads <= 1 || capacity_ == 0 || everyCpuRunsACaller()) {
    for (std::size_t i = 0; i < numChunks; ++i) fn(i);
    return;
  }
  const auto helpers = static_cast<unsigned>(std::min<std::size_t>({capacity_, maxThreads - 1, numChunks - 1}));
  Job job;
  job.fn = &fn;
  job.numChunks = numChunks;
  job.unclaimed.store(static_cast<std::uint64_t>(numChunks), std::memory_order_relaxed);
  job.maxHelpers = helpers;
  {
    std::lock_guard lock(mutex_);
    if (threads_.empty()) {
      threads_.reserve(capacity_);
      for (unsigned i = 0; i < capacity_; ++i) threads_.emplace_back([this] { workerLoop(); });
    }
    jobs_.push_back(&job);
  }
  posted_.fetch_add(1, std::memory_order_release);
  for (unsigned i = 0; i < helpers; ++i) wake_.notify_one();
  std::exception_ptr myError;
  const std::size_t mine = runChunks(job.unclaimed, false, fn, myError);
  {
    std::lock_guard lock(mutex_);
    job.done.fetch_add(mine, std::memory_order_relaxed);
    if (myError && !job.error) job.error = myError;
    // Nobody may pick the job up any more; wait for the threads still on it.
    if (auto it = std::find(jobs_.begin(), jobs_.end(), &job); it != jobs_.end()) jobs_.erase(it);
  }
  // A parked caller would wait for a futex wake as long as a chunk (10 us
  // and more on a VM), so it polls first while its helpers finish.
  if (!spinUntil([&] { return job.finished(); })) {
    std::unique_lock lock(mutex_);
    finished_.wait(lock, [&] { return job.finished(); });
  }
  // Each helper set error before its release of active, which finished()
  // acquired: no lock needed to read it.
  if (job.error) std::rethrow_exception(job.error);
}

WorkerPool::Job *WorkerPool::jobWithRoom() const {
  for (Job *job : jobs_) {
    if (job->active < job->maxHelpers && job->anyUnclaimed()) return job;
  }
  return nullptr;
}

void WorkerPool::workerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    Job *job = jobWithRoom();
    if (job == nullptr && !quit_) {
      // Poll for the next job before parking: a parked thread takes a futex
      // wake (10 us and more on a VM) to start, longer than a batch-1
      // compute set lasts.
      const std::uint64_t seen = posted_.load(std::memory_order_acquire);
      lock.unlock();
      spinUntil([&] {
        return posted_.load(std::memory_order_acquire) != seen || quit_.load(std::memory_order_relaxed) ||
               everyCpuRunsACaller();
      });
      lock.lock();
      wake_.wait(lock, [&] { return quit_ || (job = jobWithRoom()) != nullptr; });
    }
    if (quit_) return;
    job->active.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    std::exception_ptr error;
    const std::size_t mine = runChunks(job->unclaimed, true, *job->fn, error);
    lock.lock();
    if (error && !job->error) job->error = error;
    job->done.fetch_add(mine, std::memory_order_release);
    // All chunks are claimed: take the job off the queue so threads go back to sleep.
    if (auto it = std::find(jobs_.begin(), jobs_.end(), job); it != jobs_.end()) jobs_.erase(it);
    job->active.fetch_sub(1, std::memory_order_release);  // the last touch of the job
    finished_.notify_all();
  }
}

}  // namespace hwsim::detail
