// The C API against the C++ classes (target: under 5% apart): ModelRunner
// execute on add_one batch 1 (16 floats) and mlp batch 1, sync and
// async + wait, through
//   C    mrt_model_runner_execute / _execute_async + mrt_future_wait +
//        mrt_future_destroy, from the shared libmrt, tensors named by
//        mrt_tensor_view arrays;
//   C++  mrt::ModelRunner::execute / executeAsync + wait (mrt_core), with
//        the Input/OutputMemoryView maps built once, as a C++ caller would.
// BM_CApiVsCxx alternates chunks of kChunk calls of each (which goes first
// alternates too) on two runners of the same PopEF file, each on its own
// simulated device, and reports c_ns/call, cxx_ns/call and c/cxx. Both
// runners start idle (see Runners), so neither runs in the slower mode a
// device thread still busy from its start-up puts synchronous callers in.
// BM_CApiOnly and BM_CxxOnly run one side alone, for profiling
// (--benchmark_filter=CApiOnly under perf).
// The simulated system lives in a private lock directory (MRT_HWSIM_LOCK_DIR).
#include "example_model_file.hpp"

#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "mrt_c.h"
#include "runner/model_runner.hpp"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kChunk = 8;
constexpr std::chrono::milliseconds kSettle{50};

// One model's execute tensors with its C views and C++ maps over the same
// kind of buffers (separate buffers for each side).
// Filled in place: the C views point into the descriptions' names.
struct Io {
  std::vector<mrt::InputDesc> input_descs;
  std::vector<mrt::OutputDesc> output_descs;
  std::vector<std::vector<float>> c_in, c_out, cxx_in, cxx_out;
  std::vector<mrt_tensor_view> c_inputs, c_outputs;
  mrt::InputMemoryView cxx_inputs;
  mrt::OutputMemoryView cxx_outputs;
};

void fillIo(Io &io, const mrt::ModelRunner &runner) {
  const auto &inputs = io.input_descs = runner.getExecuteInputs();
  const auto &outputs = io.output_descs = runner.getExecuteOutputs();
  io.c_in.reserve(inputs.size());
  io.cxx_in.reserve(inputs.size());
  io.c_out.reserve(outputs.size());
  io.cxx_out.reserve(outputs.size());
  for (const auto &d : inputs) {
    const auto n = static_cast<std::size_t>(d.size_in_bytes) / sizeof(float);
    auto &c = io.c_in.emplace_back(n, 0.5f);
    auto &cxx = io.cxx_in.emplace_back(n, 0.5f);
    io.c_inputs.push_back({d.name.c_str(), c.data(), static_cast<std::uint64_t>(d.size_in_bytes)});
    io.cxx_inputs.emplace(d.name, mrt::ConstTensorMemoryView(cxx.data(), static_cast<std::size_t>(d.size_in_bytes)));
  }
  for (const auto &d : outputs) {
    const auto n = static_cast<std::size_t>(d.size_in_bytes) / sizeof(float);
    auto &c = io.c_out.emplace_back(n);
    auto &cxx = io.cxx_out.emplace_back(n);
    io.c_outputs.push_back({d.name.c_str(), c.data(), static_cast<std::uint64_t>(d.size_in_bytes)});
    io.cxx_outputs.emplace(d.name, mrt::TensorMemoryView(cxx.data(), static_cast<std::size_t>(d.size_in_bytes)));
  }
}

// The two runners of one model, the C++ one and the C one.
struct Runners {
  std::unique_ptr<mrt::ModelRunner> cxx;
  mrt_model_runner *c = nullptr;
  Io io;

  explicit Runners(const std::string &model) {
    const std::string path = mrt_bench::exampleModelFile(model);
    cxx = std::make_unique<mrt::ModelRunner>(path);
    const char *paths[] = {path.c_str()};
    if (mrt_model_runner_create_from_files(paths, 1, nullptr, &c) != MRT_OK) c = nullptr;
    fillIo(io, *cxx);
    // Let both device threads go idle before the first request. A device
    // thread still polling after its Load programs takes the first
    // synchronous request away from the caller (which then parks on a futex
    // until it is done), and that hand-off repeats for every later request
    // as long as they come back to back. Without this pause the runner made
    // last, whichever side it is, runs in that mode and the other does not:
    // the comparison then measures creation order, not the API.
    std::this_thread::sleep_for(kSettle);
  }
  ~Runners() { mrt_model_runner_destroy(c); }
  Runners(const Runners &) = delete;
  Runners &operator=(const Runners &) = delete;

  bool cSync() {
    return mrt_model_runner_execute(c, io.c_inputs.data(), io.c_inputs.size(), io.c_outputs.data(),
                                    io.c_outputs.size(), 0) == MRT_OK;
  }
  bool cAsync() {
    mrt_future *future = nullptr;
    if (mrt_model_runner_execute_async(c, io.c_inputs.data(), io.c_inputs.size(), io.c_outputs.data(),
                                       io.c_outputs.size(), 0, &future) != MRT_OK)
      return false;
    const bool ok = mrt_future_wait(future, -1) == MRT_OK;
    mrt_future_destroy(future);
    return ok;
  }
  bool cxxSync() {
    cxx->execute(io.cxx_inputs, io.cxx_outputs);
    return true;
  }
  bool cxxAsync() {
    const auto futures = cxx->executeAsync(io.cxx_inputs, io.cxx_outputs);
    futures.begin()->second.get();  // every output shares the request's completion
    return true;
  }
  bool call(bool c_side, bool async) {
    if (c_side) return async ? cAsync() : cSync();
    return async ? cxxAsync() : cxxSync();
  }
  // The C side's outputs equal the C++ side's (same model, same inputs).
  bool sameOutputs() const { return io.c_out == io.cxx_out; }
};

void BM_CApiVsCxx(benchmark::State &state, const char *model, bool async) {
  Runners runners(model);
  if (runners.c == nullptr) {
    state.SkipWithError(mrt_last_error_message());
    return;
  }
  for (int i = 0; i < kChunk; ++i) runners.call(true, async), runners.call(false, async);  // warm up

  std::chrono::duration<double, std::nano> c_time{}, cxx_time{};
  std::int64_t calls = 0;
  bool c_first = true, ok = true;
  for (auto _ : state) {
    for (bool c_side : {c_first, !c_first}) {
      const auto start = Clock::now();
      for (int i = 0; i < kChunk; ++i) ok &= runners.call(c_side, async);
      (c_side ? c_time : cxx_time) += Clock::now() - start;
    }
    c_first = !c_first;
    calls += kChunk;
  }
  if (!ok || !runners.sameOutputs()) {
    state.SkipWithError(ok ? "the C and C++ outputs differ" : mrt_last_error_message());
    return;
  }
  state.counters["c_ns/call"] = c_time.count() / static_cast<double>(calls);
  state.counters["cxx_ns/call"] = cxx_time.count() / static_cast<double>(calls);
  state.counters["c/cxx"] = c_time.count() / cxx_time.count();
  state.SetItemsProcessed(2 * calls);
}
BENCHMARK_CAPTURE(BM_CApiVsCxx, add_one_sync, "add_one", false)->UseRealTime();
BENCHMARK_CAPTURE(BM_CApiVsCxx, add_one_async, "add_one", true)->UseRealTime();
BENCHMARK_CAPTURE(BM_CApiVsCxx, mlp_sync, "mlp", false)->UseRealTime();
BENCHMARK_CAPTURE(BM_CApiVsCxx, mlp_async, "mlp", true)->UseRealTime();

// One side alone (for perf); not part of the figure.
void oneSide(benchmark::State &state, const char *model, bool c_side, bool async) {
  Runners runners(model);
  bool ok = runners.c != nullptr;
  for (auto _ : state) ok &= runners.call(c_side, async);
  if (!ok) state.SkipWithError("execute failed");
  state.SetItemsProcessed(state.iterations());
}
void BM_CApiOnly(benchmark::State &state, const char *model, bool async) { oneSide(state, model, true, async); }
void BM_CxxOnly(benchmark::State &state, const char *model, bool async) { oneSide(state, model, false, async); }
BENCHMARK_CAPTURE(BM_CApiOnly, add_one_sync, "add_one", false)->UseRealTime()->MinTime(0.1);
BENCHMARK_CAPTURE(BM_CxxOnly, add_one_sync, "add_one", false)->UseRealTime()->MinTime(0.1);
BENCHMARK_CAPTURE(BM_CApiOnly, add_one_async, "add_one", true)->UseRealTime()->MinTime(0.1);
BENCHMARK_CAPTURE(BM_CxxOnly, add_one_async, "add_one", true)->UseRealTime()->MinTime(0.1);

}  // namespace
