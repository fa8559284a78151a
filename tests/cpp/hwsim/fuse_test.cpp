// fuseExecutables: each input on its own tiles, handles under its name, its
// programs computing and costing what they did alone, and the refusals.
#include <hwsim/fuse.hpp>

#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

// y = x + 1: x streamed in to tile 1, copied to tile 2 for the add there,
// y streamed out.
hwsim::Executable addOne() {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {8}, "x");
  auto near = g.addVariable(Type::F32, {8}, "near");
  auto one = g.addConstant(Type::F32, {1}, std::vector<double>{1.0}, "one");
  auto y = g.addVariable(Type::F32, {8}, "y");
  g.setTileMapping(x, 1);
  for (auto &t : {near, one, y}) g.setTileMapping(t, 2);
  auto in = g.addHostToDeviceFIFO("x", Type::F32, 8);
  auto out = g.addDeviceToHostFIFO("y", Type::F32, 8);
  auto cs = g.addComputeSet("add");
  g.addVertex(cs, "Add", {{"in0", near}, {"in1", one}, {"out", y}}, 2);
  return hwsim::compileGraph(g, {p::Sequence{p::Copy(in, x), p::Copy(x, near), p::Execute(cs), p::Copy(y, out)}});
}

// On tile 0: w from slot 1 of a remote buffer (program 0); then (program 1)
// h = flag ? w * 2 : w, read by the host.
hwsim::Executable scaled() {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto w = g.addVariable(Type::F32, {4}, "w");
  auto two = g.addConstant(Type::F32, {1}, std::vector<double>{2.0}, "two");
  auto h = g.addVariable(Type::F32, {4}, "h");
  auto flag = g.addVariable(Type::S32, {1}, "flag");
  for (auto &t : {w, two, h, flag}) g.setTileMapping(t, 0);
  auto rb = g.addRemoteBuffer("w_remote", Type::F32, 4, 2);
  g.createHostWrite("flag", flag);
  g.createHostRead("h", h);
  auto scale = g.addComputeSet("scale");
  g.addVertex(scale, "Mul", {{"in0", w}, {"in1", two}, {"out", h}}, 0);
  return hwsim::compileGraph(g, {p::Copy(rb, w, 1), p::If(flag, p::Execute(scale), p::Copy(w, h))});
}

struct Loaded {
  explicit Loaded(const hwsim::Executable &exe) : engine(exe), device(hwsim::DeviceManager::createSmallIpuModelDevice()) {
    EXPECT_TRUE(device.attach());
    engine.load(device);
  }
  hwsim::Engine engine;
  hwsim::Device device;
};

std::vector<float> runAddOne(hwsim::Engine &e, const std::string &prefix, unsigned program) {
  std::vector<float> x{0, 1, 2, 3, -4, 5.5f, 6, 7}, y(8);
  e.connectStream(prefix + "x", x.data());
  e.connectStream(prefix + "y", y.data());
  e.run(program);
  return y;
}

std::vector<float> runScaled(hwsim::Engine &e, const std::string &prefix, unsigned first) {
  const std::vector<float> slot0{9, 9, 9, 9}, slot1{1, -2, 3, 0.5f};
  e.copyToRemoteBuffer(slot0.data(), prefix + "w_remote", 0);
  e.copyToRemoteBuffer(slot1.data(), prefix + "w_remote", 1);
  const std::int32_t flag = 1;
  e.writeTensor(prefix + "flag", &flag, &flag + 1);
  e.run(first);
  e.run(first + 1);
  std::vector<float> h(4);
  e.readTensor(prefix + "h", h.data(), h.data() + h.size());
  return h;
}

TEST(Fuse, EachModelGetsItsOwnTilesHandlesAndPrograms) {
  const auto a = addOne();
  const auto b = scaled();
  const hwsim::Fusion fusion = hwsim::fuseExecutables({{"a", a}, {"b", b}});
  ASSERT_EQ(fusion.parts.size(), 2u);
  // a used tiles 1..2, moved to 0..1; b used tile 0, moved to 2.
  EXPECT_EQ(fusion.parts[0].firstTile, 0u);
  EXPECT_EQ(fusion.parts[0].numTiles, 2u);
  EXPECT_EQ(fusion.parts[0].firstProgram, 0u);
  EXPECT_EQ(fusion.parts[0].numPrograms, 1u);
  EXPECT_EQ(fusion.parts[1].firstTile, 2u);
  EXPECT_EQ(fusion.parts[1].numTiles, 1u);
  EXPECT_EQ(fusion.parts[1].firstProgram, 1u);
  EXPECT_EQ(fusion.parts[1].numPrograms, 2u);

  const hwsim::Executable &fused = fusion.executable;
  const auto &memory = fused.memoryPerTile();
  ASSERT_EQ(memory.size(), 4u);
  EXPECT_EQ(memory[0], a.memoryPerTile()[1]);
  EXPECT_EQ(memory[1], a.memoryPerTile()[2]);
  EXPECT_EQ(memory[2], b.memoryPerTile()[0]);
  EXPECT_EQ(memory[3], 0u);
  ASSERT_EQ(fused.streams().size(), 2u);
  EXPECT_EQ(fused.streams()[0].handle, "a/x");
  EXPECT_EQ(fused.streams()[1].handle, "a/y");
  ASSERT_EQ(fused.remoteBuffers().size(), 1u);
  EXPECT_EQ(fused.remoteBuffers()[0].handle, "b/w_remote");
  ASSERT_EQ(fused.hostWrites().size(), 1u);
  EXPECT_EQ(fused.hostWrites()[0].handle, "b/flag");
  EXPECT_EQ(fused.numPrograms(), 3u);
  EXPECT_EQ(fused.transfers(0).streams, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(fused.transfers(1).remoteBuffers, (std::vector<unsigned>{0}));

  // Every step costs what it cost alone.
  std::vector<std::uint64_t> alone, together;
  for (const auto *exe : {&a, &b}) {
    for (const auto &step : exe->programSteps()) alone.push_back(step.cycles);
  }
  for (const auto &step : fused.programSteps()) together.push_back(step.cycles);
  EXPECT_EQ(together, alone);

  // The fused programs compute what the originals do, through the new handles.
  Loaded originalA(a), originalB(b), both(fused);
  EXPECT_EQ(runAddOne(both.engine, "a/", 0), runAddOne(originalA.engine, "", 0));
  EXPECT_EQ(runScaled(both.engine, "b/", 1), runScaled(originalB.engine, "", 0));
  EXPECT_EQ(runScaled(both.engine, "b/", 1), (std::vector<float>{2, -4, 6, 1}));

  // The fused executable survives a serialization round trip.
  EXPECT_EQ(hwsim::Executable::deserialize(fused.serialize()).hash(), fused.hash());
}

// The fused executable holds its own views and vertices (they live in
// pools of the executable), so it runs the same once its inputs are gone.
TEST(Fuse, TheFusedModelOutlivesItsInputs) {
  const hwsim::Fusion fusion = hwsim::fuseExecutables({{"a", addOne()}, {"b", scaled()}});
  Loaded both(fusion.executable), originalA(addOne());
  EXPECT_EQ(runAddOne(both.engine, "a/", 0), runAddOne(originalA.engine, "", 0));
  EXPECT_EQ(runScaled(both.engine, "b/", 1), (std::vector<float>{2, -4, 6, 1}));
  EXPECT_EQ(hwsim::Executable::deserialize(fusion.executable.serialize()).hash(), fusion.executable.hash());
}

TEST(Fuse, ModelsThatDoNotFitTogetherAreALinkErrorNamingTheirTiles) {
  const auto a = addOne();
  const auto b = scaled();
  try {
    hwsim::fuseExecutables({{"a", a}, {"b", b}, {"c", a}});
    FAIL() << "fused 5 tiles into 4";
  } catch (const hwsim::Error &error) {
    EXPECT_EQ(error.kind(), hwsim::ErrorKind::LinkError);
    EXPECT_STREQ(error.what(),
                 "fusion: the models need 5 tiles together ('a' 2 tile(s) (1..2), 'b' 1 tile(s) (0..0), "
                 "'c' 2 tile(s) (1..2)), the IPU has 4");
  }
}

TEST(Fuse, RefusesBadNamesAndOtherTargets) {
  const auto a = addOne();
  const auto expectInvalid = [](const std::vector<hwsim::FusionInput> &inputs, const std::string &needle) {
    try {
      hwsim::fuseExecutables(inputs);
      ADD_FAILURE() << "no error, expected one with: " << needle;
    } catch (const hwsim::Error &error) {
      EXPECT_EQ(error.kind(), hwsim::ErrorKind::InvalidArgument);
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
  };
  expectInvalid({}, "no models to fuse");
  expectInvalid({{"a", a}, {"a", a}}, "two models are named 'a'");
  expectInvalid({{"a/b", a}}, "model name 'a/b' must be non-empty and contain no '/'");
  expectInvalid({{"a", a}, {"e", hwsim::Executable()}}, "model 'e' has no executable");
  hwsim::Graph big(hwsim::Target::gc200());
  auto v = big.addVariable(Type::F32, {1}, "v");
  big.setTileMapping(v, 0);
  big.createHostRead("v", v);
  const auto other = hwsim::compileGraph(big, {p::Sequence{}});
  expectInvalid({{"a", a}, {"g", other}}, "fused models share one target");
}

}  // namespace
