// Compiler validation: link errors, invalid options, unmapped tensors, vertices
// touching other tiles, bad shapes and stream sizes.
#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

template <typename Fn> hwsim::Error expectError(Fn &&fn, hwsim::ErrorKind kind) {
  try {
    fn();
  } catch (const hwsim::Error &e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected an hwsim::Error";
  return hwsim::Error(kind, "");
}

TEST(Compiler, TileOverItsMemoryIsALinkErrorNamingTileAndBytes) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto big = g.addVariable(Type::F32, {200 * 1024});  // 800 KiB > 624 KiB
  g.setTileMapping(big, 2);
  try {
    hwsim::compileGraph(g, {p::WriteUndef(big)});
    FAIL() << "expected a link error";
  } catch (const hwsim::LinkError &e) {
    EXPECT_EQ(e.kind(), hwsim::ErrorKind::LinkError);
    EXPECT_EQ(e.tile(), 2u);
    EXPECT_EQ(e.bytesNeeded(), 819200u);
    EXPECT_EQ(e.bytesAvailable(), 638976u);
    EXPECT_NE(std::string(e.what()).find("tile 2 needs 819200 bytes"), std::string::npos) << e.what();
  }
  // Spread over the 4 tiles it fits; and allowOutOfMemory accepts it anyway.
  EXPECT_NO_THROW(hwsim::compileGraph(g, {}, {{"debug.allowOutOfMemory", "true"}}));
  g.mapLinearly(big);
  const auto exe = hwsim::compileGraph(g, {});
  EXPECT_EQ(exe.memoryPerTile()[0], 204800u);
}

TEST(Compiler, UnknownOrMalformedOptionsAreInvalidOptionNamingTheOption) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  try {
    hwsim::compileGraph(g, {}, {{"debug.noSuchThing", "true"}});
    FAIL();
  } catch (const hwsim::InvalidOption &e) {
    EXPECT_EQ(e.option(), "debug.noSuchThing");
    EXPECT_NE(std::string(e.what()).find("debug.noSuchThing"), std::string::npos);
  }
  try {
    hwsim::compileGraph(g, {}, {{"debug.instrument", "yes"}});
    FAIL();
  } catch (const hwsim::InvalidOption &e) {
    EXPECT_EQ(e.option(), "debug.instrument");
  }
  EXPECT_THROW(hwsim::compileGraph(g, {}, {{"autoReport.executionProfileProgramRunCount", "-1"}}), hwsim::InvalidOption);
}

TEST(Compiler, UnmappedTensorIsAGraphError) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {8}, "x");
  g.setTileMapping(x.slice(0, 5), 1);
  const auto e = expectError([&] { hwsim::compileGraph(g, {}); }, hwsim::ErrorKind::GraphError);
  EXPECT_NE(std::string(e.what()).find("variable 'x' element 5 has no tile mapping"), std::string::npos) << e.what();
}

TEST(Compiler, VertexTouchingAnotherTileIsAGraphError) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {8}, "x");
  auto y = g.addVariable(Type::F32, {8}, "y");
  g.setTileMapping(x, 0);
  g.setTileMapping(y, 0);
  g.setTileMapping(y.slice(6, 8), 3);
  auto cs = g.addComputeSet("relu");
  g.addVertex(cs, "Relu", {{"in", x}, {"out", y}}, 0);
  const auto e = expectError([&] { hwsim::compileGraph(g, {p::Execute(cs)}); }, hwsim::ErrorKind::GraphError);
  EXPECT_NE(std::string(e.what()).find("field 'out' element 6 is on tile 3"), std::string::npos) << e.what();
}

TEST(Compiler, ShapeTypeAndStreamMismatchesAreGraphErrors) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto a = g.addVariable(Type::F32, {4, 3});
  auto b = g.addVariable(Type::F32, {4, 3});
  auto c = g.addVariable(Type::S32, {4, 4});
  for (auto &t : {a, b, c}) g.setTileMapping(t, 0);
  auto cs = g.addComputeSet("mm");
  g.addVertex(cs, "MatMul", {{"a", a}, {"b", b}, {"out", c}}, 0);
  auto e = expectError([&] { hwsim::compileGraph(g, {p::Execute(cs)}); }, hwsim::ErrorKind::GraphError);
  EXPECT_NE(std::string(e.what()).find("shapes do not chain"), std::string::npos) << e.what();

  // (every compute set of a graph is compiled, so the rest uses a fresh graph)
  hwsim::Graph g2(hwsim::Target::smallIpuModel());
  a = g2.addVariable(Type::F32, {4, 3});
  b = g2.addVariable(Type::F32, {4, 3});
  c = g2.addVariable(Type::S32, {4, 4});
  for (auto &t : {a, b, c}) g2.setTileMapping(t, 0);
  auto s = g2.addHostToDeviceFIFO("in", Type::F32, 5);
  e = expectError([&] { hwsim::compileGraph(g2, {p::Copy(s, a)}); }, hwsim::ErrorKind::GraphError);
  EXPECT_NE(std::string(e.what()).find("stream 'in' carries 5 F32 elements, the tensor has 12 F32"), std::string::npos) << e.what();
  expectError([&] { hwsim::compileGraph(g2, {p::Copy(a, c)}); }, hwsim::ErrorKind::GraphError);
  auto missing = g2.addComputeSet("missing");
  g2.addVertex(missing, "Add", {{"in0", a}, {"out", b}}, 0);
  e = expectError([&] { hwsim::compileGraph(g2, {p::Execute(missing)}); }, hwsim::ErrorKind::GraphError);
  EXPECT_NE(std::string(e.what()).find("field 'in1' is not connected"), std::string::npos) << e.what();
}

TEST(Compiler, ProgramContainingItselfIsRejected) {
  p::Sequence s, inner;
  s.add(inner);
  expectError([&] { s.add(s); }, hwsim::ErrorKind::InvalidArgument);
  expectError([&] { inner.add(s); }, hwsim::ErrorKind::InvalidArgument);
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  p::Switch sw(g.addVariable(hwsim::Type::S32, {1}));
  expectError([&] { sw.add(1, sw); }, hwsim::ErrorKind::InvalidArgument);
}

TEST(Compiler, WritingAConstantIsRejected) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto k = g.addConstant(Type::F32, {2}, 1.0, "k");
  auto x = g.addVariable(Type::F32, {2});
  g.setTileMapping(k, 0);
  g.setTileMapping(x, 0);
  expectError([&] { hwsim::compileGraph(g, {p::Copy(x, k)}); }, hwsim::ErrorKind::GraphError);
}

TEST(Compiler, ProgressIsReportedToTheEnd) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  int last = 0, total = 0;
  hwsim::compileGraph(g, {}, {}, [&](int step, int steps) {
    EXPECT_GT(step, last);
    last = step;
    total = steps;
  });
  EXPECT_EQ(last, total);
}

}  // namespace
