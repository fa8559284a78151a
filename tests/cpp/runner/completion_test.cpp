#include "runner/completion.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

using namespace std::chrono_literals;
using mrt::Completion;
using mrt::ErrorCode;

TEST(Completion, FirstCompletionWinsAndLaterOnesChangeNothing) {
  Completion c;
  EXPECT_FALSE(c.isReady());
  EXPECT_TRUE(c.complete(ErrorCode::DeviceError, "replica 0: IPU_RESET needed"));
  EXPECT_FALSE(c.complete(ErrorCode::Ok));
  EXPECT_FALSE(c.complete(ErrorCode::Cancelled, "late"));
  ASSERT_TRUE(c.isReady());
  EXPECT_EQ(c.code(), ErrorCode::DeviceError);
  EXPECT_EQ(c.message(), "replica 0: IPU_RESET needed");
}

TEST(Completion, KeepsTheRecoveryActionOfADeviceError) {
  Completion ok, failed;
  ok.complete(ErrorCode::Ok);
  EXPECT_EQ(ok.recoveryAction(), mrt::RecoveryAction::None);
  failed.complete(ErrorCode::DeviceError, "replica 0: EXCHANGE_ERROR", mrt::RecoveryAction::PartitionReset);
  EXPECT_EQ(failed.recoveryAction(), mrt::RecoveryAction::PartitionReset);
}

TEST(Completion, OutcomeOfAPendingRequestIsAFailedPrecondition) {
  Completion c;
  try {
    (void)c.code();
    FAIL() << "code() of a pending request did not throw";
  } catch (const mrt::Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::FailedPrecondition);
    EXPECT_STREQ(e.what(), "the request is still running: its status is not known yet");
  }
  EXPECT_THROW((void)c.message(), mrt::Error);
}

TEST(Completion, WaitTimesOutWhilePendingAfterAtLeastTheTimeout) {
  Completion c;
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(c.wait(20ms));
  EXPECT_GE(std::chrono::steady_clock::now() - start, 20ms);
  EXPECT_FALSE(c.wait(0ns));
}

TEST(Completion, WaitReturnsAtOnceWhenDone) {
  Completion c;
  c.complete(ErrorCode::Ok);
  EXPECT_TRUE(c.wait(0ns));
  EXPECT_TRUE(c.wait(-1ns));
}

TEST(Completion, ParkedWaitersWakeWhenAnotherThreadCompletes) {
  Completion c;
  std::atomic<int> woken{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&, i] {
      bool done = i % 2 ? c.wait(-1ns) : c.wait(std::chrono::nanoseconds(30s));
      if (done && c.code() == ErrorCode::Ok && c.message() == "done") ++woken;
    });
  }
  std::this_thread::sleep_for(50ms);  // let them park
  c.complete(ErrorCode::Ok, "done");
  for (auto &t : waiters) t.join();
  EXPECT_EQ(woken.load(), 4);
}

// A completer whose thread is running or not, and which counts the waiters
// that asked to serve (and, with serves_, completes them as a replica's
// device would).
class TestCompleter final : public mrt::Completer {
 public:
  explicit TestCompleter(bool serves = false) : serves_(serves) {}
  bool running() const noexcept override { return running_(); }
  void serveWaiter(const Completion &completion) override {
    ++asked_;
    if (serves_) const_cast<Completion &>(completion).complete(ErrorCode::Ok, "served by its waiter");
  }
  mrt::detail::RunningFlag running_;  // starts not running
  std::atomic<int> asked_{0};

 private:
  const bool serves_;
};

TEST(Completion, WaitersOfACompleterThatIsNotRunningParkAtOnceAndStillWake) {
  auto completer = std::make_shared<TestCompleter>();
  Completion c(completer);
  std::atomic<bool> done{false};
  std::thread waiter([&] { done = c.wait(-1ns) && c.message() == "woken"; });
  std::this_thread::sleep_for(20ms);
  completer->running_.set(true);  // as a device thread does when it wakes
  c.complete(ErrorCode::Ok, "woken");
  waiter.join();
  EXPECT_TRUE(done.load());
  EXPECT_EQ(completer->asked_.load(), 1);  // asked once, before parking
}

TEST(Completion, OnlyAWaitWithoutABoundAsksTheCompleterToServe) {
  auto completer = std::make_shared<TestCompleter>(true);
  Completion polled(completer), bounded(completer), unbounded(completer);
  EXPECT_FALSE(polled.wait(0ns));
  EXPECT_FALSE(bounded.wait(1ms));
  EXPECT_EQ(completer->asked_.load(), 0);
  ASSERT_TRUE(unbounded.wait(-1ns));
  EXPECT_EQ(completer->asked_.load(), 1);
  EXPECT_EQ(unbounded.code(), ErrorCode::Ok);
  EXPECT_EQ(unbounded.message(), "served by its waiter");
  // A request already done asks nothing.
  EXPECT_TRUE(unbounded.wait(-1ns));
  EXPECT_EQ(completer->asked_.load(), 1);
  EXPECT_FALSE(polled.isReady());
  EXPECT_FALSE(bounded.isReady());
}

TEST(Completion, OnReadyRunsInlineWhenDoneAndOnTheCompletingThreadOtherwise) {
  Completion c;
  std::thread::id ranOn;
  ErrorCode seen = ErrorCode::Internal;
  c.onReady([&](ErrorCode code, const std::string &) {
    ranOn = std::this_thread::get_id();
    seen = code;
  });
  std::thread::id completer;
  std::thread t([&] {
    completer = std::this_thread::get_id();
    c.complete(ErrorCode::Cancelled, "runner destroyed");
  });
  t.join();
  EXPECT_EQ(ranOn, completer);
  EXPECT_EQ(seen, ErrorCode::Cancelled);

  int inlineCalls = 0;
  c.onReady([&](ErrorCode code, const std::string &message) {
    EXPECT_EQ(code, ErrorCode::Cancelled);
    EXPECT_EQ(message, "runner destroyed");
    EXPECT_EQ(std::this_thread::get_id(), std::this_thread::get_id());
    ++inlineCalls;
  });
  EXPECT_EQ(inlineCalls, 1);
}

TEST(Completion, EveryCallbackFiresExactlyOnceUnderRacingRegistrationAndCompletion) {
  for (int round = 0; round < 200; ++round) {
    Completion c;
    std::atomic<int> calls{0};
    std::thread registrar([&] {
      for (int i = 0; i < 50; ++i) c.onReady([&](ErrorCode, const std::string &) { ++calls; });
    });
    std::thread completer1([&] { c.complete(ErrorCode::Ok); });
    std::thread completer2([&] { c.complete(ErrorCode::DeviceError, "x"); });
    registrar.join();
    completer1.join();
    completer2.join();
    EXPECT_EQ(calls.load(), 50);
  }
}

TEST(Completion, AThrowingCallbackDoesNotStopTheOthers) {
  Completion c;
  int after = 0;
  c.onReady([](ErrorCode, const std::string &) { throw std::runtime_error("user bug"); });
  c.onReady([&](ErrorCode, const std::string &) { ++after; });
  EXPECT_TRUE(c.complete(ErrorCode::Ok));
  EXPECT_EQ(after, 1);
}
