#include "runner/watchdog.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include <support/process_singleton.hpp>

namespace mrt::detail {

struct Watchdog::Service {
  struct Entry {
    std::uint64_t id;
    std::chrono::nanoseconds period;
    RequestClock::time_point due;
    Check check;
  };

  std::mutex mutex;
  std::condition_variable wake;
  std::vector<Entry> entries;  // mutex; one per runner, few
  std::uint64_t nextId = 1;    // mutex
  // mutex: when the thread wakes up next (max(): it waits for a first
  // watch). Starting or ending a watch wakes it only if it has to wake up
  // earlier; each futile wake-up would cost a context switch per runner
  // created or destroyed.
  RequestClock::time_point sleepsUntil = RequestClock::time_point::max();
  bool running = false;     // mutex: the thread is in loop()
  bool endLinger = false;   // mutex: a lingering thread is to end now (exit, unload)
  std::thread thread;       // mutex

  void loop() {
    std::unique_lock lock(mutex);
    for (;;) {
      if (entries.empty()) {
        sleepsUntil = RequestClock::time_point::max();
        if (!wake.wait_for(lock, kLinger, [this] { return endLinger || !entries.empty(); }) || entries.empty()) break;
        continue;
      }
      sleepsUntil = std::min_element(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
                      return a.due < b.due;
                    })->due;
      // Woken early by a watch due sooner: the earliest due time is looked up again.
      if (wake.wait_until(lock, sleepsUntil) == std::cv_status::no_timeout) continue;
      const auto now = RequestClock::now();
      for (Entry &entry : entries) {
        if (entry.due > now) continue;
        entry.due = now + entry.period;
        entry.check(now);
      }
    }
    running = false;
  }

  std::uint64_t add(std::chrono::nanoseconds period, std::chrono::nanoseconds first, Check check) {
    std::lock_guard lock(mutex);
    const std::uint64_t id = nextId++;
    const auto due = RequestClock::now() + first;
    entries.push_back({id, period, due, std::move(check)});
    if (!running) {
      try {
        if (thread.joinable()) thread.join();  // ended after lingering: it holds no lock now, or soon
        thread = std::thread([this] { loop(); });
      } catch (...) {
        entries.pop_back();  // no Watch will end it: its check must not outlive the failed creation
        throw;
      }
      running = true;
    } else if (due < sleepsUntil) {
      wake.notify_one();
    }
    return id;
  }

  void remove(std::uint64_t id) noexcept {
    // Not woken: at its next wake-up it finds the check gone (and lingers
    // if it was the last).
    std::lock_guard lock(mutex);
    std::erase_if(entries, [id](const Entry &entry) { return entry.id == id; });
  }

  // At exit, or when libmrt is unloaded: a thread lingering with nothing
  // to watch ends now, so none runs the library's code afterwards. With
  // runners still alive (one held by a static object destroyed later, one
  // leaked) it goes on watching them: their shutdown may need it to stop
  // a hung run, and the process's end stops it.
  void endLingering() noexcept {
    std::unique_lock lock(mutex);
    if (!entries.empty() || !running) return;
    endLinger = true;
    wake.notify_one();
    std::thread ending = std::move(thread);
    lock.unlock();
    ending.join();
    lock.lock();
    endLinger = false;
  }

  // In the child of a fork (the lock held across it, so the state is
  // whole): the thread was not copied, and the parent's runners are not the
  // child's to watch. The thread handle and the condition variable (which
  // may count the parent's thread as waiting) are made anew over the old
  // ones: destroying a std::thread that seems joinable would terminate.
  void resetInChild() noexcept {
    entries.clear();
    new (&thread) std::thread;
    new (&wake) std::condition_variable;
    sleepsUntil = RequestClock::time_point::max();
    running = false;
    endLinger = false;
    mutex.unlock();
  }
};

const std::shared_ptr<Watchdog::Service> &Watchdog::service() {
  // Never destroyed (a runner may be created or destroyed while static
  // objects are destroyed): what exit or an unload must do is done by the
  // Ender's destructor.
  struct Kept {
    std::shared_ptr<Service> service = std::make_shared<Service>();
    std::mutex &mutex() { return service->mutex; }
    void resetInChild() noexcept { service->resetInChild(); }
  };
  const std::shared_ptr<Service> &kept = support::processSingleton<Kept, support::InChild::Reset>().service;
  struct Ender {
    ~Ender() { service()->endLingering(); }
  };
  static Ender ender;
  return kept;
}

Watchdog::Watch Watchdog::watch(std::chrono::nanoseconds period, std::chrono::nanoseconds first, Check check) {
  const std::shared_ptr<Service> &s = service();
  return Watch(s, s->add(period, first, std::move(check)));
}

bool Watchdog::threadRunning() {
  Service &s = *service();
  std::lock_guard lock(s.mutex);
  return s.running;
}

Watchdog::Watch::Watch(std::shared_ptr<Service> service, std::uint64_t id) : service_(std::move(service)), id_(id) {}

Watchdog::Watch::Watch(Watch &&other) noexcept
    : service_(std::move(other.service_)), id_(std::exchange(other.id_, 0)) {}

Watchdog::Watch &Watchdog::Watch::operator=(Watch &&other) noexcept {
  if (this != &other) {
    end();
    service_ = std::move(other.service_);
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

Watchdog::Watch::~Watch() { end(); }

void Watchdog::Watch::end() noexcept {
  if (service_) service_->remove(id_);
  service_.reset();
}

}  // namespace mrt::detail
