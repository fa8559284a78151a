// mrt::detail::AdaptiveSpin: how long a thread waiting for another one polls
// before it parks (issue 14, "no collapse under oversubscription"). Used by
// every wait between the caller's and the device's threads: the queues'
// rings (both sides), a request's Completion and a replica's device thread
// waiting for work.
//
// Polling pays only while the thread that will answer runs on another CPU
// and answers soon: a poll then sees the answer one cache-line transfer
// after it is written, where parking costs a futex sleep and a wake-up of
// several microseconds. Polling is pure loss when the two threads share a
// CPU (the partner cannot run until the poller gives the CPU up), when the
// partner is itself parked, or when it was preempted by another process. So
// AdaptiveSpin::spin():
//   * never polls on a thread that may run on one CPU only (taskset -c 0,
//     a cgroup of one CPU): it parks at once. (Yielding the CPU to the
//     partner instead was measured too: sched_yield puts the caller behind
//     every other runnable task on that CPU, so beside a busy process each
//     hand-off cost a whole time slice, milliseconds.);
//   * polls only while the caller's `partner_running` says the thread that
//     will answer is running (for example: not parked itself);
//   * polls for at most a time budget that follows how recent waits ended:
//     doubled, up to kMaxBudget, when the answer came while polling; halved,
//     down to kMinBudget, when the waiter had to park anyway or was
//     preempted while polling (threads outnumber CPUs). Beside a busy
//     process the budget falls to a short poll within a few requests; on an
//     idle machine it climbs back as soon as polls succeed again.
// Parking itself stays with each wait (a futex word and a "parked" flag,
// so that a waker makes the wake syscall only when someone is parked).
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

#include "common/futex.hpp"

namespace mrt::detail {

// The number of CPUs the calling thread may run on. Cached per thread and
// refreshed every 100 ms, since a process may be moved (taskset -p).
unsigned allowedCpus() noexcept;

class AdaptiveSpin {
 public:
  static constexpr std::chrono::nanoseconds kMinBudget{500};
  static constexpr std::chrono::nanoseconds kInitialBudget{8'000};
  // About a short request's device time (an mlp batch-1 run is ~15 us).
  static constexpr std::chrono::nanoseconds kMaxBudget{32'000};

  // Polls ready() until it is true, or until polling stops paying (see
  // above); true if ready() was. partner_running() is asked between polls;
  // once false, the wait ends at once. Both are called on this thread.
  // May be called from several threads at once (the budget is shared).
  template <typename Ready, typename PartnerRunning>
  bool spin(Ready &&ready, PartnerRunning &&partner_running) {
    if (ready()) return true;
    if (allowedCpus() < 2 || !partner_running()) return false;
    const std::int64_t budget = budget_ns_.load(std::memory_order_relaxed);
    const auto start = Clock::now();
    auto last_check = start;
    bool preempted = false;
    for (std::uint32_t polls = 1;; ++polls) {
      // Plain polls notice a change the soonest; past the first microsecond
      // or so the pause hint frees the core's pipeline for a sibling thread.
      if (polls > kPlainPolls) cpuRelax();
      if (ready()) {
        // An answer that came only after the scheduler took the CPU from us
        // means threads outnumber CPUs: polling took the time of a thread
        // that had work, so it did not pay.
        adapt(budget, !preempted);
        return true;
      }
      if (polls % kPollsPerCheck != 0) continue;
      if (!partner_running()) return ready();  // not the budget's fault: keep it
      const auto now = Clock::now();
      preempted |= now - last_check >= kPreemptionGap;
      last_check = now;
      if (now - start >= std::chrono::nanoseconds(budget)) break;
    }
    adapt(budget, false);
    return ready();
  }

  template <typename Ready>
  bool spin(Ready &&ready) {
    return spin(ready, [] { return true; });
  }

  // The current budget (for tests and getState()).
  std::chrono::nanoseconds budget() const noexcept {
    return std::chrono::nanoseconds(budget_ns_.load(std::memory_order_relaxed));
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint32_t kPlainPolls = 1024;
  // Reading the clock (~20 ns) and the partner's state every poll would
  // slow the polls that matter: the first few hundred nanoseconds.
  static constexpr std::uint32_t kPollsPerCheck = 64;

  // Far longer than kPollsPerCheck polls take: the thread was not running.
  static constexpr std::chrono::nanoseconds kPreemptionGap{50'000};

  void adapt(std::int64_t budget, bool polling_paid) noexcept {
    const std::int64_t next = polling_paid ? std::min<std::int64_t>(2 * budget, kMaxBudget.count())
                                           : std::max<std::int64_t>(budget / 2, kMinBudget.count());
    budget_ns_.store(next, std::memory_order_relaxed);
  }

  // relaxed: a heuristic; a lost update between two waiters is harmless.
  std::atomic<std::int64_t> budget_ns_{kInitialBudget.count()};
};

// Published by a thread that others wait for: true while it works (it may
// answer soon), false while it is parked or gone. Waiters pass it to
// AdaptiveSpin::spin as partner_running.
class RunningFlag {
 public:
  // relaxed: only a hint for how long to poll; the waits' correctness rests
  // on their own futex handshakes.
  void set(bool running) noexcept { running_.store(running, std::memory_order_relaxed); }
  bool operator()() const noexcept { return running_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> running_{false};
};

}  // namespace mrt::detail
