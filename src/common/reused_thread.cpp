#include "common/reused_thread.hpp"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include <support/process_singleton.hpp>

namespace mrt::detail {

struct ReusedThread::Job {
  std::function<void()> task;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;  // mutex

  // What the task captured is gone before join() returns, as with std::thread.
  void runTask() {
    task();
    task = nullptr;
  }

  void markDone() {
    {
      std::lock_guard lock(mutex);
      done = true;
    }
    finished.notify_all();
  }
};

namespace {

using Job = ReusedThread::Job;

class ThreadCache {
 public:
  static ThreadCache &instance() {
    // Never destroyed (a runner may be created or destroyed while static
    // objects are destroyed): what exit or an unload must do is done by
    // the Ender's destructor.
    ThreadCache &cache = support::processSingleton<ThreadCache, support::InChild::Reset>();
    struct Ender {
      ~Ender() { instance().endWaiting(); }
    };
    static Ender ender;
    return cache;
  }

  // Hands the job to a waiting thread, or starts one for it.
  void start(std::shared_ptr<Job> job) {
    std::vector<Worker *> ended = takeEnded();
    for (Worker *worker : ended) {
      worker->thread.join();  // it has let go of the lock, or is about to
      delete worker;
    }
    std::unique_lock lock(mutex_);
    if (!waiting_.empty()) {
      Worker *worker = waiting_.back();  // the most recent: its stack is likelier cached
      waiting_.pop_back();
      worker->job = std::move(job);
      lock.unlock();
      // Woken after the unlock, or it would wake only to wait for the lock.
      // The worker stays: one with a job does not end before running it.
      worker->wake.notify_one();
      return;
    }
    auto *worker = new Worker;
    try {
      // Made and stored with the lock held: nobody joins it before it is stored.
      worker->thread = std::thread([this, worker, first = std::move(job)]() mutable { serve(worker, std::move(first)); });
    } catch (...) {
      delete worker;
      throw;
    }
  }

  std::size_t waitingThreads() {
    std::lock_guard lock(mutex_);
    return waiting_.size();
  }

 private:
  struct Worker {
    std::thread thread;            // joined by whoever takes it from ended_ (or waiting_ at exit)
    std::shared_ptr<Job> job;      // mutex_: handed over while waiting
    std::condition_variable wake;  // mutex_
  };

  // The worker's thread: runs its job, then waits for another.
  void serve(Worker *worker, std::shared_ptr<Job> job) {
    std::unique_lock lock(mutex_, std::defer_lock);
    for (;;) {
      job->runTask();
      lock.lock();
      // Waiting before the joiner learns the task is done: a runner created
      // right after one is destroyed takes this thread, even when the
      // joiner runs first on a CPU the two share.
      const bool keep = !ending_ && waiting_.size() < ReusedThread::kKeptThreads;
      if (keep) waiting_.push_back(worker);
      job->markDone();
      job.reset();
      if (!keep) break;
      worker->wake.wait_for(lock, ReusedThread::kLinger, [&] { return worker->job != nullptr || ending_; });
      if (worker->job == nullptr) {
        std::erase(waiting_, worker);
        break;
      }
      job = std::move(worker->job);
      lock.unlock();
    }
    // Ends. At exit the Ender joins the threads it took from waiting_;
    // any other is joined by the next start().
    if (!ending_) ended_.push_back(worker);
  }

  std::vector<Worker *> takeEnded() {
    std::lock_guard lock(mutex_);
    return std::exchange(ended_, {});
  }

  // At exit, or when libmrt is unloaded: waiting threads end now, so none
  // runs the library's code afterwards.
  void endWaiting() noexcept {
    std::vector<Worker *> workers;
    {
      std::lock_guard lock(mutex_);
      ending_ = true;
      workers = std::exchange(waiting_, {});
      workers.insert(workers.end(), ended_.begin(), ended_.end());
      ended_.clear();
      for (Worker *worker : workers) worker->wake.notify_one();
    }
    for (Worker *worker : workers) {
      worker->thread.join();
      delete worker;
    }
  }

  // For processSingleton.
  friend ThreadCache &support::processSingleton<ThreadCache, support::InChild::Reset>();
  std::mutex &mutex() { return mutex_; }
  // In the child of a fork (the lock held across it, so the lists are
  // whole): their threads were not copied. The workers are dropped without
  // being destroyed (a std::thread that seems joinable would terminate).
  void resetInChild() noexcept {
    waiting_ = {};
    ended_ = {};
    mutex_.unlock();
  }

  std::mutex mutex_;
  std::vector<Worker *> waiting_;  // mutex_: most recent last
  std::vector<Worker *> ended_;    // mutex_: threads that have ended or are ending, to join
  bool ending_ = false;            // mutex_
};

}  // namespace

ReusedThread::ReusedThread(std::function<void()> task) : job_(std::make_shared<Job>()) {
  job_->task = std::move(task);
  ThreadCache::instance().start(job_);
}

ReusedThread &ReusedThread::operator=(ReusedThread &&other) noexcept {
  if (joinable()) std::terminate();
  job_ = std::move(other.job_);
  return *this;
}

ReusedThread::~ReusedThread() {
  if (joinable()) std::terminate();
}

void ReusedThread::join() {
  {
    std::unique_lock lock(job_->mutex);
    job_->finished.wait(lock, [this] { return job_->done; });
  }
  job_.reset();
}

std::size_t ReusedThread::waitingThreads() { return ThreadCache::instance().waitingThreads(); }

}  // namespace mrt::detail
