// The worker pool: how many threads a job may use, threads started only by
// the first job that needs them, several submitters with different limits
// at once, which end of a job each side takes, no help while every CPU runs
// a program; and the gate that keeps small compute sets off the pool.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "parallel_gate.hpp"
#include "worker_pool.hpp"

namespace {

using hwsim::detail::ParallelGate;
using hwsim::detail::WorkerPool;

// Runs `chunks` chunks with at most `limit` threads and returns the ids of
// the threads that ran them. Each chunk waits (up to 2 s) until as many
// distinct threads as may join have joined, so every thread allowed does.
std::set<std::thread::id> threadsOfJob(WorkerPool &pool, std::size_t chunks, unsigned limit) {
  const std::size_t allowed = std::min(limit, pool.capacity() + 1);
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<std::size_t> ran{0};
  pool.parallelFor(
      chunks,
      [&](std::size_t) {
        {
          std::lock_guard lock(m);
          ids.insert(std::this_thread::get_id());
        }
        ++ran;
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        for (;;) {
          {
            std::lock_guard lock(m);
            if (ids.size() >= allowed) break;
          }
          if (std::chrono::steady_clock::now() > until) break;
          std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
      },
      limit);
  EXPECT_EQ(ran.load(), chunks);
  return ids;
}

TEST(WorkerPool, ThreadsStartAtTheFirstJobThatMayUseThem) {
  WorkerPool pool(3);
  EXPECT_EQ(pool.capacity(), 3u);
  EXPECT_EQ(pool.startedThreads(), 0u);
  int one = 0;
  pool.parallelFor(1, [&](std::size_t) { ++one; });
  EXPECT_EQ(one, 1);
  EXPECT_EQ(pool.startedThreads(), 0u);  // one chunk runs on the caller
  EXPECT_EQ(threadsOfJob(pool, 8, 1), std::set<std::thread::id>{std::this_thread::get_id()});
  EXPECT_EQ(pool.startedThreads(), 0u);  // a limit of 1 is the caller alone
  EXPECT_EQ(threadsOfJob(pool, 8, 2).size(), 2u);
  EXPECT_EQ(pool.startedThreads(), 3u);
}

TEST(WorkerPool, AJobUsesAtMostItsLimitOfThreadsCallerIncluded) {
  WorkerPool pool(3);
  for (unsigned limit : {2u, 3u, 4u}) {
    const auto ids = threadsOfJob(pool, 32, limit);
    EXPECT_EQ(ids.size(), limit) << "limit " << limit;
    EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);
  }
  // More than the pool has: the caller and every pool thread.
  EXPECT_EQ(threadsOfJob(pool, 32, 10).size(), 4u);
}

TEST(WorkerPool, ConcurrentJobsWithDifferentLimitsEachKeepTheirs) {
  WorkerPool pool(3);
  std::vector<std::set<std::thread::id>> seen(4);
  std::vector<std::thread> submitters;
  for (unsigned s = 0; s < seen.size(); ++s) {
    submitters.emplace_back([&, s] {
      for (int round = 0; round < 20; ++round) {
        std::mutex m;
        std::set<std::thread::id> ids;
        pool.parallelFor(
            16,
            [&](std::size_t) {
              std::lock_guard lock(m);
              ids.insert(std::this_thread::get_id());
            },
            1 + s % 2);
        EXPECT_LE(ids.size(), 1 + s % 2);
      }
    });
  }
  for (auto &t : submitters) t.join();
}

TEST(WorkerPool, AChunksExceptionReachesTheCallerAfterEveryChunkRan) {
  WorkerPool pool(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.parallelFor(16,
                                [&](std::size_t i) {
                                  ++ran;
                                  if (i == 5) throw std::runtime_error("chunk 5");
                                }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 16);
}

// Each side keeps to its end of a job's chunks: every chunk waits (up to
// 2 s) until two have started, so the caller's first chunk (0, from the
// front) waits for the pool thread's first, which must be the last (from the
// back). Several rounds: the later jobs reach a pool thread still polling
// after the job before.
TEST(WorkerPool, TheCallerRunsChunksFromTheFrontAndPoolThreadsFromTheBack) {
  WorkerPool pool(1);
  for (int round = 0; round < 5; ++round) {
    std::mutex m;
    std::vector<std::pair<std::thread::id, std::size_t>> firsts;  // each thread's first chunk
    std::atomic<int> started{0};
    pool.parallelFor(3, [&](std::size_t i) {
      {
        std::lock_guard lock(m);
        const auto me = std::this_thread::get_id();
        if (std::none_of(firsts.begin(), firsts.end(), [&](const auto &f) { return f.first == me; })) firsts.push_back({me, i});
      }
      ++started;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (started < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    });
    ASSERT_EQ(firsts.size(), 2u) << "round " << round;
    for (const auto &[thread, chunk] : firsts) {
      EXPECT_EQ(chunk, thread == std::this_thread::get_id() ? 0u : 2u) << "round " << round;
    }
  }
}

// While every CPU the pool may use (its threads and the caller) runs a
// program, a job's chunks all run on its caller.
TEST(WorkerPool, WhenEveryCpuRunsAProgramTheCallerRunsEveryChunk) {
  WorkerPool pool(3);
  {
    std::vector<std::unique_ptr<WorkerPool::RunScope>> running;
    for (int i = 0; i < 4; ++i) running.push_back(std::make_unique<WorkerPool::RunScope>(pool));
    EXPECT_EQ(threadsOfJob(pool, 8, 4), std::set<std::thread::id>{std::this_thread::get_id()});
    running.pop_back();  // three programs on four CPUs: the pool helps again
    EXPECT_EQ(threadsOfJob(pool, 8, 4).size(), 4u);
  }
  EXPECT_EQ(threadsOfJob(pool, 8, 4).size(), 4u);
}

using Mode = ParallelGate::Mode;

// Runs a gate through one comparison of cycles (steps 3 and 4), starting at
// wall time `now`, with a clock that a run on the pool moves by poolCycle
// and an inline one by inlineCycle. Returns how
// many runs went inline, and the blocks' lengths in runs through `blocks`;
// `now` is left at the start of the run that found the verdict.
std::uint32_t runComparison(ParallelGate &gate, std::uint64_t &now, std::uint64_t poolCycle,
                            std::uint64_t inlineCycle, std::vector<std::uint32_t> &blocks) {
  std::uint32_t inlineRuns = 0;
  bool last = true;
  blocks.assign(1, 0);
  for (int run = 0; run < 10000; ++run) {
    const bool onPool = gate.startCycle(now);
    if (onPool != last) blocks.push_back(0);
    ++blocks.back();
    last = onPool;
    if (!onPool) ++inlineRuns;
    if (gate.mode(2) != Mode::CompareCycles) break;  // this run found the verdict
    now += onPool ? poolCycle : inlineCycle;
  }
  return inlineRuns;
}

// The same after three inline runs of 10 wakes and trials of 6: a saving
// small enough for the cycles to decide.
std::uint32_t compareAfterTrials(ParallelGate &gate, std::uint64_t &now, std::uint64_t poolCycle,
                                 std::uint64_t inlineCycle, std::vector<std::uint32_t> &blocks) {
  const std::uint64_t wake = ParallelGate::kMinWakeNs;
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) gate.recordInline(10 * wake);
  while (gate.mode(2) == Mode::TryParallel) gate.recordParallel(6 * wake);
  EXPECT_EQ(gate.mode(2), Mode::CompareCycles);
  return runComparison(gate, now, poolCycle, inlineCycle, blocks);
}

TEST(ParallelGate, TimesThreeRunsInlineThenTriesThePoolAndKeepsItOnlyIfFaster) {
  ParallelGate gate;
  // Saving 4 of these is past any cost a polling thread has outside the
  // compute set: no cycles compared.
  const std::uint64_t wake = ParallelGate::kCompareBelowNs;
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) {
    EXPECT_EQ(gate.mode(2), Mode::TimeInline);
    gate.recordInline(10 * wake);
  }
  EXPECT_EQ(gate.mode(1), Mode::Inline);
  for (std::uint32_t i = 0; i < ParallelGate::kMinTrials; ++i) {
    EXPECT_EQ(gate.mode(2), Mode::TryParallel);
    gate.recordParallel(6 * wake);
  }
  EXPECT_EQ(gate.mode(2), Mode::Parallel);
  EXPECT_EQ(gate.mode(1), Mode::Inline);
}

TEST(ParallelGate, TrialsGoOnWhileThePoolKeepsGettingFaster) {
  ParallelGate gate;
  const std::uint64_t wake = ParallelGate::kCompareBelowNs;
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) gate.recordInline(10 * wake);
  // A pool thread's first runs of a compute set: slower than inline, each a
  // little faster than the one before, past the minimum of trials.
  std::uint32_t trials = 0;
  for (; trials < ParallelGate::kMinTrials + 2; ++trials) {
    ASSERT_EQ(gate.mode(2), Mode::TryParallel) << trials;
    gate.recordParallel((30 - trials) * wake);
  }
  // Then warm: kSamples runs in a row that do not beat the fastest end them.
  gate.recordParallel(6 * wake);
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) {
    ASSERT_EQ(gate.mode(2), Mode::TryParallel) << i;
    gate.recordParallel(7 * wake);
  }
  EXPECT_EQ(gate.mode(2), Mode::Parallel);
}

TEST(ParallelGate, TrialsEndAfterTheirMaximum) {
  ParallelGate gate;
  const std::uint64_t wake = ParallelGate::kMinWakeNs;
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) gate.recordInline(10 * wake);
  // Each trial a little faster, never faster than inline.
  for (std::uint32_t i = 0; i < ParallelGate::kMaxTrials; ++i) {
    ASSERT_EQ(gate.mode(2), Mode::TryParallel) << i;
    gate.recordParallel((40 - i) * wake);
  }
  EXPECT_EQ(gate.mode(2), Mode::CompareCycles);  // then the cycles decide
}

TEST(ParallelGate, ThePoolIsDroppedWhenItsTrialsWereSlower) {
  ParallelGate gate;
  const std::uint64_t wake = ParallelGate::kMinWakeNs;
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) gate.recordInline(4 * wake);
  // Waking the pool cost more than half the work saved: every trial slower.
  for (std::uint32_t i = 0; i < ParallelGate::kMinTrials; ++i) gate.recordParallel(4 * wake + 1);
  // Trials in a busy spell may mislead, so the cycles decide; whole cycles
  // slower on the pool too keep it inline.
  ASSERT_EQ(gate.mode(2), Mode::CompareCycles);
  std::uint64_t now = hwsim::detail::wallNs();
  std::vector<std::uint32_t> blocks;
  runComparison(gate, now, 7 * wake, 6 * wake, blocks);
  EXPECT_EQ(gate.mode(2), Mode::Inline);
}

TEST(ParallelGate, TheFastestRunsDecide) {
  ParallelGate gate;
  const std::uint64_t wake = ParallelGate::kMinWakeNs;
  gate.recordInline(50 * wake);  // e.g. a first run paying for page faults
  gate.recordInline(wake * 3 / 2);
  gate.recordInline(50 * wake);
  // 1.5 wakes: two threads save 0.75 of one, less than the cheapest wake
  // costs, so the pool is not even tried; four save 1.125.
  EXPECT_EQ(gate.mode(2), Mode::Inline);
  EXPECT_EQ(gate.mode(4), Mode::TryParallel);
  gate.recordParallel(40 * wake);  // e.g. the pool's threads starting
  gate.recordParallel(wake);
  while (gate.mode(4) == Mode::TryParallel) gate.recordParallel(40 * wake);
  EXPECT_EQ(gate.mode(4), Mode::CompareCycles);  // half a wake saved
}

TEST(ParallelGate, ASmallSavingKeepsThePoolOnlyIfWholeCyclesAreFaster) {
  std::vector<std::uint32_t> blocks;
  {
    ParallelGate gate;
    std::uint64_t now = hwsim::detail::wallNs();
    compareAfterTrials(gate, now, 5000, 7000, blocks);
    EXPECT_EQ(gate.mode(2), Mode::Parallel);
    EXPECT_TRUE(gate.startCycle(now));  // the verdict holds
  }
  {
    // The compute set ran faster on the pool (its trials), but the rest of
    // each request ran slower beside the polling thread.
    ParallelGate gate;
    std::uint64_t now = hwsim::detail::wallNs();
    compareAfterTrials(gate, now, 7500, 7000, blocks);
    EXPECT_EQ(gate.mode(2), Mode::Inline);
    EXPECT_FALSE(gate.startCycle(now));
  }
}

TEST(ParallelGate, CyclesAlternatePoolAndInlineBlocksAndInlineWaitsOutThePoll) {
  ParallelGate gate;
  std::vector<std::uint32_t> blocks;
  const std::uint64_t cycle = 5000;
  std::uint64_t now = hwsim::detail::wallNs();
  const std::uint32_t inlineRuns = compareAfterTrials(gate, now, cycle, cycle, blocks);
  // Pool, inline, pool, inline; the run that found the verdict (equal
  // cycles: inline) ends the last inline block.
  ASSERT_EQ(blocks.size(), 2 * ParallelGate::kRounds);
  const std::uint32_t pollRuns = static_cast<std::uint32_t>(WorkerPool::kSpinNs / cycle);
  for (std::uint32_t r = 0; r < ParallelGate::kRounds; ++r) {
    const std::uint32_t verdictRun = r + 1 == ParallelGate::kRounds ? 1 : 0;
    EXPECT_EQ(blocks[2 * r], ParallelGate::kWarmRuns + ParallelGate::kCycleRuns) << r;
    EXPECT_EQ(blocks[2 * r + 1], pollRuns + ParallelGate::kCycleRuns + verdictRun) << r;
  }
  EXPECT_EQ(inlineRuns, ParallelGate::kRounds * (pollRuns + ParallelGate::kCycleRuns) + 1);
  EXPECT_EQ(gate.mode(2), Mode::Inline);
}

TEST(ParallelGate, VerdictsAreRecheckedAfterPeriodsThatDoubleWhileTheyHold) {
  ParallelGate gate;
  std::vector<std::uint32_t> blocks;
  std::uint64_t now = hwsim::detail::wallNs();
  compareAfterTrials(gate, now, 7000, 5000, blocks);  // e.g. a busy spell of the pool's CPU
  ASSERT_EQ(gate.mode(2), Mode::Inline);
  // Rechecked kFirstRecheckNs after the verdict, not before.
  const std::uint64_t first = ParallelGate::kFirstRecheckNs;
  EXPECT_FALSE(gate.startCycle(now + first - 1));
  EXPECT_EQ(gate.mode(2), Mode::Inline);
  now += first;
  runComparison(gate, now, 7000, 5000, blocks);  // the same verdict
  ASSERT_EQ(gate.mode(2), Mode::Inline);
  EXPECT_FALSE(gate.startCycle(now + 2 * first - 1));  // twice as long now
  EXPECT_EQ(gate.mode(2), Mode::Inline);
  now += 2 * first;
  runComparison(gate, now, 5000, 7000, blocks);  // the spell is over: the pool wins
  ASSERT_EQ(gate.mode(2), Mode::Parallel);
  EXPECT_TRUE(gate.startCycle(now + first - 1));  // a changed verdict: the first period again
  EXPECT_EQ(gate.mode(2), Mode::Parallel);
  now += first;
  EXPECT_TRUE(gate.startCycle(now));  // a recheck starts on the pool
  EXPECT_EQ(gate.mode(2), Mode::CompareCycles);
}

TEST(ParallelGate, ABigSavingNeedsNoCycles) {
  ParallelGate gate;
  const std::uint64_t saving = ParallelGate::kCompareBelowNs;
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) gate.recordInline(3 * saving);
  while (gate.mode(2) == Mode::TryParallel) gate.recordParallel(2 * saving);
  EXPECT_EQ(gate.mode(2), Mode::Parallel);
  // Just under it, they decide.
  ParallelGate close;
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) close.recordInline(3 * saving);
  while (close.mode(2) == Mode::TryParallel) close.recordParallel(2 * saving + 1);
  EXPECT_EQ(close.mode(2), Mode::CompareCycles);
}

}  // namespace
