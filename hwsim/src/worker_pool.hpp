// WorkerPool: a small process-wide pool of host threads that run the chunks of
// a compute set. The calling thread works too, so with N host CPUs the process
// may use (its affinity mask, at first use) the pool has N-1 threads. They are
// started by the first parallelFor that needs them, so a process whose
// compute sets all run inline never creates them. Several engines/replicas
// may submit work concurrently; each job says how many threads it may use.
// A pool thread that finished a job polls for the next one for kSpinNs
// before it parks, and a caller polls for its helpers to finish: a futex
// wake costs 10 us and more on a VM, longer than a small compute set, and
// a stream of runs hands the pool a job every few microseconds. Neither
// polls while every CPU the process may use runs a program (RunScope).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstddef>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace hwsim::detail {

// The CPUs the process may run on (taskset, a cpuset), at least 1.
unsigned allowedCpus();

// A reference to a callable run as fn(chunk) for the length of one
// parallelFor: no copy and no allocation (a std::function holding the
// interpreter's lambda allocated at every run that reached the pool).
class ChunkFn {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, ChunkFn>>>
  ChunkFn(F &&fn) noexcept  // NOLINT(google-explicit-constructor): passed as a lambda
      : target_(const_cast<void *>(static_cast<const void *>(std::addressof(fn)))),
        call_([](void *f, std::size_t i) { (*static_cast<std::remove_reference_t<F> *>(f))(i); }) {}
  void operator()(std::size_t i) const { call_(target_, i); }

 private:
  void *target_;
  void (*call_)(void *, std::size_t);
};

class WorkerPool {
 public:
  // How long a pool thread polls for the next job before it parks, and a
  // caller for its helpers to finish before it parks (wall time).
  static constexpr std::uint64_t kSpinNs = 50000;

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
  void parallelFor(std::size_t numChunks, ChunkFn fn,
                   unsigned maxThreads = std::numeric_limits<unsigned>::max());
  // Marks the calling thread as running a program for its lifetime: when
  // every CPU the process may use runs one, the pool cannot help (a compute
  // set's chunks run on its caller) and its threads park at once instead of
  // polling for the next job, which would take CPU time from those callers.
  // Counted per CPU (the one the scope starts on): one counter for all had
  // two clients' runs on two replicas bounce its cache line at every run,
  // 14% of their CPU time (bench_handoffs, BM_TwoClientsVsOne add_one).
  class RunScope {
   public:
    explicit RunScope(WorkerPool &pool = instance()) : count_(pool.callersOnThisCpu()) {
      count_.fetch_add(1, std::memory_order_relaxed);
    }
    ~RunScope() { count_.fetch_sub(1, std::memory_order_relaxed); }
    RunScope(const RunScope &) = delete;
    RunScope &operator=(const RunScope &) = delete;

   private:
    std::atomic<unsigned> &count_;  // where it was counted, wherever the thread moves meanwhile
  };
  // The threads the pool has or will start when first needed.
  unsigned capacity() const { return capacity_; }
  // The threads started so far (0 until a parallelFor needed them).
  unsigned startedThreads();

 private:
  struct Job;
  void workerLoop();
  Job *jobWithRoom() const;  // under mutex_
  bool everyCpuRunsACaller() const;
  std::atomic<unsigned> &callersOnThisCpu();

  const unsigned capacity_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable finished_;
  std::deque<Job *> jobs_;
  std::atomic<bool> quit_{false};  // set under mutex_ (for the waits), read by polling threads without it
  std::atomic<std::uint64_t> posted_{0};      // jobs ever queued: what polling threads watch
  // Threads inside a RunScope, by the CPU each started on (modulo
  // numCallerCounts_: the machine's CPUs, at most kMaxCallerCounts), a
  // cache line each.
  static constexpr std::size_t kMaxCallerCounts = 64;
  struct alignas(64) CallerCount {
    std::atomic<unsigned> count{0};
  };
  const std::size_t numCallerCounts_;
  const std::unique_ptr<CallerCount[]> callerCounts_;
  std::vector<std::thread> threads_;
};

}  // namespace hwsim::detail
