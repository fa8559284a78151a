#include "common/adaptive_spin.hpp"

#include <gtest/gtest.h>

#include <sched.h>

#include <chrono>
#include <thread>

using mrt::detail::AdaptiveSpin;
using mrt::detail::allowedCpus;
using mrt::detail::RunningFlag;

namespace {

// Runs `body` on a new thread restricted to the first `cpus` CPUs this
// process may use (a new thread, so that allowedCpus() has no cached
// answer). False if the machine has fewer CPUs than that.
template <typename Body>
bool onCpus(unsigned cpus, Body body) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < static_cast<int>(cpus)) {
    return false;
  }
  cpu_set_t chosen;
  CPU_ZERO(&chosen);
  for (int cpu = 0, taken = 0; cpu < CPU_SETSIZE && taken < static_cast<int>(cpus); ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) CPU_SET(cpu, &chosen), ++taken;
  }
  std::thread thread([&] {
    ASSERT_EQ(sched_setaffinity(0, sizeof(chosen), &chosen), 0);
    body();
  });
  thread.join();
  return true;
}

// ready() that turns true at its `n`th call, counting calls.
struct ReadyAtCall {
  unsigned n;
  unsigned calls = 0;
  bool operator()() { return ++calls >= n; }
};

}  // namespace

TEST(AllowedCpus, CountsTheCpusOfTheCallingThread) {
  EXPECT_TRUE(onCpus(1, [] { EXPECT_EQ(allowedCpus(), 1u); }));
  if (!onCpus(2, [] { EXPECT_EQ(allowedCpus(), 2u); })) GTEST_SKIP() << "one CPU only";
}

TEST(AdaptiveSpin, AnAnswerAlreadyThereNeedsNoPolling) {
  AdaptiveSpin spin;
  ReadyAtCall ready{1};
  EXPECT_TRUE(spin.spin(ready));
  EXPECT_EQ(ready.calls, 1u);
  EXPECT_EQ(spin.budget(), AdaptiveSpin::kInitialBudget);
}

TEST(AdaptiveSpin, NoPollingWhileThePartnerIsNotRunning) {
  AdaptiveSpin spin;
  RunningFlag partner;  // starts not running
  ReadyAtCall ready{1000};
  EXPECT_FALSE(spin.spin(ready, partner));
  EXPECT_EQ(ready.calls, 1u);
  EXPECT_EQ(spin.budget(), AdaptiveSpin::kInitialBudget);
  partner.set(true);
  ReadyAtCall second{2};
  if (allowedCpus() > 1) {
    EXPECT_TRUE(spin.spin(second, partner));  // polled once
    EXPECT_EQ(second.calls, 2u);
  }
}

TEST(AdaptiveSpin, OnOneCpuItNeverPolls) {
  onCpus(1, [] {
    AdaptiveSpin spin;
    ReadyAtCall never{~0u};
    EXPECT_FALSE(spin.spin(never));
    EXPECT_EQ(never.calls, 1u);
    EXPECT_EQ(spin.budget(), AdaptiveSpin::kInitialBudget);
  });
}

TEST(AdaptiveSpin, AnswersWhilePollingDoubleTheBudgetUpToTheMaximum) {
  if (!onCpus(2, [] {
        AdaptiveSpin spin;
        ReadyAtCall third{3};
        EXPECT_TRUE(spin.spin(third));
        EXPECT_EQ(spin.budget(), 2 * AdaptiveSpin::kInitialBudget);
        for (int i = 0; i < 10; ++i) {
          ReadyAtCall ready{3};
          EXPECT_TRUE(spin.spin(ready));
        }
        EXPECT_EQ(spin.budget(), AdaptiveSpin::kMaxBudget);
      })) {
    GTEST_SKIP() << "one CPU only";
  }
}

TEST(AdaptiveSpin, ParkingAnywayHalvesTheBudgetDownToTheMinimum) {
  if (!onCpus(2, [] {
        AdaptiveSpin spin;
        ReadyAtCall never{~0u};
        const auto start = std::chrono::steady_clock::now();
        EXPECT_FALSE(spin.spin(never));
        EXPECT_GE(std::chrono::steady_clock::now() - start, AdaptiveSpin::kInitialBudget);
        EXPECT_GT(never.calls, 2u);
        EXPECT_EQ(spin.budget(), AdaptiveSpin::kInitialBudget / 2);
        for (int i = 0; i < 10; ++i) spin.spin(never);
        EXPECT_EQ(spin.budget(), AdaptiveSpin::kMinBudget);
      })) {
    GTEST_SKIP() << "one CPU only";
  }
}

TEST(AdaptiveSpin, APartnerThatStopsRunningEndsPollingAndKeepsTheBudget) {
  if (!onCpus(2, [] {
        AdaptiveSpin spin;
        unsigned asked = 0;
        const auto runs_once = [&] { return ++asked == 1; };
        ReadyAtCall never{~0u};
        EXPECT_FALSE(spin.spin(never, runs_once));
        EXPECT_EQ(asked, 2u);  // before polling, then at the first check
        EXPECT_EQ(spin.budget(), AdaptiveSpin::kInitialBudget);
      })) {
    GTEST_SKIP() << "one CPU only";
  }
}
