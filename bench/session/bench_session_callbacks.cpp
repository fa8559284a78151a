// Main program runs per second on add_one (4 tiles, small IPU Model device):
//   BM_EngineStreamsToMemory   the baseline: an hwsim engine of the model's
//                              executable with x and y connected straight to
//                              host memory, engine.run(main)
//   BM_SessionAnchorCallbacks  a Session with input and output anchor
//                              callbacks (memcpy), session.runMainPrograms()
// The ratio of the two items_per_second is the figure to report (target >= 0.8).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include <hwsim/engine.hpp>
#include <hwsim/executable.hpp>

#include "device/device_manager.hpp"
#include "internal_example_models.hpp"
#include "session/session.hpp"

namespace {

std::shared_ptr<const mrt::popef::Model> addOne(std::int64_t size) {
  mrt::example_models::ExampleOptions options;
  options.tiles = 4;
  options.size = static_cast<std::size_t>(size);
  return mrt::example_models::buildExampleModel("add_one", options);
}

std::shared_ptr<mrt::Device> smallDevice(const std::shared_ptr<const mrt::popef::Model> &model) {
  hwsim::SystemConfig config;
  config.numIpus = 0;
  return mrt::DeviceManager(config).createSmallIpuModelDevice(model);
}

void BM_EngineStreamsToMemory(benchmark::State &state) {
  const auto model = addOne(state.range(0));
  const auto device = smallDevice(model);
  const auto bytes = model->executable().bytes();
  hwsim::Engine engine(hwsim::Executable::deserialize(bytes.data(), bytes.size()));
  std::vector<float> x(static_cast<std::size_t>(state.range(0)), 1.0f), y(x.size());
  engine.connectStream("x", x.data());
  engine.connectStream("y", y.data());
  engine.load(device->device());
  const auto main = static_cast<unsigned>(model->metadata.programFlow().main().at(0));
  for (auto _ : state) {
    engine.run(main);
    benchmark::DoNotOptimize(y.data());
  }
  if (y[0] != 2.0f) state.SkipWithError("wrong result");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

void BM_SessionAnchorCallbacks(benchmark::State &state) {
  const auto model = addOne(state.range(0));
  mrt::Session session(model);
  session.bindToDevice(smallDevice(model));
  std::vector<float> x(static_cast<std::size_t>(state.range(0)), 1.0f), y(x.size());
  const std::size_t size = x.size() * sizeof(float);
  session.setCallbackForAnchor("x", [&](void *p) { std::memcpy(p, x.data(), size); });
  session.setCallbackForAnchor("y", [&](void *p) { std::memcpy(y.data(), p, size); });
  session.runMainPrograms();  // Load (none) and the first run outside the loop
  for (auto _ : state) {
    session.runMainPrograms();
    benchmark::DoNotOptimize(y.data());
  }
  if (y[0] != 2.0f) state.SkipWithError("wrong result");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}

BENCHMARK(BM_EngineStreamsToMemory)->Arg(16)->Arg(4096);
BENCHMARK(BM_SessionAnchorCallbacks)->Arg(16)->Arg(4096);

}  // namespace

BENCHMARK_MAIN();
