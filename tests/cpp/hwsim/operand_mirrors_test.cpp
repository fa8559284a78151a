// Operand mirrors (operand_mirrors.hpp): a vertex may read a copy's source
// instead of the copy only while the two hold the same bytes. Each test
// changes the source after the copy, by every kind of write, and checks the
// vertex still computes from the copy.
#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

// w on tile 0 is copied to wc on tile 1 by program 0 ("load"); program 1
// computes y = wc + 1 on tile 1; programs 2-4 change w after the copy: a
// compute set adding 1 to it in place, a host-to-device stream, and a
// compute set that changes w while another of its vertices reads wc.
struct CopiedWeights {
  CopiedWeights() {
    auto w = h.input("w", Type::F32, {4}, 0);
    h.graph.createHostRead("w_out", w);
    auto wc = h.graph.addVariable(Type::F32, {4}, "w_copy");
    h.graph.setTileMapping(wc, 1);
    auto y = h.output("y", Type::F32, {4}, 1);
    auto y2 = h.output("y2", Type::F32, {4}, 1);
    auto one0 = h.graph.addConstant(Type::F32, {1}, 1.0, "one0");
    h.graph.setTileMapping(one0, 0);
    auto one1 = h.graph.addConstant(Type::F32, {1}, 1.0, "one1");
    h.graph.setTileMapping(one1, 1);
    auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, 4);
    auto useCopy = h.graph.addComputeSet("use_copy");
    h.graph.addVertex(useCopy, "Add", {{"in0", wc}, {"in1", one1}, {"out", y}}, 1);
    auto bump = h.graph.addComputeSet("bump_source");
    h.graph.addVertex(bump, "Add", {{"in0", w}, {"in1", one0}, {"out", w}}, 0);
    auto both = h.graph.addComputeSet("bump_source_and_use_copy");
    h.graph.addVertex(both, "Add", {{"in0", w}, {"in1", one0}, {"out", w}}, 0);
    h.graph.addVertex(both, "Add", {{"in0", wc}, {"in1", one1}, {"out", y2}}, 1);
    h.build({p::Copy(w, wc), p::Execute(useCopy), p::Execute(bump), p::Copy(in, w), p::Execute(both)});
  }
  std::vector<float> y() { return h.read<float>("y", 4); }
  Harness h;
};

TEST(OperandMirrors, VerticesReadTheCopyOnceTheSourceChanged) {
  CopiedWeights m;
  m.h.write<float>("w", {1, 2, 3, 4});
  m.h.engine->run(0);
  m.h.engine->run(1);
  EXPECT_EQ(m.y(), (std::vector<float>{2, 3, 4, 5}));

  m.h.engine->run(2);  // w += 1 by a compute set
  m.h.engine->run(1);
  EXPECT_EQ(m.y(), (std::vector<float>{2, 3, 4, 5}));
  m.h.engine->run(0);
  m.h.engine->run(1);
  EXPECT_EQ(m.y(), (std::vector<float>{3, 4, 5, 6}));

  m.h.write<float>("w", {10, 20, 30, 40});  // by the host
  m.h.engine->run(1);
  EXPECT_EQ(m.y(), (std::vector<float>{3, 4, 5, 6}));
  m.h.engine->run(0);
  m.h.engine->run(1);
  EXPECT_EQ(m.y(), (std::vector<float>{11, 21, 31, 41}));

  std::vector<float> streamed{7, 7, 7, 7};
  m.h.engine->connectStream("in", streamed.data(), streamed.data() + streamed.size());
  m.h.engine->run(3);  // by a stream
  m.h.engine->run(1);
  EXPECT_EQ(m.y(), (std::vector<float>{11, 21, 31, 41}));

  m.h.engine->run(0);
  m.h.engine->run(4);  // by a vertex of the compute set that reads the copy
  EXPECT_EQ(m.h.read<float>("y2", 4), (std::vector<float>{8, 8, 8, 8}));
  EXPECT_EQ(m.h.read<float>("w_out", 4), (std::vector<float>{8, 8, 8, 8}));
}

// After a load the copy holds zeros again while a constant source holds its value.
TEST(OperandMirrors, ALoadMakesCopiesStale) {
  Harness h;
  auto c = h.graph.addConstant(Type::F32, {4}, 3.0, "c");
  h.graph.setTileMapping(c, 0);
  auto cc = h.graph.addVariable(Type::F32, {4}, "c_copy");
  h.graph.setTileMapping(cc, 1);
  auto one = h.graph.addConstant(Type::F32, {1}, 1.0, "one");
  h.graph.setTileMapping(one, 1);
  auto y = h.output("y", Type::F32, {4}, 1);
  auto use = h.graph.addComputeSet("use_copy");
  h.graph.addVertex(use, "Add", {{"in0", cc}, {"in1", one}, {"out", y}}, 1);
  h.build({p::Copy(c, cc), p::Execute(use)});
  h.engine->run(0);
  h.engine->run(1);
  EXPECT_EQ(h.read<float>("y", 4), (std::vector<float>{4, 4, 4, 4}));
  h.engine->load(h.device);
  h.engine->run(1);
  EXPECT_EQ(h.read<float>("y", 4), (std::vector<float>{1, 1, 1, 1}));
}

}  // namespace
