// cxx/mrt_graph.hpp: building, compiling and running graphs through the C++
// wrapper, engines with C++ callbacks (a throwing callback stops the run and
// run() rethrows it), and a model built, written to memory, read back and
// served by ModelRunner, all against reference math.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "mrt.hpp"

namespace {

// A graph on the 4-tile IPU Model: y = relu(x . w) + 1 over a [2,3] x [3,2]
// matmul, with x streamed in and y streamed out.
struct SmallGraph {
  mrt::Graph graph{mrt::Target::smallIpuModel()};
  mrt::Program main = graph.sequence({}, "main");

  SmallGraph() {
    const mrt::Tensor x = graph.addVariable(mrt::DataType::F32, {2, 3}, "x");
    graph.mapLinearly(x, 3);
    const mrt::Tensor w =
        graph.addConstant(mrt::DataType::F32, {3, 2}, std::vector<float>{1, -1, 2, 0, -1, 3}, "w");
    graph.setTileMapping(w, 1);
    graph.add(main, graph.copy(graph.addHostToDeviceFIFO("x", mrt::DataType::F32, 6), x));
    const mrt::Tensor h = graph.matMul(main, x, w, "h");
    const mrt::Tensor r = graph.unary(main, "Relu", h, "r");
    const mrt::Tensor one = graph.addConstantFilled(mrt::DataType::F32, {1}, 1.0, "one");
    graph.setTileMapping(one, 0);
    const mrt::Tensor y = graph.binary(main, "Add", r, one, "y");
    graph.add(main, graph.copy(y, graph.addDeviceToHostFIFO("y", mrt::DataType::F32, 4)));
  }

  static std::vector<float> reference(const std::vector<float> &x) {
    const float w[6] = {1, -1, 2, 0, -1, 3};
    std::vector<float> y(4);
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        float sum = 0;
        for (int k = 0; k < 3; ++k) sum += x[i * 3 + k] * w[k * 2 + j];
        y[i * 2 + j] = std::max(sum, 0.0f) + 1.0f;
      }
    }
    return y;
  }
};

TEST(CxxGraph, TargetsAndCodeletsAreDiscoverable) {
  const mrt::Target gc200 = mrt::Target::gc200(2);
  EXPECT_EQ(gc200.name, "GC200");
  EXPECT_EQ(gc200.num_ipus, 2u);
  EXPECT_EQ(gc200.tiles_per_ipu, 1472u);
  EXPECT_EQ(mrt::Target::c600().ipu_version, 21u);
  EXPECT_EQ(mrt::Target::smallIpuModel().tiles_per_ipu, 4u);
  EXPECT_THROW(mrt::Target::named("gc300"), mrt::Error);

  const auto codelets = mrt::codelets();
  const auto matmul = std::find_if(codelets.begin(), codelets.end(), [](const auto &c) { return c.name == "MatMul"; });
  ASSERT_NE(matmul, codelets.end());
  ASSERT_EQ(matmul->fields.size(), 3u);
  EXPECT_EQ(matmul->fields[0].name, "a");
  EXPECT_EQ(matmul->fields[2].direction, mrt::FieldDirection::InOut);
  ASSERT_EQ(matmul->attributes.size(), 1u);
  EXPECT_EQ(matmul->attributes[0].name, "accumulate");
}

// setAttribute(vertex, name, double) once called itself forever ({value}
// chose the double overload): it now sets one value, and a wrong name is
// reported like the vector form's.
TEST(CxxGraph, ScalarVertexAttributeIsSet) {
  mrt::Graph graph(mrt::Target::smallIpuModel());
  const mrt::Tensor t = graph.addVariable(mrt::DataType::F32, {4}, "t");
  graph.setTileMapping(t, 0);
  const mrt::Vertex fill = graph.addVertex(graph.addComputeSet("cs"), "Fill", 0, {{"out", t}});
  graph.setAttribute(fill, "value", 2.5);
  EXPECT_THROW(graph.setAttribute(fill, "colour", 1.0), mrt::Error);
}

TEST(CxxGraph, TensorViewsAndMapping) {
  mrt::Graph graph(mrt::Target::smallIpuModel());
  const mrt::Tensor t = graph.addVariable(mrt::DataType::S32, {4, 6}, "t");
  graph.mapLinearly(t, 6);
  const auto mapping = graph.tileMapping(t);
  ASSERT_EQ(mapping.size(), 4u);
  EXPECT_EQ(mapping[3].tile, 3u);
  EXPECT_EQ(mapping[3].begin, 18u);
  EXPECT_EQ(graph.shape(graph.slice(t, 1, 3, 1)), (mrt::Shape{4, 2}));
  EXPECT_EQ(graph.shape(graph.index(t, 2)), (mrt::Shape{6}));
  EXPECT_EQ(graph.shape(graph.transpose(t)), (mrt::Shape{6, 4}));
  EXPECT_EQ(graph.shape(graph.concat({t, t}, 1)), (mrt::Shape{4, 12}));
  EXPECT_FALSE(graph.info(graph.transpose(t)).is_contiguous);
  try {
    graph.reshape(t, {5, 5});
    FAIL() << "a reshape to 25 elements was accepted";
  } catch (const mrt::Error &e) {
    EXPECT_EQ(e.code(), MRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("25"), std::string::npos) << e.what();
  }
}

TEST(CxxGraph, CompilesRunsAndCosts) {
  SmallGraph g;
  int progressCalls = 0;
  const mrt::Executable exe = g.graph.compile({g.main}, {}, [&](int, int) { ++progressCalls; });
  EXPECT_GT(progressCalls, 0);
  // A compiled graph is frozen.
  EXPECT_THROW(g.graph.addVariable(mrt::DataType::F32, {1}), mrt::Error);

  const mrt::ExecutableInfo info = exe.info();
  EXPECT_EQ(info.num_programs, 1u);
  EXPECT_EQ(info.num_tiles, 4u);
  EXPECT_EQ(info.num_streams, 2u);
  EXPECT_EQ(exe.memoryPerTile().size(), 4u);
  const auto steps = exe.steps();
  ASSERT_EQ(steps.size(), info.num_steps);
  uint64_t cycles = 0;
  for (const auto &step : steps) cycles += step.modelled_cycles;
  EXPECT_GT(cycles, 0u);
  const auto h2d = exe.handles(mrt::HandleKind::HostToDevice);
  ASSERT_EQ(h2d.size(), 1u);
  EXPECT_EQ(h2d[0].handle, "x");
  EXPECT_EQ(h2d[0].num_elements, 6u);
  // Serialized and read back: the same executable.
  const auto bytes = exe.serialize();
  EXPECT_EQ(mrt::Executable::deserialize(bytes).info().hash, info.hash);

  mrt::DeviceManager manager;
  mrt::Device device = manager.createSmallIpuModelDevice(1);
  mrt::Engine engine(exe);
  engine.load(device);
  const std::vector<float> x = {0.5f, -1, 2, 3, 1, -2};
  std::vector<float> y(4);
  engine.connectStream("x", [&](void *data, uint64_t size, uint32_t) { std::memcpy(data, x.data(), size); });
  engine.connectStream("y", [&](void *data, uint64_t size, uint32_t) { std::memcpy(y.data(), data, size); });
  engine.run(0);
  const auto expected = SmallGraph::reference(x);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y[i], expected[i]);
  EXPECT_GT(engine.deviceCycles(), 0u);
}

TEST(CxxGraph, ACallbackThatThrowsStopsTheRunAndIsRethrown) {
  SmallGraph g;
  mrt::Engine engine(g.graph.compile({g.main}));
  mrt::DeviceManager manager;
  mrt::Device device = manager.createSmallIpuModelDevice(1);
  engine.load(device);
  engine.connectStream("x", [](void *, uint64_t, uint32_t) { throw std::runtime_error("no input today"); });
  engine.connectStream("y", [](void *, uint64_t, uint32_t) {});
  try {
    engine.run(0);
    FAIL() << "the run did not fail";
  } catch (const std::runtime_error &e) {
    EXPECT_STREQ(e.what(), "no input today");
  }
  // Loaded again, the engine runs.
  engine.connectStream("x", [](void *data, uint64_t size, uint32_t) { std::memset(data, 0, size); });
  engine.load(device);
  engine.run(0);
}

TEST(CxxGraph, BuiltModelIsServedByModelRunner) {
  SmallGraph g;
  mrt::ModelBuilder builder("small", g.graph.compile({g.main}));
  builder.setProgramFlow(mrt::ProgramPhase::Main, {0});
  builder.addAnchor({"x", "x", {2, 3}, {0}, false, mrt::DataSource::NONE});
  builder.addAnchor({"y", "y", {2, 2}, {0}, false, mrt::DataSource::NONE});
  const mrt::Model built = builder.build();
  EXPECT_EQ(built.info().executable, "small");

  // Through PopEF bytes, as a file would go.
  const std::vector<std::byte> bytes = mrt::writeModelToMemory(built);
  const mrt::Model model = mrt::loadModelFromMemory(bytes);
  EXPECT_EQ(model.anchors().size(), 2u);
  EXPECT_EQ(model.anchor("y").tensor_type, mrt::TensorType::OUTPUT);

  mrt::DeviceManager manager;
  const mrt::Device device = manager.createSmallIpuModelDevice(model);
  mrt::ModelRunnerConfig config;
  config.replica_to_device = {&device};
  mrt::ModelRunner runner(model, config);
  const std::vector<float> x = {1, 2, 3, -4, 5, -6};
  std::vector<float> y(4);
  runner.execute({{"x", x}}, {{"y", y}});
  const auto expected = SmallGraph::reference(x);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(y[i], expected[i]);
}

}  // namespace
