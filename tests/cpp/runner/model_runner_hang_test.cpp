// Models whose programs never complete a request: a Main run that computes
// for ever, and one that completes without moving a stream (its copies sit
// in an If branch that is never taken). With timeout_ns set the requests
// fail with DeadlineExceeded; destruction returns. Nothing is timed: a hang
// shows as a test that does not finish (ctest's timeout).
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>

#include <gmock/gmock.h>
#include <hwsim/graph.hpp>
#include <hwsim/program.hpp>
#include <hwsim/target.hpp>

#include "popef/graph_model_builder.hpp"
#include "runner_test_util.hpp"

namespace mrt {
namespace {

using namespace std::chrono_literals;
using runner_test::captureError;
using runner_test::constView;
using runner_test::SimulatedSystem;
using runner_test::view;
namespace p = hwsim::program;
using hwsim::Type;

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

constexpr std::size_t kN = 16;

// add_one's anchors (x in, y out) over a Main program that wraps the
// request's copies: wrap(copy x in, add one, copy y out).
std::shared_ptr<popef::Model> addOneWrapped(const std::function<p::Program(hwsim::Graph &, p::Sequence)> &wrap) {
  hwsim::Graph graph(hwsim::Target::forVersion(hwsim::IpuVersion::Ipu2));
  const hwsim::Tensor x = graph.addVariable(Type::F32, {1, kN}, "x");
  graph.setTileMapping(x, 0);
  const hwsim::Tensor one = graph.addConstant(Type::F32, {1, kN}, 1.0, "one");
  graph.setTileMapping(one, 0);
  const auto add = graph.addComputeSet("add");
  graph.addVertex(add, "Add", {{"in0", x}, {"in1", one}, {"out", x}}, 0);
  p::Sequence request{p::Copy(graph.addHostToDeviceFIFO("x", Type::F32, kN), x), p::Execute(add),
                      p::Copy(x, graph.addDeviceToHostFIFO("y", Type::F32, kN))};
  popef::GraphModelDescription d;
  d.name = "hangs";
  d.programs = {wrap(graph, request)};
  d.programNames = {"main"};
  d.main = {0};
  const std::vector<popef::TensorInfo::ShapeDimType> shape{1, static_cast<popef::TensorInfo::ShapeDimType>(kN)};
  d.anchors = {{"x", "x", shape, {0}, false, popef::DataSource::None},
               {"y", "y", shape, {0}, false, popef::DataSource::None}};
  return popef::buildModel(graph, std::move(d));
}

// The copies only in a branch never taken: every Main run completes at once
// and moves nothing.
std::shared_ptr<popef::Model> copiesNeverTaken() {
  return addOneWrapped([](hwsim::Graph &graph, p::Sequence request) -> p::Program {
    const hwsim::Tensor never = graph.addConstant(Type::BOOL, {1}, 0.0, "never");
    graph.setTileMapping(never, 0);
    return p::If(never, request);
  });
}

// A compute loop that never ends before the copies, as
// tests/data/repro/spin_forever_add_one.popef.
std::shared_ptr<popef::Model> spinsBeforeCopying() {
  return addOneWrapped([](hwsim::Graph &graph, p::Sequence request) -> p::Program {
    const auto busy = graph.addComputeSet("busy");
    const hwsim::Tensor t = graph.addVariable(Type::F32, {4}, "t");
    graph.setTileMapping(t, 0);
    graph.addVertex(busy, "Add", {{"in0", t}, {"in1", t}, {"out", t}}, 0);
    return p::Sequence{p::Repeat(std::numeric_limits<std::uint64_t>::max(), p::Execute(busy)), request};
  });
}

ModelRunnerConfig withTimeout(bool auto_reset) {
  ModelRunnerConfig config;
  config.timeout_ns = 50ms;
  config.auto_reset = auto_reset;
  return config;
}

constexpr const char *kHang = "ran for 1000 ms without moving any data of the pending requests";

TEST(ModelRunnerHangTest, CopiesOnAPathNotTakenFailTheRequestWithDeadlineExceeded) {
  ModelRunner runner(copiesNeverTaken(), withTimeout(false));
  std::vector<float> x(kN, 1.f), y(kN);
  const Error error = captureError([&] { runner.execute({{"x", constView(x)}}, {{"y", view(y)}}); });
  EXPECT_EQ(error.code(), ErrorCode::DeadlineExceeded);
  EXPECT_THAT(error.what(), ::testing::HasSubstr(kHang));
  EXPECT_THAT(error.what(), ::testing::HasSubstr("timeout_ns, 50 ms, but at least 1000 ms"));
}

TEST(ModelRunnerHangTest, WithAutoResetEveryHungRequestFailsAndTheRunnerServesOn) {
  ModelRunner runner(spinsBeforeCopying(), withTimeout(true));
  std::vector<float> x(kN, 1.f), y(kN);
  for (int i = 0; i < 2; ++i) {
    auto futures = runner.executeAsync({{"x", constView(x)}}, {{"y", view(y)}});
    const Error error = captureError([&] { futures.at("y").get(); });
    EXPECT_EQ(error.code(), ErrorCode::DeadlineExceeded);
    EXPECT_THAT(error.what(), ::testing::HasSubstr(kHang));
  }
}

TEST(ModelRunnerHangTest, DestructionReturnsWhileARequestSpins) {
  std::vector<float> x(kN, 1.f), y(kN);
  OutputFutureMemoryView futures;
  {
    ModelRunnerConfig config;
    config.run_save_programs = true;  // waits for the run in progress, but not for ever
    config.timeout_ns = 0ns;          // requests wait for ever: only destruction is bounded (1 s)
    ModelRunner runner(spinsBeforeCopying(), config);
    futures = runner.executeAsync({{"x", constView(x)}}, {{"y", view(y)}});
    // Time for the device to start the run, which never ends (so this
    // always times out): the runner is then destroyed under a spinning device.
    EXPECT_EQ(futures.at("y").wait_for(200ms), std::future_status::timeout);
  }
  const Error error = captureError([&] { futures.at("y").get(); });
  EXPECT_EQ(error.code(), ErrorCode::Cancelled);
}

}  // namespace
}  // namespace mrt
