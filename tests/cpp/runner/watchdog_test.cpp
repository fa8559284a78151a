// The process-wide watchdog thread (runner/watchdog.hpp): checks run at
// their period on one thread, stop for good when their Watch ends, and the
// thread is reused by later watches, then ends after lingering unused.
#include "runner/watchdog.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace mrt::detail {
namespace {

using namespace std::chrono_literals;

template <class Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds limit = 5s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(Watchdog, ChecksRunAtTheirPeriodOnOneThreadUntilTheirWatchEnds) {
  std::atomic<int> fast{0}, slow{0};
  std::atomic<std::thread::id> fastThread{}, slowThread{};
  {
    Watchdog::Watch a = Watchdog::watch(2ms, [&](RequestClock::time_point) {
      fastThread = std::this_thread::get_id();
      ++fast;
    });
    Watchdog::Watch b = Watchdog::watch(1h, [&](RequestClock::time_point) { ++slow; });
    ASSERT_TRUE(eventually([&] { return fast.load() >= 5; }));
    EXPECT_EQ(slow.load(), 0);  // not due for an hour
    EXPECT_NE(fastThread.load(), std::this_thread::get_id());
    EXPECT_TRUE(Watchdog::threadRunning());
  }
  const int seen = fast.load();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(fast.load(), seen) << "a check ran after its Watch was destroyed";
}

TEST(Watchdog, AWatchMovedEndsOnceWithItsLastOwner) {
  std::atomic<int> calls{0};
  Watchdog::Watch kept;
  {
    Watchdog::Watch first = Watchdog::watch(1ms, [&](RequestClock::time_point) { ++calls; });
    kept = std::move(first);
  }
  ASSERT_TRUE(eventually([&] { return calls.load() >= 3; })) << "the moved-from Watch ended the check";
  kept = {};
  const int seen = calls.load();
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(calls.load(), seen);
}

TEST(Watchdog, AWatchDueSoonerThanTheThreadSleepsWakesItEarly) {
  Watchdog::Watch slow = Watchdog::watch(1h, [](RequestClock::time_point) {});
  std::atomic<int> calls{0};
  Watchdog::Watch fast = Watchdog::watch(1ms, [&](RequestClock::time_point) { ++calls; });
  EXPECT_TRUE(eventually([&] { return calls.load() >= 1; }, 1s)) << "the thread slept on the hour-long period";
}

TEST(Watchdog, TheThreadEndsAfterLingeringUnusedAndStartsAgainForTheNextWatch) {
  {
    Watchdog::Watch w = Watchdog::watch(1ms, [](RequestClock::time_point) {});
    EXPECT_TRUE(Watchdog::threadRunning());
  }
  EXPECT_TRUE(Watchdog::threadRunning()) << "the thread should linger for the next runner";
  ASSERT_TRUE(eventually([] { return !Watchdog::threadRunning(); }, Watchdog::kLinger + 3s));
  std::atomic<int> calls{0};
  Watchdog::Watch again = Watchdog::watch(1ms, [&](RequestClock::time_point) { ++calls; });
  EXPECT_TRUE(Watchdog::threadRunning());
  EXPECT_TRUE(eventually([&] { return calls.load() >= 1; }));
}

}  // namespace
}  // namespace mrt::detail
