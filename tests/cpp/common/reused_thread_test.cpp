// ReusedThread (common/reused_thread.hpp): a task runs on a thread of its
// own, join() waits for it and for what it captured to be destroyed, the
// thread goes back to a process-wide cache that the next task takes, at
// most kKeptThreads wait, they end after kLinger, at exit, and a forked
// child starts with none.
#include "common/reused_thread.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

#include "thread_test_support.hpp"

namespace mrt::detail {
namespace {

using namespace std::chrono_literals;
using test::eventually;

std::thread::id runAndJoin() {
  std::thread::id ran{};
  ReusedThread thread([&] { ran = std::this_thread::get_id(); });
  thread.join();
  return ran;
}

TEST(ReusedThread, RunsTheTaskOnAnotherThreadAndJoinWaitsForItAndItsCaptures) {
  std::atomic<bool> release{false};
  std::atomic<bool> finished{false};
  auto captured = std::make_shared<int>(7);
  std::weak_ptr<int> watch = captured;
  std::thread::id ran{};
  ReusedThread thread([&, captured = std::move(captured)] {
    ran = std::this_thread::get_id();
    while (!release.load()) std::this_thread::sleep_for(1ms);
    finished = true;
  });
  EXPECT_TRUE(thread.joinable());
  std::this_thread::sleep_for(5ms);
  EXPECT_FALSE(finished.load()) << "the task must still be waiting for its release";
  release = true;
  thread.join();
  EXPECT_TRUE(finished.load());
  EXPECT_FALSE(thread.joinable());
  EXPECT_NE(ran, std::this_thread::get_id());
  EXPECT_TRUE(watch.expired()) << "join() returned before what the task captured was destroyed";
}

TEST(ReusedThread, TheNextTaskTakesTheThreadTheLastOneLeft) {
  const std::thread::id first = runAndJoin();
  EXPECT_GE(ReusedThread::waitingThreads(), 1U);
  EXPECT_EQ(runAndJoin(), first);
  EXPECT_EQ(runAndJoin(), first);
}

TEST(ReusedThread, TasksAtOnceRunOnThreadsOfTheirOwnAndAtMostKKeptThreadsWait) {
  constexpr std::size_t kTasks = ReusedThread::kKeptThreads + 3;
  std::atomic<std::size_t> started{0};
  std::atomic<bool> release{false};
  std::vector<std::thread::id> ids(kTasks);
  std::vector<ReusedThread> threads;
  for (std::size_t i = 0; i < kTasks; ++i) {
    threads.emplace_back([&, i] {
      ids[i] = std::this_thread::get_id();
      ++started;
      while (!release.load()) std::this_thread::sleep_for(1ms);
    });
  }
  ASSERT_TRUE(eventually([&] { return started.load() == kTasks; })) << "the tasks must run side by side";
  release = true;
  for (ReusedThread &thread : threads) thread.join();
  for (std::size_t i = 0; i < kTasks; ++i) {
    for (std::size_t j = i + 1; j < kTasks; ++j) EXPECT_NE(ids[i], ids[j]) << i << " and " << j;
  }
  EXPECT_EQ(ReusedThread::waitingThreads(), ReusedThread::kKeptThreads);
}

TEST(ReusedThread, AWaitingThreadEndsAfterLingering) {
  runAndJoin();
  ASSERT_GE(ReusedThread::waitingThreads(), 1U);
  EXPECT_TRUE(eventually([] { return ReusedThread::waitingThreads() == 0; },
                         std::chrono::duration_cast<std::chrono::milliseconds>(ReusedThread::kLinger) + 3s));
  runAndJoin();  // and the next task gets a thread again (joining the ended ones)
  EXPECT_EQ(ReusedThread::waitingThreads(), 1U);
}

// A fork copies no thread: the child's first task starts a thread of its
// own, and its exit (static destructors included) joins it.
TEST(ReusedThread, AForkedChildStartsWithNoneWaitingAndExits) {
#if defined(__SANITIZE_THREAD__) || MRT_CLANG_TSAN
  GTEST_SKIP() << "ThreadSanitizer ends a child that starts a thread after a fork of a multi-threaded process";
#endif
  runAndJoin();
  ASSERT_GE(ReusedThread::waitingThreads(), 1U);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (ReusedThread::waitingThreads() != 0) std::_Exit(3);
    std::atomic<bool> ran{false};
    ReusedThread thread([&] { ran = true; });
    thread.join();
    if (!ran.load()) std::_Exit(4);
    if (ReusedThread::waitingThreads() != 1) std::_Exit(5);
    std::exit(0);  // runs the static destructors: ends the waiting thread
  }
  int status = 0;
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > end) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      FAIL() << "the child hung";
    }
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: the parent's threads were waiting in the child, 4: the task did not run, "
                                       "5: its thread did not wait for another";
}

}  // namespace
}  // namespace mrt::detail
