// What packing requests along a dimension other than 0 costs the queues.
// One model transfer of 64 samples x 4 KiB (256 KiB), filled from requests
// of `samples` samples each through an InputQueue (this thread plays
// producer and device), three ways on the same bytes:
//   Dim0     F32[64, 4, 256] batched along dimension 0: one memcpy per
//            request piece (ModelRunner's batching_dim 0);
//   Dim1     F32[4, 64, 256] batched along dimension 1 (time-major): one
//            memcpy per row (4) per piece (batching_dim 1);
//   Memcpy   the baseline: one memcpy of the whole 256 KiB.
// Compare Dim1 / Dim0 and each / Memcpy at the same `samples`.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "queue/input_queue.hpp"

namespace {

using namespace mrt;

constexpr std::int64_t kSamples = 64, kRows = 4, kRowFloats = 256;
constexpr std::int64_t kTransferBytes = kSamples * kRows * kRowFloats * 4;

void fillFromRequests(benchmark::State &state, const popef::TensorInfo &info, unsigned batching_dim) {
  const std::int64_t samples = state.range(0);
  const std::int64_t requests = kSamples / samples;
  const std::int64_t request_bytes = kTransferBytes / requests;
  InputQueue queue(std::make_shared<InputRingBuffer>(static_cast<std::size_t>(requests), "x"), info, batching_dim);
  std::vector<std::vector<std::uint8_t>> inputs(static_cast<std::size_t>(requests),
                                                std::vector<std::uint8_t>(static_cast<std::size_t>(request_bytes), 1));
  std::vector<std::uint8_t> device(static_cast<std::size_t>(kTransferBytes));
  for (auto _ : state) {
    for (const auto &input : inputs) queue.enqueue(input.data(), request_bytes);
    queue.fillDeviceBuffer(device.data());
    benchmark::DoNotOptimize(device.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * kTransferBytes);
}

void BM_Dim0(benchmark::State &state) {
  fillFromRequests(state, popef::TensorInfo(popef::DataType::F32, {kSamples, kRows, kRowFloats}), 0);
}

void BM_Dim1(benchmark::State &state) {
  fillFromRequests(state, popef::TensorInfo(popef::DataType::F32, {kRows, kSamples, kRowFloats}), 1);
}

void BM_Memcpy(benchmark::State &state) {
  std::vector<std::uint8_t> src(static_cast<std::size_t>(kTransferBytes), 1), dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * kTransferBytes);
}

BENCHMARK(BM_Dim0)->Arg(1)->Arg(8)->Arg(64)->MinTime(0.1);
BENCHMARK(BM_Dim1)->Arg(1)->Arg(8)->Arg(64)->MinTime(0.1);
BENCHMARK(BM_Memcpy)->MinTime(0.1);

}  // namespace

BENCHMARK_MAIN();
