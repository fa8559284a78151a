// Elementwise runs (elementwise_runs.hpp): a compute set of small elementwise
// vertices whose operands lie end to end runs as one kernel call per run.
// Each scenario is built twice, with host.elementwiseRuns on and off (one
// call per vertex), and must give the same bytes and modelled cycles, with a
// deferred copy (operand_mirrors.hpp) feeding the vertices.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "codelets/registry.hpp"
#include "elementwise_runs.hpp"
#include "engine_impl.hpp"
#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

constexpr unsigned kRows = 12, kCols = 20;

hwsim::OptionFlags withRuns(bool on) { return {{"host.elementwiseRuns", on ? "true" : "false"}}; }

std::vector<std::uint8_t> bytesOf(const std::vector<float> &v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// mnist-8's bias and Relu: x streamed in, the bias copied to the tiles by a
// deferred copy (no host read of its destination), y = x + bias and z =
// relu(y) as one-row vertices, row r on tile kTileOf[r] (of the small
// model's 4) so that the vertices' order (by tile) is not the order of their
// rows in memory.
struct BiasRelu {
  static constexpr unsigned kTileOf[kRows] = {2, 1, 3, 0, 2, 0, 1, 3, 1, 0, 3, 2};

  explicit BiasRelu(bool runs, const char *activation = "Relu") {
    auto x = h.graph.addVariable(Type::F32, {kRows, kCols}, "x");
    auto y = h.graph.addVariable(Type::F32, {kRows, kCols}, "y");
    auto biasLocal = h.graph.addVariable(Type::F32, {kRows, kCols}, "bias_local");
    auto z = h.graph.addVariable(Type::F32, {kRows, kCols}, "z");
    auto bias = h.input("bias", Type::F32, {kRows, kCols}, 3);
    h.graph.createHostRead("z", z);
    auto add = h.graph.addComputeSet("add");
    auto relu = h.graph.addComputeSet("relu");
    for (std::size_t r = 0; r < kRows; ++r) {
      for (auto t : {x, y, biasLocal, z}) h.graph.setTileMapping(t[r], kTileOf[r]);
      h.graph.addVertex(add, "Add", {{"in0", x[r]}, {"in1", biasLocal[r]}, {"out", y[r]}}, kTileOf[r]);
      h.graph.addVertex(relu, activation, {{"in", y[r]}, {"out", z[r]}}, kTileOf[r]);
    }
    auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, kRows * kCols);
    h.build({p::Sequence{p::Copy(in, x), p::Copy(bias, biasLocal), p::Execute(add), p::Execute(relu)},
             p::Sequence{p::Copy(in, x), p::Execute(add), p::Execute(relu)}},
            withRuns(runs));
    h.engine->connectStream("in", streamed.data());
  }
  std::vector<float> run(unsigned program, const std::vector<float> &input) {
    streamed = input;
    EXPECT_EQ(h.engine->run(program), hwsim::RunStatus::Completed);
    return h.read<float>("z", kRows * kCols);
  }

  Harness h;
  std::vector<float> streamed = std::vector<float>(kRows * kCols, 0.f);
};

// How many compute sets of the engine run as elementwise runs.
std::size_t runsPlanned(const Harness &h) {
  std::size_t n = 0;
  for (const auto &cs : hwsim::Engine::Impl::of(*h.engine).csRuns) n += cs.empty() ? 0 : 1;
  return n;
}

// Values whose bytes tell paths apart: signed zeros, NaN, infinities,
// denormals, and ordinary numbers of both signs.
std::vector<float> awkwardValues(float seed) {
  const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                           -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min(),
                           -std::numeric_limits<float>::denorm_min()};
  std::vector<float> v(kRows * kCols);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v[i] = i % 5 == 0 ? special[(i / 5) % 7] : std::sin(seed + 0.37f * static_cast<float>(i)) * 3.0f;
  }
  return v;
}

TEST(ElementwiseRuns, BiasAndReluGiveTheSameBytesAndCyclesAsOneCallPerVertex) {
  BiasRelu joined(true), perVertex(false);
  for (BiasRelu *m : {&joined, &perVertex}) m->h.write("bias", awkwardValues(100.f));
  std::vector<std::vector<float>> seen[2];
  for (int k = 0; k < 2; ++k) {
    BiasRelu &m = k == 0 ? joined : perVertex;
    // Each run its own input; the copied bias read before and after a host
    // write of its source (the pending copy must hold the old bias until the
    // copy step runs again), and by a program without the copy.
    seen[k].push_back(m.run(0, awkwardValues(1.f)));
    seen[k].push_back(m.run(0, awkwardValues(2.f)));
    m.h.write("bias", awkwardValues(200.f));
    seen[k].push_back(m.run(1, awkwardValues(3.f)));
    seen[k].push_back(m.run(0, awkwardValues(4.f)));
  }
  // The runs formed: each compute set's 12 one-row vertices, whose rows lie
  // end to end in the arena, are one call over all the rows.
  for (const auto &cs : hwsim::Engine::Impl::of(*joined.h.engine).csRuns) {
    if (cs.empty()) continue;
    ASSERT_EQ(cs.runs.size(), 1u);
    EXPECT_EQ(cs.runs[0].numElements, kRows * kCols);
  }
  EXPECT_EQ(runsPlanned(joined.h), 2u);
  EXPECT_EQ(runsPlanned(perVertex.h), 0u);
  ASSERT_EQ(seen[0].size(), seen[1].size());
  for (std::size_t i = 0; i < seen[0].size(); ++i) EXPECT_EQ(bytesOf(seen[0][i]), bytesOf(seen[1][i])) << "run " << i;
  EXPECT_EQ(joined.h.engine->deviceCycles(), perVertex.h.engine->deviceCycles());
  // And the values are relu(x + bias), with the bias of the last copy step.
  const std::vector<float> want[] = {awkwardValues(100.f), awkwardValues(100.f), awkwardValues(100.f),
                                     awkwardValues(200.f)};
  const float seeds[] = {1.f, 2.f, 3.f, 4.f};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::vector<float> x = awkwardValues(seeds[i]);
    for (std::size_t e = 0; e < x.size(); ++e) {
      const float sum = x[e] + want[i][e];
      if (std::isnan(sum)) continue;  // which NaN max() keeps is the kernel's business
      EXPECT_EQ(seen[0][i][e], sum < 0.0f ? 0.0f : sum) << "run " << i << " element " << e;
    }
  }
}

// Vertex r adds 1 to row r - 1 of the same tensor: a vertex reads what
// another writes, so the vertices must run one by one in their order (a
// chain), never as one call over the rows (rows of 3 floats: such a call
// reads, within one vector, elements it has not written yet).
constexpr unsigned kChainCols = 3;

TEST(ElementwiseRuns, VerticesReadingAnotherVertexsOutputAreNotJoined) {
  std::vector<float> got[2];
  for (int k = 0; k < 2; ++k) {
    Harness h;
    auto y = h.input("y", Type::F32, {kRows, kChainCols});
    h.graph.createHostRead("y_out", y);
    auto one = h.input("one", Type::F32, {kRows, kChainCols});
    auto chain = h.graph.addComputeSet("chain");
    // One tile (a vertex reads only its own tile), the vertices in row order.
    for (unsigned r = 1; r < kRows; ++r) h.graph.addVertex(chain, "Add", {{"in0", y[r - 1]}, {"in1", one[r]}, {"out", y[r]}}, 0);
    h.build({p::Execute(chain)}, withRuns(k == 0));
    EXPECT_EQ(runsPlanned(h), 0u);
    h.write("one", std::vector<float>(kRows * kChainCols, 1.0f));
    h.write("y", std::vector<float>(kRows * kChainCols, 0.0f));
    EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
    got[k] = h.read<float>("y_out", kRows * kChainCols);
  }
  EXPECT_EQ(bytesOf(got[0]), bytesOf(got[1]));
  for (std::size_t r = 0; r < kRows; ++r) EXPECT_EQ(got[0][r * kChainCols + kChainCols - 1], static_cast<float>(r)) << "row " << r;
}

// Transcendental functions join too: their kernels compute every element
// on the packet path wherever it lies (kernels/whole_packets.hpp), so a run
// gives each element the bits one call per vertex gives it.
TEST(ElementwiseRuns, TanhAndExpRunsGiveTheBytesOfOneCallPerVertex) {
  for (const char *activation : {"Tanh", "Exp", "Sigmoid"}) {
    BiasRelu joined(true, activation), perVertex(false, activation);
    for (BiasRelu *m : {&joined, &perVertex}) m->h.write("bias", awkwardValues(100.f));
    EXPECT_EQ(runsPlanned(joined.h), 2u) << activation;
    for (float seed : {1.f, 2.f}) {
      const auto got = joined.run(0, awkwardValues(seed));
      EXPECT_EQ(bytesOf(got), bytesOf(perVertex.run(0, awkwardValues(seed)))) << activation << ", seed " << seed;
      const auto x = awkwardValues(seed), bias = awkwardValues(100.f);
      for (std::size_t e = 0; e < x.size(); ++e) {
        const double sum = static_cast<double>(x[e] + bias[e]);
        if (!std::isfinite(sum)) continue;
        const double want = std::string(activation) == "Tanh" ? std::tanh(sum)
                            : std::string(activation) == "Exp" ? std::exp(sum)
                                                               : 1.0 / (1.0 + std::exp(-sum));
        EXPECT_NEAR(got[e], want, 1e-5 * std::max(1.0, std::fabs(want))) << activation << " element " << e;
      }
    }
  }
}

TEST(ElementwiseRuns, OnlyCodeletsComputingEachElementAloneQualify) {
  const auto &lib = hwsim::detail::codeletLibrary();
  const auto qualifies = [&](const char *name) { return hwsim::detail::runsElementwise(lib[*hwsim::detail::findCodelet(name)]); };
  for (const char *name : {"Add", "Mul", "Max", "Less", "Relu", "Neg", "Cast", "Round", "Exp", "Tanh", "Sigmoid"}) {
    EXPECT_TRUE(qualifies(name)) << name;
  }
  // These mix elements.
  for (const char *name : {"MatMul", "Conv", "ReduceSum", "MaxPool", "Softmax"}) EXPECT_FALSE(qualifies(name)) << name;
}

}  // namespace
