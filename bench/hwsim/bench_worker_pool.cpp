// Where handing a compute set to hwsim's worker pool starts to pay
// (parallel_gate.hpp's kMinParallelNs): the same work (8 chunks of a
// dependent arithmetic chain, arg = the whole job's inline time in
// microseconds on this machine) run inline and through the process-wide pool.
// The crossover is where BM_PoolParallelFor's real time drops below
// BM_PoolInline's; pinned (taskset -c 0) the pool has no threads and both run
// inline.
#include <chrono>
#include <cstdint>

#include <benchmark/benchmark.h>

#include "worker_pool.hpp"

namespace {

constexpr std::size_t kChunks = 8;

// Iterations of spin() per microsecond, measured once.
double itersPerUs() {
  static const double rate = [] {
    volatile std::uint64_t x = 1;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 20000000; ++i) x = x * 6364136223846793005ULL + 1;
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    return 20000000 / us;
  }();
  return rate;
}

void spin(std::uint64_t iters) {
  volatile std::uint64_t x = 1;
  for (std::uint64_t i = 0; i < iters; ++i) x = x * 6364136223846793005ULL + 1;
}

std::uint64_t chunkIters(const benchmark::State &state) {
  return static_cast<std::uint64_t>(static_cast<double>(state.range(0)) * itersPerUs() / kChunks);
}

void BM_PoolInline(benchmark::State &state) {
  const auto iters = chunkIters(state);
  for (auto _ : state) {
    for (std::size_t c = 0; c < kChunks; ++c) spin(iters);
  }
}

void BM_PoolParallelFor(benchmark::State &state) {
  const auto iters = chunkIters(state);
  auto &pool = hwsim::detail::WorkerPool::instance();
  for (auto _ : state) pool.parallelFor(kChunks, [&](std::size_t) { spin(iters); });
}

BENCHMARK(BM_PoolInline)->Arg(2)->Arg(4)->Arg(10)->Arg(25)->Arg(50)->Arg(100)->Arg(200)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PoolParallelFor)->Arg(2)->Arg(4)->Arg(10)->Arg(25)->Arg(50)->Arg(100)->Arg(200)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
BENCHMARK_MAIN();
