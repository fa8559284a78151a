// The example mlp (784-128-10) at batch 1, 16, 64 and 1024: ModelRunner
// execute next to the same math computed natively, one thread, same weights
// (mlp_native.cpp): BM_MlpNative with oneDNN's GEMM, the fastest CPU library
// here (bench_gemm_kernels), BM_MlpNativeEigen with Eigen compiled for this
// machine. Target (issue 14): the runner at most 1.0x the faster native time. The runner's kernels are the level
// hwsim chose at load (MRT_HWSIM_ISA=baseline|v3|v4 forces one). Run pinned
// (taskset -c 0) as well: then the runner's worker threads share the one CPU.
#include "private_devices.hpp"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "internal_example_models.hpp"
#include "mlp_native.hpp"
#include "runner/model_runner.hpp"

namespace {

using namespace mrt;

std::shared_ptr<popef::Model> mlp(std::size_t batch) {
  example_models::ExampleOptions options;
  options.batch = batch;
  return example_models::buildExampleModel("mlp", options);
}

const float *weights(const popef::Model &m, const char *name) {
  return reinterpret_cast<const float *>(m.tensorData(name).data());
}

// The first request's probabilities of both paths must agree.
bool sameProbs(const std::vector<float> &a, const std::vector<float> &b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] - b[i] > 1e-4f || b[i] - a[i] > 1e-4f) return false;
  }
  return true;
}

std::vector<float> images(std::size_t batch) {
  std::vector<float> x(batch * 784);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97) / 97.f;
  return x;
}

void BM_MlpExecute(benchmark::State &state) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  auto model = mlp(batch);
  ModelRunner runner(model);
  std::vector<float> image = images(batch), probs(batch * 10), want(batch * 10);
  mrt_bench::NativeMlp(batch, weights(*model, "w1"), weights(*model, "b1"), weights(*model, "w2"),
                       weights(*model, "b2"))
      .run(image.data(), want.data());
  const InputMemoryView in{{"image", {image.data(), image.size() * 4}}};
  const OutputMemoryView out{{"probs", {probs.data(), probs.size() * 4}}};
  runner.execute(in, out);
  if (!sameProbs(probs, want)) state.SkipWithError("runner and native results differ");
  for (auto _ : state) runner.execute(in, out);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}

void mlpNative(benchmark::State &state, mrt_bench::GemmLibrary gemm) {
  const auto batch = static_cast<std::size_t>(state.range(0));
  auto model = mlp(batch);
  mrt_bench::NativeMlp native(batch, weights(*model, "w1"), weights(*model, "b1"), weights(*model, "w2"),
                              weights(*model, "b2"), gemm);
  std::vector<float> image = images(batch), probs(batch * 10);
  for (auto _ : state) {
    native.run(image.data(), probs.data());
    benchmark::DoNotOptimize(probs.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * batch));
}

void BM_MlpNative(benchmark::State &state) { mlpNative(state, mrt_bench::GemmLibrary::OneDnn); }
void BM_MlpNativeEigen(benchmark::State &state) { mlpNative(state, mrt_bench::GemmLibrary::Eigen); }

// Wall time: the runner computes on its worker threads.
BENCHMARK(BM_MlpExecute)->Arg(1)->Arg(16)->Arg(64)->Arg(1024)->UseRealTime()->MinTime(0.2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MlpNative)->Arg(1)->Arg(16)->Arg(64)->Arg(1024)->UseRealTime()->MinTime(0.2)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MlpNativeEigen)->Arg(1)->Arg(16)->Arg(64)->Arg(1024)->UseRealTime()->MinTime(0.2)->Unit(benchmark::kMicrosecond);

}  // namespace
