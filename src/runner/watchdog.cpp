#include "runner/watchdog.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

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
  bool running = false;        // mutex: the thread is in loop()
  bool quit = false;           // mutex: the process is exiting, no thread starts again
  std::thread thread;          // mutex

  void loop() {
    std::unique_lock lock(mutex);
    while (!quit) {
      if (entries.empty()) {
        sleepsUntil = RequestClock::time_point::max();
        if (!wake.wait_for(lock, kLinger, [this] { return quit || !entries.empty(); })) break;
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

  std::uint64_t add(std::chrono::nanoseconds period, Check check) {
    std::lock_guard lock(mutex);
    const std::uint64_t id = nextId++;
    const auto due = RequestClock::now() + period;
    entries.push_back({id, period, due, std::move(check)});
    if (!running && !quit) {
      if (thread.joinable()) thread.join();  // ended after lingering: it holds no lock now, or soon
      thread = std::thread([this] { loop(); });
      running = true;
    } else if (due < sleepsUntil) {
      wake.notify_one();
    }
    return id;
  }

  void remove(std::uint64_t id) noexcept {
    std::lock_guard lock(mutex);
    // Not woken: at its next wake-up it finds the check gone (and lingers
    // if it was the last).
    std::erase_if(entries, [id](const Entry &entry) { return entry.id == id; });
  }

  // At exit, or when libmrt is unloaded: the thread must not outlive the
  // library's code. A runner still alive then (a leak) is no longer watched.
  void stop() noexcept {
    {
      std::lock_guard lock(mutex);
      quit = true;
    }
    wake.notify_one();
    if (thread.joinable()) thread.join();
  }
};

const std::shared_ptr<Watchdog::Service> &Watchdog::service() {
  // Joins the thread when static objects are destroyed. Made at the first
  // watch, so it is destroyed after any static runner made before it;
  // Watches that outlive it keep the Service alive through their shared_ptr.
  struct Owner {
    std::shared_ptr<Service> service = std::make_shared<Service>();
    ~Owner() { service->stop(); }
  };
  static Owner owner;
  return owner.service;
}

Watchdog::Watch Watchdog::watch(std::chrono::nanoseconds period, Check check) {
  const std::shared_ptr<Service> &s = service();
  return Watch(s, s->add(period, std::move(check)));
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
