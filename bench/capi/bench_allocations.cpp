// Heap allocations per synchronous request (target: 0), counted by
// interposing malloc (tests/cpp/cxx/counting_malloc.cpp) over the whole
// process: execute on add_one and mlp batch 1 through the C API
// (mrt_model_runner_execute, views in an mrt_tensor_view array) and through
// cxx/mrt.hpp (views in a braced list written in the call). Reports
// allocs/request next to the time per request; the count includes every
// thread (the device thread too). Warm-up requests, synchronous and
// asynchronous (which the device thread serves), come first: each thread's
// first run sets up its scratch memory (as in allocation_count_test.cpp).
// The simulated system lives in a private lock directory (MRT_HWSIM_LOCK_DIR).
// Through the public API only (PUBLIC_API): the internals define classes of
// the wrapper's names.
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "counting_malloc.hpp"
#include "example_models.hpp"
#include "mrt.hpp"
#include "mrt_graph.hpp"
#include "private_devices.hpp"

namespace {

// The example model as a PopEF file in the work directory, as mrt-gen writes it.
std::string exampleModelFile(const std::string &name) {
  const auto path = mrt_bench::workDir() / (name + ".popef");
  if (!std::filesystem::exists(path)) mrt::writeModel(mrt_examples::buildExampleModel(name), path.string());
  return path.string();
}

constexpr int kWarmUp = 20;

// The model's one input and one output, by name and size.
struct Io {
  std::string input, output;
  std::vector<float> x, y;
};

Io ioOf(const std::string &model) {
  if (model == "mlp") return {"image", "probs", std::vector<float>(784, 0.5f), std::vector<float>(10)};
  return {"x", "y", std::vector<float>(16, 0.5f), std::vector<float>(16)};
}

void reportAllocations(benchmark::State &state, std::uint64_t before) {
  state.counters["allocs/request"] = benchmark::Counter(
      static_cast<double>(mrt_alloc_test::allocationCount() - before) / static_cast<double>(state.iterations()));
}

void BM_CApiExecute(benchmark::State &state, const std::string &model) {
  const std::string path = exampleModelFile(model);
  const char *paths[] = {path.c_str()};
  mrt_model_runner *runner = nullptr;
  if (mrt_model_runner_create_from_files(paths, 1, nullptr, &runner) != MRT_OK) {
    state.SkipWithError(mrt_last_error_message());
    return;
  }
  Io io = ioOf(model);
  const mrt_tensor_view in{io.input.c_str(), io.x.data(), io.x.size() * sizeof(float)};
  const mrt_tensor_view out{io.output.c_str(), io.y.data(), io.y.size() * sizeof(float)};
  for (int i = 0; i < kWarmUp; ++i) {
    mrt_model_runner_execute(runner, &in, 1, &out, 1, 0);
    mrt_future *future = nullptr;
    if (mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &future) == MRT_OK) {
      mrt_future_wait(future, -1);
      mrt_future_destroy(future);
    }
  }
  const std::uint64_t before = mrt_alloc_test::allocationCount();
  for (auto _ : state) {
    if (mrt_model_runner_execute(runner, &in, 1, &out, 1, 0) != MRT_OK) state.SkipWithError(mrt_last_error_message());
  }
  reportAllocations(state, before);
  mrt_model_runner_destroy(runner);
}
BENCHMARK_CAPTURE(BM_CApiExecute, add_one, std::string("add_one"))->UseRealTime()->MinTime(0.1);
BENCHMARK_CAPTURE(BM_CApiExecute, mlp, std::string("mlp"))->UseRealTime()->MinTime(0.1);

void BM_WrapperExecute(benchmark::State &state, const std::string &model) {
  mrt::ModelRunner runner(exampleModelFile(model));
  Io io = ioOf(model);
  for (int i = 0; i < kWarmUp; ++i) {
    runner.execute({{io.input, io.x}}, {{io.output, io.y}});
    runner.executeAsync({{io.input, io.x}}, {{io.output, io.y}}).get();
  }
  const std::uint64_t before = mrt_alloc_test::allocationCount();
  for (auto _ : state) runner.execute({{io.input, io.x}}, {{io.output, io.y}});
  reportAllocations(state, before);
}
BENCHMARK_CAPTURE(BM_WrapperExecute, add_one, std::string("add_one"))->UseRealTime()->MinTime(0.1);
BENCHMARK_CAPTURE(BM_WrapperExecute, mlp, std::string("mlp"))->UseRealTime()->MinTime(0.1);

}  // namespace
