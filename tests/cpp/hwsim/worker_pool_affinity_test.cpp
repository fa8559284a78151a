// The process-wide worker pool is sized by the CPUs the process may use: a
// process confined to one CPU gets no pool threads, so its compute sets run
// inline on the caller instead of taking turns with helpers on that CPU. Its
// own binary: the pool is created once per process, at first use.
#include <sched.h>

#include <atomic>

#include <gtest/gtest.h>

#include "worker_pool.hpp"

namespace {

TEST(WorkerPool, OneAllowedCpuMeansNoPoolThreadsAndEveryChunkStillRuns) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  int first = 0;
  while (!CPU_ISSET(first, &allowed)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);

  auto &pool = hwsim::detail::WorkerPool::instance();
  EXPECT_EQ(pool.capacity(), 0u);
  std::atomic<int> sum{0};
  pool.parallelFor(10, [&](std::size_t i) { sum += static_cast<int>(i); });
  EXPECT_EQ(sum.load(), 45);
}

}  // namespace
