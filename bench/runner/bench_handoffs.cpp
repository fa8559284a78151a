// Hand-offs between client and device threads, each against its baseline in
// the same benchmark (chunks alternate, so both see the same machine state):
//   * BM_AsyncVsExecute: one client, one request in flight, executeAsync +
//     wait against execute (which serves itself on the caller's thread) on
//     one runner; reports async/execute, the async rate over the execute
//     rate (target: at least 0.8);
//   * BM_TwoClientsVsOne: a runner with two replicas; two client threads,
//     each keeping a window of requests in flight on its own replica,
//     against one such client alone; reports two/one, the requests per
//     second of two clients over one (target: at least 1.5 on 2 cores).
// Run them as they are, under `taskset -c 0`, and beside a busy process
// (docs/performance.md): the waits must not collapse when threads share a CPU.
#include "private_devices.hpp"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "internal_example_models.hpp"
#include "runner/model_runner.hpp"

namespace {

using namespace mrt;
using Clock = std::chrono::steady_clock;

// One model's execute tensors over buffers of our own.
struct Io {
  std::vector<std::vector<float>> buffers;
  InputMemoryView inputs;
  OutputMemoryView outputs;

  explicit Io(const ModelRunner &runner) {
    const auto inputs_desc = runner.getExecuteInputs();
    const auto outputs_desc = runner.getExecuteOutputs();
    buffers.reserve(inputs_desc.size() + outputs_desc.size());
    for (const auto &d : inputs_desc) {
      auto &b = buffers.emplace_back(static_cast<std::size_t>(d.size_in_bytes) / sizeof(float), 0.5f);
      inputs.emplace(d.name, TensorMemoryView{b.data(), static_cast<std::size_t>(d.size_in_bytes)});
    }
    for (const auto &d : outputs_desc) {
      auto &b = buffers.emplace_back(static_cast<std::size_t>(d.size_in_bytes) / sizeof(float), 0.f);
      outputs.emplace(d.name, TensorMemoryView{b.data(), static_cast<std::size_t>(d.size_in_bytes)});
    }
  }
};

std::shared_ptr<popef::Model> exampleModel(const std::string &name) {
  return example_models::buildExampleModel(name, example_models::ExampleOptions{});
}

void BM_AsyncVsExecute(benchmark::State &state, const char *model) {
  constexpr int kChunk = 64;
  ModelRunner runner(exampleModel(model));
  Io io(runner);
  const auto sync_call = [&] { runner.execute(io.inputs, io.outputs); };
  const auto async_call = [&] { runner.submit(io.inputs, io.outputs)->wait(std::chrono::nanoseconds(-1)); };
  for (int i = 0; i < kChunk; ++i) sync_call(), async_call();  // warm up
  std::chrono::duration<double, std::nano> sync_time{}, async_time{};
  std::int64_t calls = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    for (int i = 0; i < kChunk; ++i) sync_call();
    const auto middle = Clock::now();
    for (int i = 0; i < kChunk; ++i) async_call();
    sync_time += middle - start;
    async_time += Clock::now() - middle;
    calls += kChunk;
  }
  state.counters["execute_ns/call"] = sync_time.count() / static_cast<double>(calls);
  state.counters["async_ns/call"] = async_time.count() / static_cast<double>(calls);
  state.counters["async/execute"] = sync_time.count() / async_time.count();
  state.SetItemsProcessed(2 * calls);
}
BENCHMARK_CAPTURE(BM_AsyncVsExecute, add_one, "add_one")->UseRealTime();
BENCHMARK_CAPTURE(BM_AsyncVsExecute, mlp, "mlp")->UseRealTime();

// Submits `requests` requests to `replica`, keeping kWindow in flight.
void client(ModelRunner &runner, unsigned replica, int requests) {
  constexpr int kWindow = 8;
  std::vector<std::unique_ptr<Io>> ios;
  for (int i = 0; i < kWindow; ++i) ios.push_back(std::make_unique<Io>(runner));
  std::vector<std::shared_ptr<Completion>> inflight(kWindow);
  for (int i = 0; i < requests; ++i) {
    auto &slot = inflight[i % kWindow];
    if (slot) slot->wait(std::chrono::nanoseconds(-1));
    const Io &io = *ios[i % kWindow];
    slot = runner.submit(io.inputs, io.outputs, replica);
  }
  for (auto &c : inflight) {
    if (c) c->wait(std::chrono::nanoseconds(-1));
  }
}

void BM_TwoClientsVsOne(benchmark::State &state, const char *model) {
  // Per client and chunk. A chunk must outlast what each one pays once (the
  // second client's thread start, a device thread's wake-up: 50-100 us on
  // this VM) by far: add_one's one-client chunk of 512 requests lasts ~0.2 ms
  // since clients serve full queues themselves (docs/performance.md).
  constexpr int kRequests = 4096;
  ModelRunnerConfig config;
  config.thread_safe = true;
  config.replication_factor = 2;
  ModelRunner runner(exampleModel(model), config);
  client(runner, 0, kRequests);  // warm up
  client(runner, 1, kRequests);
  std::chrono::duration<double> one_time{}, two_time{};
  std::int64_t chunks = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    client(runner, 0, kRequests);
    const auto middle = Clock::now();
    std::thread second([&] { client(runner, 1, kRequests); });
    client(runner, 0, kRequests);
    second.join();
    one_time += middle - start;
    two_time += Clock::now() - middle;
    ++chunks;
  }
  const double one_rate = static_cast<double>(chunks * kRequests) / one_time.count();
  const double two_rate = static_cast<double>(2 * chunks * kRequests) / two_time.count();
  state.counters["one_client_req/s"] = one_rate;
  state.counters["two_clients_req/s"] = two_rate;
  state.counters["two/one"] = two_rate / one_rate;
  state.SetItemsProcessed(3 * chunks * kRequests);
}
BENCHMARK_CAPTURE(BM_TwoClientsVsOne, add_one, "add_one")->UseRealTime();
BENCHMARK_CAPTURE(BM_TwoClientsVsOne, mlp, "mlp")->UseRealTime();

}  // namespace
