// One watchdog thread for the whole process. A runner's programs may never
// complete a request (an unbounded loop, stream copies on a path not
// taken); they then hold the device thread, or a synchronous caller, where
// no timeout can reach them, so another thread has to look at each runner
// from time to time and stop them (Replica::watch).
//
// Why one thread and not one per runner: starting and joining a thread is
// about a quarter of what creating a small model's runner costs (issue 14,
// "cheap runner creation"), and a watchdog sleeps almost all the time.
// The thread starts at the first watch, and ends after kLinger without
// any, so that a program that creates runners one after another (a server
// reloading models, a test suite) reuses it. At exit or when libmrt is
// unloaded, a thread lingering with nothing to watch is ended and joined,
// so none runs the library's code afterwards; one still watching runners
// (held by static objects destroyed later, or leaked) goes on, since their
// shutdown may need it. In the child of a fork the parent's runners are
// not watched, and the child's first watch starts a thread of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "runner/request_stats.hpp"

namespace mrt::detail {

class Watchdog {
  struct Service;

 public:
  using Check = std::function<void(RequestClock::time_point now)>;
  static constexpr std::chrono::seconds kLinger{2};

  // Calls check(now) on the watchdog thread `first` from now, then every
  // `period`, until the Watch is destroyed. (A `first` sooner than the
  // thread's next wake-up costs a wake-up of it.) The check runs with
  // the watchdog's lock held: it must be short and must not start or end
  // watches. Once a Watch's destructor returns, its check is not running
  // and never runs again.
  class Watch {
   public:
    Watch() = default;
    Watch(Watch &&other) noexcept;
    Watch &operator=(Watch &&other) noexcept;
    Watch(const Watch &) = delete;
    Watch &operator=(const Watch &) = delete;
    ~Watch();

   private:
    friend class Watchdog;
    Watch(std::shared_ptr<Service> service, std::uint64_t id);
    void end() noexcept;
    std::shared_ptr<Service> service_;
    std::uint64_t id_ = 0;
  };

  static Watch watch(std::chrono::nanoseconds period, std::chrono::nanoseconds first, Check check);

  // Whether the watchdog thread is running (tests).
  static bool threadRunning();

 private:
  static const std::shared_ptr<Service> &service();
};

}  // namespace mrt::detail
