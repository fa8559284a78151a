// Parking primitives for the waits between threads: a Linux futex on a 32-bit atomic
// word, and the CPU's spin-wait hint (see common/adaptive_spin.hpp for when to use which).
//
// A futex lets a thread sleep in the kernel until another thread changes a
// word and wakes it; FUTEX_WAIT only sleeps if the word still holds the
// expected value, which closes the race between "I decided to sleep" and
// "someone woke me". The *_PRIVATE variants skip the cross-process lookup.
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ctime>

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mrt::detail {

static_assert(sizeof(std::atomic<std::uint32_t>) == sizeof(std::uint32_t) &&
                  std::atomic<std::uint32_t>::is_always_lock_free,
              "the futex word must be a plain lock-free 32-bit integer");

// Sleeps while `word` holds `expected`, for at most `timeout` (nullopt-like:
// a negative timeout means no limit). Returns on a wake, a timeout, a signal or
// immediately if the word already differs; callers re-check their condition.
inline void futexWait(std::atomic<std::uint32_t> &word, std::uint32_t expected,
                      std::chrono::nanoseconds timeout = std::chrono::nanoseconds(-1)) noexcept {
  timespec relative{};
  timespec *relative_ptr = nullptr;
  if (timeout.count() >= 0) {
    relative.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
    relative.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
    relative_ptr = &relative;  // FUTEX_WAIT takes a relative CLOCK_MONOTONIC timeout
  }
  // EAGAIN (word changed), ETIMEDOUT and EINTR are all "go and re-check".
  syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&word), FUTEX_WAIT_PRIVATE, expected,
          relative_ptr, nullptr, 0);
}

// Wakes up to `count` threads sleeping on `word`.
inline void futexWake(std::atomic<std::uint32_t> &word, int count = INT_MAX) noexcept {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t *>(&word), FUTEX_WAKE_PRIVATE, count,
          nullptr, nullptr, 0);
}

// The spin-wait hint: tells the core we are polling, so it saves power, yields
// pipeline resources to a sibling hyper-thread and avoids the memory-order
// machine clear when the polled line finally changes.
inline void cpuRelax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

}  // namespace mrt::detail
