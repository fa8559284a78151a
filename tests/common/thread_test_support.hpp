// What the tests of process-wide threads (the watchdog, the cache of device
// threads) share: waiting for a condition another thread makes true, and
// knowing whether ThreadSanitizer runs (it ends a child that starts a
// thread after a fork of a multi-threaded process).
#pragma once

#include <chrono>
#include <thread>

// GCC names ThreadSanitizer with a macro, clang with __has_feature.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MRT_CLANG_TSAN 1
#endif
#endif
#ifndef MRT_CLANG_TSAN
#define MRT_CLANG_TSAN 0
#endif

namespace mrt::test {

// Polls every millisecond until predicate() holds (true) or `limit` has
// passed (false).
template <class Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

}  // namespace mrt::test
