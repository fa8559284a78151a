// The process-wide watchdog thread (runner/watchdog.hpp): checks run at
// their period on one thread, stop for good when their Watch ends, and the
// thread is reused by later watches, then ends after lingering unused.
#include "runner/watchdog.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>

#include "thread_test_support.hpp"

namespace mrt::detail {
namespace {

using namespace std::chrono_literals;
using test::eventually;

TEST(Watchdog, ChecksRunAtTheirPeriodOnOneThreadUntilTheirWatchEnds) {
  std::atomic<int> fast{0}, slow{0};
  std::atomic<std::thread::id> fastThread{}, slowThread{};
  {
    Watchdog::Watch a = Watchdog::watch(2ms, 2ms, [&](RequestClock::time_point) {
      fastThread = std::this_thread::get_id();
      ++fast;
    });
    Watchdog::Watch b = Watchdog::watch(1h, 1h, [&](RequestClock::time_point) { ++slow; });
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
    Watchdog::Watch first = Watchdog::watch(1ms, 1ms, [&](RequestClock::time_point) { ++calls; });
    kept = std::move(first);
  }
  ASSERT_TRUE(eventually([&] { return calls.load() >= 3; })) << "the moved-from Watch ended the check";
  kept = {};
  const int seen = calls.load();
  std::this_thread::sleep_for(10ms);
  EXPECT_EQ(calls.load(), seen);
}

TEST(Watchdog, AWatchDueSoonerThanTheThreadSleepsWakesItEarly) {
  Watchdog::Watch slow = Watchdog::watch(1h, 1h, [](RequestClock::time_point) {});
  std::atomic<int> calls{0};
  Watchdog::Watch fast = Watchdog::watch(1ms, 1ms, [&](RequestClock::time_point) { ++calls; });
  EXPECT_TRUE(eventually([&] { return calls.load() >= 1; }, 1s)) << "the thread slept on the hour-long period";
}

TEST(Watchdog, TheFirstCheckComesAfterFirstThenEveryPeriod) {
  std::atomic<int> calls{0};
  const auto start = RequestClock::now();
  std::atomic<RequestClock::time_point> firstAt{}, secondAt{};
  Watchdog::Watch w = Watchdog::watch(200ms, 5ms, [&](RequestClock::time_point now) {
    (calls.load() == 0 ? firstAt : secondAt) = now;
    ++calls;  // after the store: the test reads the times once it sees the count
  });
  ASSERT_TRUE(eventually([&] { return calls.load() >= 2; }, 2s));
  EXPECT_GE(firstAt.load() - start, 5ms);
  EXPECT_LT(firstAt.load() - start, 150ms) << "the first check waited for a whole period";
  EXPECT_GE(secondAt.load() - firstAt.load(), 200ms);
}

TEST(Watchdog, TheThreadEndsAfterLingeringUnusedAndStartsAgainForTheNextWatch) {
  {
    Watchdog::Watch w = Watchdog::watch(1ms, 1ms, [](RequestClock::time_point) {});
    EXPECT_TRUE(Watchdog::threadRunning());
  }
  EXPECT_TRUE(Watchdog::threadRunning()) << "the thread should linger for the next runner";
  ASSERT_TRUE(eventually([] { return !Watchdog::threadRunning(); }, Watchdog::kLinger + 3s));
  std::atomic<int> calls{0};
  Watchdog::Watch again = Watchdog::watch(1ms, 1ms, [&](RequestClock::time_point) { ++calls; });
  EXPECT_TRUE(Watchdog::threadRunning());
  EXPECT_TRUE(eventually([&] { return calls.load() >= 1; }));
}

// Waits for a child process for at most `limit`; kills it if it is still
// running then. Its exit code, or -1 if it had to be killed.
int exitCodeWithin(pid_t child, std::chrono::seconds limit) {
  int status = 0;
  const auto end = std::chrono::steady_clock::now() + limit;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(5ms);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
}

// A fork copies no thread: the child's watches get a thread of their own,
// the parent's runners are not the child's to watch, and its exit (static
// destructors included) does not wait for the parent's thread.
TEST(Watchdog, AForkedChildWatchesItsOwnRunnersAndExits) {
#if defined(__SANITIZE_THREAD__) || MRT_CLANG_TSAN
  GTEST_SKIP() << "ThreadSanitizer ends a child that starts a thread after a fork of a multi-threaded process";
#endif
  std::atomic<int> parentChecks{0};
  Watchdog::Watch parentWatch = Watchdog::watch(1ms, 1ms, [&](RequestClock::time_point) { ++parentChecks; });
  ASSERT_TRUE(eventually([&] { return parentChecks.load() >= 1; }));
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const int parentsBefore = parentChecks.load();
    std::atomic<int> checks{0};
    {
      Watchdog::Watch watch = Watchdog::watch(1ms, 1ms, [&](RequestClock::time_point) { ++checks; });
      if (!eventually([&] { return checks.load() >= 3; }, 3s)) std::_Exit(3);
    }
    if (parentChecks.load() != parentsBefore) std::_Exit(4);
    std::exit(0);  // runs the static destructors: ends the lingering thread
  }
  EXPECT_EQ(exitCodeWithin(child, 10s), 0) << "3: the child's watch never ran, 4: the parent's check ran in the child, "
                                              "-1: the child hung";
}

// A runner held by a static object made before the first watch is
// destroyed after the watchdog's own static objects: its shutdown may need
// the watchdog to stop a hung run, so checks still run then.
std::atomic<int> g_lateChecks{0};
std::unique_ptr<Watchdog::Watch> g_lateWatch;

void checksStillRunAtExit() {
  const int before = g_lateChecks.load();
  if (!eventually([&] { return g_lateChecks.load() > before; }, 3s)) std::_Exit(3);
  g_lateWatch.reset();
  std::_Exit(0);
}

TEST(Watchdog, ChecksStillRunWhenStaticObjectsAreDestroyed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::atexit(checksStillRunAtExit);  // registered first: runs after the watchdog's static objects
        g_lateWatch = std::make_unique<Watchdog::Watch>(
            Watchdog::watch(1ms, 1ms, [](RequestClock::time_point) { ++g_lateChecks; }));
        std::exit(1);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace mrt::detail
