// Vertex operands as the interpreter hands them to codelets (prepared once
// at engine creation, vertex_operands.hpp): views that are not contiguous
// gathered for In fields, gathered and scattered back for InOut fields,
// scattered for Out fields (and for a MatMul that does not accumulate,
// whose out is written only); an input copied by the same program read through
// its copy's source; each checked against reference math over two runs with
// new host data in between.
#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

TEST(VertexOperands, ScatteredAndMirroredOperandsReachTheCodelet) {
  Harness h;
  // MatMul on tile 0: a transposed (In, scattered), b (In, contiguous), two
  // columns of acc (InOut, scattered), accumulating.
  auto a = h.input("a", Type::F32, {3, 2}, 0);
  auto b = h.input("b", Type::F32, {3, 2}, 0);
  auto acc = h.input("acc", Type::F32, {2, 4}, 0);
  h.graph.createHostRead("acc_out", acc);
  // Add on tile 1: x's copy (In, read through the copy's source) plus y into
  // z transposed (Out, scattered).
  auto x = h.input("x", Type::F32, {2, 3}, 0);
  auto xc = h.graph.addVariable(Type::F32, {2, 3}, "xc");
  h.graph.setTileMapping(xc, 1);
  auto y = h.input("y", Type::F32, {2, 3}, 1);
  auto z = h.output("z", Type::F32, {3, 2}, 1);
  // MatMul on tile 2, not accumulating: two columns of c2 (scattered) are
  // overwritten, the others kept.
  auto a2 = h.input("a2", Type::F32, {2, 3}, 2);
  auto b2 = h.input("b2", Type::F32, {3, 2}, 2);
  auto c2 = h.input("c2", Type::F32, {2, 3}, 2);
  h.graph.createHostRead("c2_out", c2);
  auto cs = h.graph.addComputeSet("three");
  auto mm = h.graph.addVertex(cs, "MatMul", {{"a", a.transpose()}, {"b", b}, {"out", acc.slice(1, 3, 1)}}, 0);
  h.graph.setInitialValue(mm, "accumulate", 1.0);
  h.graph.addVertex(cs, "MatMul", {{"a", a2}, {"b", b2}, {"out", c2.slice(0, 2, 1)}}, 2);
  h.graph.addVertex(cs, "Add", {{"in0", xc}, {"in1", y}, {"out", z.transpose()}}, 1);
  h.build({p::Sequence{p::Copy(x, xc), p::Execute(cs)}});

  for (unsigned run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    const auto av = hwsim_test::randomFloats(6, -1, 1, 10 + run), bv = hwsim_test::randomFloats(6, -1, 1, 20 + run);
    const auto accv = hwsim_test::randomFloats(8, -1, 1, 30 + run);
    const auto xv = hwsim_test::randomFloats(6, -1, 1, 40 + run), yv = hwsim_test::randomFloats(6, -1, 1, 50 + run);
    h.write("a", av);
    h.write("b", bv);
    h.write("acc", accv);
    h.write("x", xv);
    h.write("y", yv);
    const auto a2v = hwsim_test::randomFloats(6, -1, 1, 60 + run), b2v = hwsim_test::randomFloats(6, -1, 1, 70 + run);
    const auto c2v = hwsim_test::randomFloats(6, -1, 1, 80 + run);
    h.write("a2", a2v);
    h.write("b2", b2v);
    h.write("c2", c2v);
    h.engine->run(0);

    std::vector<float> wantAcc = accv;
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 2; ++j) {
        float sum = 0;
        for (std::size_t k = 0; k < 3; ++k) sum += av[k * 2 + i] * bv[k * 2 + j];
        wantAcc[i * 4 + 1 + j] += sum;
      }
    }
    const auto gotAcc = h.read<float>("acc_out", 8);
    for (std::size_t e = 0; e < 8; ++e) EXPECT_NEAR(gotAcc[e], wantAcc[e], 1e-5) << "acc element " << e;

    std::vector<float> wantC2 = c2v;
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 2; ++j) {
        float sum = 0;
        for (std::size_t k = 0; k < 3; ++k) sum += a2v[i * 3 + k] * b2v[k * 2 + j];
        wantC2[i * 3 + j] = sum;
      }
    }
    const auto gotC2 = h.read<float>("c2_out", 6);
    for (std::size_t e = 0; e < 6; ++e) EXPECT_NEAR(gotC2[e], wantC2[e], 1e-5) << "c2 element " << e;

    std::vector<float> wantZ(6);
    for (std::size_t i = 0; i < 2; ++i) {
      for (std::size_t j = 0; j < 3; ++j) wantZ[j * 2 + i] = xv[i * 3 + j] + yv[i * 3 + j];
    }
    EXPECT_EQ(h.read<float>("z", 6), wantZ);
  }
}

}  // namespace
