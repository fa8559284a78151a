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

TEST(ParallelGate, TimesThreeRunsInlineThenTriesThePoolAndKeepsItOnlyIfFaster) {
  ParallelGate gate;
  const std::uint64_t wake = ParallelGate::kMinWakeNs;
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
  const std::uint64_t wake = ParallelGate::kMinWakeNs;
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
  EXPECT_EQ(gate.mode(2), Mode::Inline);
}

TEST(ParallelGate, ThePoolIsDroppedWhenItsTrialsWereSlower) {
  ParallelGate gate;
  const std::uint64_t wake = ParallelGate::kMinWakeNs;
  for (std::uint32_t i = 0; i < ParallelGate::kSamples; ++i) gate.recordInline(4 * wake);
  // Waking the pool cost more than half the work saved: every trial slower.
  for (std::uint32_t i = 0; i < ParallelGate::kMinTrials; ++i) gate.recordParallel(4 * wake + 1);
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
  EXPECT_EQ(gate.mode(4), Mode::Parallel);
}

}  // namespace
