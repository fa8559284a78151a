// The queues benchmark next to its baseline, the callbacks benchmark, on the
// same model in this binary (the drivers of mrt-bench, tools/mrt-bench):
// Like the tool, it uses only the public API (mrt.hpp over libmrt.so).
//   queues     Session::createQueueManagerForReplica; a device thread runs Main over
//              and over while this thread enqueues input and output buffers
//              (several runs ahead) and waits for their outputs; both
//              threads under SCHED_BATCH, as include/mrt_c.h advises (so the
//              callbacks chunks run under it too, on this thread);
//   callbacks  session callbacks memcpy straight from/to the same kind of
//              user buffers; this thread runs Main once per run.
// BM_QueuesVsCallbacks alternates chunks of kChunk runs of each on two IPU
// Model devices, so both see the same machine state (this machine is shared
// and noisy), and reports queues_runs/s, callbacks_runs/s and their ratio
// queues/callbacks. Models: add_one with 16 floats (64 B) and 16384 floats
// (64 KiB), and mlp (784 floats in, 10 out), all batch 1; each in overhead
// mode (buffers reused, no fresh data) and with real data (fresh inputs
// copied in, every output compared; see tools/mrt-bench/io_slots.hpp); all
// with the QueueManager's default rings (64 x batch), and the small models
// also with ModelRunner's, 2 x batch, and add_one with 16 x batch.
#include <benchmark/benchmark.h>

#include <string>

#include "driver.hpp"
#include "example_models.hpp"

namespace {

using namespace mrt;
using namespace mrt::benchtool;

constexpr std::uint64_t kChunk = 128;

struct ModelSpec {
  const char *name;
  std::size_t size;  // add_one's N
};

void BM_QueuesVsCallbacks(benchmark::State &state, ModelSpec spec, bool real_data,
                          std::int64_t ring_multiplier = QueueManagerConfig().ring_size_multiplier) {
  mrt_examples::ExampleOptions example;
  example.size = spec.size;
  const Model model = mrt_examples::buildExampleModel(spec.name, example);
  const DeviceManager devices;  // IPU Model devices only: no pool device is attached
  DriverOptions options;
  options.real_data = real_data;
  options.record_latencies = false;
  options.ring_size_multiplier = ring_multiplier;
  QueuesDriver queues(model, devices.createIpuModelDevice(model), options);
  CallbacksDriver callbacks(model, devices.createIpuModelDevice(model), options);
  queues.run(kChunk);  // warm both paths up (first Main, page faults)
  callbacks.run(kChunk);

  std::chrono::duration<double> queues_time{}, callbacks_time{};
  std::uint64_t queues_runs = 0, callbacks_runs = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    queues_runs += queues.run(kChunk);
    const auto middle = Clock::now();
    callbacks_runs += callbacks.run(kChunk);
    queues_time += middle - start;
    callbacks_time += Clock::now() - middle;
  }
  queues.stop();
  if (queues.io().mismatches() + callbacks.io().mismatches() != 0) {
    state.SkipWithError((queues.io().firstMismatch() + callbacks.io().firstMismatch()).c_str());
    return;
  }
  const double queues_rate = static_cast<double>(queues_runs) / queues_time.count();
  const double callbacks_rate = static_cast<double>(callbacks_runs) / callbacks_time.count();
  state.counters["queues_runs/s"] = queues_rate;
  state.counters["callbacks_runs/s"] = callbacks_rate;
  state.counters["queues/callbacks"] = queues_rate / callbacks_rate;
  state.SetItemsProcessed(static_cast<std::int64_t>(queues_runs + callbacks_runs));
}

BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, add_one_64B, ModelSpec{"add_one", 16}, false)->UseRealTime();
BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, add_one_64KiB, ModelSpec{"add_one", 16384}, false)->UseRealTime();
BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, mlp, ModelSpec{"mlp", 16}, false)->UseRealTime();
// Shallower rings: on a shared CPU one context switch carries at most a
// ring's worth of runs (ModelRunner's 2, and 16, the default before 64).
BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, add_one_64B_ring2, ModelSpec{"add_one", 16}, false, 2)->UseRealTime();
BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, add_one_64B_ring16, ModelSpec{"add_one", 16}, false, 16)->UseRealTime();
BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, mlp_ring2, ModelSpec{"mlp", 16}, false, 2)->UseRealTime();
BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, add_one_64B_real_data, ModelSpec{"add_one", 16}, true)->UseRealTime();
BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, add_one_64KiB_real_data, ModelSpec{"add_one", 16384}, true)->UseRealTime();
BENCHMARK_CAPTURE(BM_QueuesVsCallbacks, mlp_real_data, ModelSpec{"mlp", 16}, true)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
