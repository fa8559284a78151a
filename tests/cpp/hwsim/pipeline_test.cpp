// Pipelined runs (docs/hwsim.md "Pipelining"): the stages a program splits
// into, the modelled cycles of streamed runs against the documented formula
// (steady-state interval = slowest stage + slowest transfer, latency = the
// sum), and results equal to runs one after another while stages run on
// several threads (a concurrency test: TSan checks it).
#include <algorithm>
#include <map>

#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;
namespace ops = hwsim::ops;

constexpr std::size_t kN = 256;

// x (IPU 0) += 1, then copied to y (IPU 1), y *= 3 three times: stage 1 is
// the slower one.
struct TwoStages {
  hwsim::Target target = hwsim::Target::smallIpuModel(2);
  hwsim::Graph g{target};
  p::Sequence main;
  hwsim::Executable exe;

  TwoStages() {
    const ops::TileRange ipu0{0, 4}, ipu1{4, 4};
    auto x = ops::createTensor(g, Type::F32, {kN}, "x", ipu0);
    auto y = ops::createTensor(g, Type::F32, {kN}, "y", ipu1);
    auto one = g.addConstant(Type::F32, {1}, 1.0, "one");
    g.setTileMapping(one, 0);
    auto three = g.addConstant(Type::F32, {1}, 3.0, "three");
    g.setTileMapping(three, 4);
    main.add(p::Copy(g.addHostToDeviceFIFO("in", Type::F32, kN), x));
    ops::binaryInPlace(g, main, "Add", x, one);
    main.add(p::Copy(x, y, "to_ipu1"));
    for (int i = 0; i < 3; ++i) ops::binaryInPlace(g, main, "Mul", y, three);
    main.add(p::Copy(y, g.addDeviceToHostFIFO("out", Type::F32, kN)));
    exe = hwsim::compileGraph(g, {main});
  }
};

std::uint64_t cyclesOf(const hwsim::Executable &exe, const std::vector<unsigned> &steps) {
  const auto all = exe.programSteps();
  std::uint64_t total = 0;
  for (const unsigned s : steps) total += all[s].cycles;
  return total;
}

// Streams `runs` inputs (run r: all elements r) through the engine and
// returns the outputs in the order they came out.
std::vector<std::vector<float>> stream(hwsim::Engine &e, unsigned runs, bool pipelined) {
  unsigned next = 0;
  std::vector<std::vector<float>> outputs;
  e.connectStreamToCallback("in", [&](void *p) {
    std::vector<float> v(kN, static_cast<float>(next++));
    std::memcpy(p, v.data(), kN * sizeof(float));
  });
  e.connectStreamToCallback("out", [&](void *p) {
    outputs.emplace_back(kN);
    std::memcpy(outputs.back().data(), p, kN * sizeof(float));
  });
  for (unsigned r = 0; r < runs; ++r) {
    EXPECT_EQ(pipelined ? e.runPipelined(0) : e.run(0), hwsim::RunStatus::Completed);
  }
  if (pipelined) {
    EXPECT_EQ(e.flushPipeline(), hwsim::RunStatus::Completed);
  }
  return outputs;
}

TEST(Pipeline, StagesFollowTheIpusOfTheSteps) {
  TwoStages m;
  const hwsim::PipelinePlan plan = hwsim::pipelinePlan(m.exe, 0);
  ASSERT_EQ(plan.stages.size(), 2u) << plan.reason;
  EXPECT_EQ(plan.reason, "");
  EXPECT_EQ(plan.stages[0].ipu, 0u);
  EXPECT_EQ(plan.stages[1].ipu, 1u);
  const auto steps = m.exe.programSteps();
  ASSERT_EQ(plan.stages[0].transfers.size(), 1u);
  EXPECT_EQ(steps[plan.stages[0].transfers[0]].name, "to_ipu1");
  EXPECT_TRUE(plan.stages[1].transfers.empty());
  EXPECT_EQ(steps[plan.stages[0].steps.front()].kind, "StreamToTensor");
  EXPECT_EQ(steps[plan.stages[1].steps.back()].kind, "TensorToStream");
  EXPECT_EQ(plan.stages[0].cycles, cyclesOf(m.exe, plan.stages[0].steps));
  EXPECT_EQ(plan.stages[1].cycles, cyclesOf(m.exe, plan.stages[1].steps));
  EXPECT_EQ(plan.stages[0].transferCycles, cyclesOf(m.exe, plan.stages[0].transfers));
}

TEST(Pipeline, StreamedRunsTakeTheSlowestStagePlusTheTransferEach) {
  TwoStages m;
  const hwsim::PipelinePlan plan = hwsim::pipelinePlan(m.exe, 0);
  ASSERT_TRUE(plan.pipelined()) << plan.reason;
  const std::uint64_t A = plan.stages[0].cycles, B = plan.stages[1].cycles, C = plan.stages[0].transferCycles;
  ASSERT_GT(B, A);  // three multiplies against one add
  EXPECT_EQ(plan.latencyCycles(), A + C + B);
  EXPECT_EQ(plan.intervalCycles(), std::max(A, B) + C);

  constexpr unsigned kRuns = 6;
  auto dev = hwsim::DeviceManager::createIpuModelDevice(m.target);
  ASSERT_TRUE(dev.attach());
  hwsim::Engine sequential(m.exe);
  sequential.load(dev);
  const auto want = stream(sequential, kRuns, false);
  // One run after another: each costs the latency.
  EXPECT_EQ(sequential.deviceCycles(), kRuns * plan.latencyCycles());

  hwsim::Engine piped(m.exe);
  piped.load(dev);
  const auto got = stream(piped, kRuns, true);
  // The first run ends after the latency, each later one an interval after it.
  EXPECT_EQ(piped.deviceCycles(), plan.latencyCycles() + (kRuns - 1) * plan.intervalCycles());
  ASSERT_EQ(got.size(), kRuns);
  EXPECT_EQ(got, want);
  for (unsigned r = 0; r < kRuns; ++r) EXPECT_EQ(got[r][7], static_cast<float>(r + 1) * 27.0f) << r;
}

TEST(Pipeline, ARunEndsOneStepAfterItStartsOrAtTheFlush) {
  TwoStages m;
  auto dev = hwsim::DeviceManager::createIpuModelDevice(m.target);
  ASSERT_TRUE(dev.attach());
  hwsim::Engine e(m.exe);
  e.load(dev);
  unsigned outputs = 0;
  e.connectStreamToCallback("in", [](void *p) { std::memset(p, 0, kN * sizeof(float)); });
  e.connectStreamToCallback("out", [&](void *) { ++outputs; });
  EXPECT_EQ(e.runPipelined(0), hwsim::RunStatus::Completed);
  EXPECT_EQ(e.pipelineRunsInFlight(), 1u);
  EXPECT_EQ(outputs, 0u);
  EXPECT_EQ(e.runPipelined(0), hwsim::RunStatus::Completed);
  EXPECT_EQ(outputs, 1u);
  // run() finishes the runs in flight before its own.
  EXPECT_EQ(e.run(0), hwsim::RunStatus::Completed);
  EXPECT_EQ(outputs, 3u);
  EXPECT_EQ(e.pipelineRunsInFlight(), 0u);
  // A step with nothing in flight and nothing new does nothing.
  EXPECT_EQ(e.runPipelined(0, 0, false), hwsim::RunStatus::Completed);
  EXPECT_EQ(outputs, 3u);
  // load() drops what is in flight.
  EXPECT_EQ(e.runPipelined(0), hwsim::RunStatus::Completed);
  e.load(dev);
  EXPECT_EQ(e.pipelineRunsInFlight(), 0u);
  EXPECT_EQ(e.flushPipeline(), hwsim::RunStatus::Completed);
  EXPECT_EQ(outputs, 3u);
}

TEST(Pipeline, AComputeSetOverTwoIpusIsNotAPipelineAndRunsWhole) {
  hwsim::Target target = hwsim::Target::smallIpuModel(2);
  hwsim::Graph g(target);
  auto x = g.addVariable(Type::F32, {kN}, "x");  // half on each IPU
  g.setTileMapping(x.slice(0, kN / 2), 0);
  g.setTileMapping(x.slice(kN / 2, kN), 4);
  p::Sequence main;
  main.add(p::Copy(g.addHostToDeviceFIFO("in", Type::F32, kN), x));
  auto y = ops::unary(g, main, "Neg", x, "neg");
  main.add(p::Copy(y, g.addDeviceToHostFIFO("out", Type::F32, kN)));
  const auto exe = hwsim::compileGraph(g, {main});
  const hwsim::PipelinePlan plan = hwsim::pipelinePlan(exe, 0);
  EXPECT_FALSE(plan.pipelined());
  EXPECT_EQ(plan.stages.size(), 1u);
  EXPECT_NE(plan.reason.find("spans 2 IPUs"), std::string::npos) << plan.reason;
  EXPECT_EQ(plan.intervalCycles(), plan.latencyCycles());

  auto dev = hwsim::DeviceManager::createIpuModelDevice(target);
  ASSERT_TRUE(dev.attach());
  hwsim::Engine e(exe);
  e.load(dev);
  std::vector<float> in(kN, 2.0f), out(kN);
  e.connectStream("in", in.data());
  e.connectStream("out", out.data());
  EXPECT_EQ(e.runPipelined(0), hwsim::RunStatus::Completed);
  EXPECT_EQ(e.pipelineRunsInFlight(), 0u);
  EXPECT_EQ(out[0], -2.0f);
  EXPECT_EQ(e.deviceCycles(), plan.latencyCycles());
}

// What a frontend laying layers on one IPU after another uses: ops without a
// TileRange take the graph's default tiles.
TEST(Pipeline, OpsWithoutATileRangeUseTheGraphsDefaultTiles) {
  hwsim::Graph g(hwsim::Target::smallIpuModel(2));
  EXPECT_EQ(g.defaultTiles(), (std::pair<unsigned, unsigned>{0, 0}));
  g.setDefaultTiles(4, 4);
  EXPECT_EQ(g.defaultTiles(), (std::pair<unsigned, unsigned>{4, 4}));
  const auto t = ops::createTensor(g, Type::F32, {64, 16}, "t");
  for (const auto &run : g.getTileMapping(t)) EXPECT_GE(run.tile, 4u);
  for (const auto &[first, count] : {std::pair<unsigned, unsigned>{8, 1}, {5, 4}}) {
    try {
      g.setDefaultTiles(first, count);
      ADD_FAILURE() << first << " " << count;
    } catch (const hwsim::Error &e) {
      EXPECT_EQ(e.kind(), hwsim::ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(e.what()).find("are not all among the 8 tiles"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(g.defaultTiles(), (std::pair<unsigned, unsigned>{4, 4}));  // a refused range changes nothing
  g.setDefaultTiles(0, 0);
  EXPECT_EQ(g.defaultTiles(), (std::pair<unsigned, unsigned>{0, 0}));
}

TEST(Pipeline, OneIpuProgramsAreOneStageWithoutReason) {
  TwoStages two;
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = ops::createTensor(g, Type::F32, {kN}, "x");
  p::Sequence main;
  ops::fill(g, main, x, 1.0);
  const auto plan = hwsim::pipelinePlan(hwsim::compileGraph(g, {main}), 0);
  EXPECT_FALSE(plan.pipelined());
  EXPECT_EQ(plan.reason, "");
  EXPECT_THROW(hwsim::pipelinePlan(two.exe, 1), hwsim::Error);
}

TEST(Pipeline, AStopEndsThePipelinedRunsAndADeviceErrorIsReported) {
  TwoStages m;
  auto dev = hwsim::DeviceManager::createIpuModelDevice(m.target);
  ASSERT_TRUE(dev.attach());
  hwsim::Engine e(m.exe);
  e.load(dev);
  e.connectStreamToCallback("in", [](void *p) { std::memset(p, 0, kN * sizeof(float)); });
  e.connectStreamToCallback("out", [](void *) {});
  EXPECT_EQ(e.runPipelined(0), hwsim::RunStatus::Completed);
  e.stop();
  EXPECT_EQ(e.runPipelined(0), hwsim::RunStatus::Stopped);
  EXPECT_EQ(e.pipelineRunsInFlight(), 0u);

  e.load(dev);
  const auto locations = e.getSimulatedErrorLocations("to_ipu1");
  ASSERT_FALSE(locations.empty());
  e.insertSimulatedError(hwsim::DeviceErrorCode::ExchangeError, locations.front());
  EXPECT_THROW(e.runPipelined(0), hwsim::RuntimeError);
  EXPECT_EQ(e.pipelineRunsInFlight(), 0u);
}

}  // namespace
