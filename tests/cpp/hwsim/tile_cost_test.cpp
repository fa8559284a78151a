// Exact modelled cycles of small graphs from docs/hwsim.md's formulas: the
// six worker contexts sharing a tile's cycles, and reductions in two stages
// across tiles.
#include <cmath>
#include <map>

#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

// Cycles of each step, by name (each name expected once).
std::map<std::string, std::uint64_t> stepCycles(const hwsim::Executable &exe) {
  std::map<std::string, std::uint64_t> cycles;
  for (const auto &s : exe.programSteps()) {
    EXPECT_EQ(cycles.count(s.name), 0u) << s.name;
    cycles[s.name] = s.cycles;
  }
  return cycles;
}

// Fill vertices cost vertexOverheadCycles (40) + bytes / 8: n F32 elements
// are n / 2 instructions of work. One compute set, all on tile 0.
std::uint64_t fillCycles(const std::vector<std::size_t> &elementsPerVertex) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto cs = g.addComputeSet("fills");
  for (std::size_t i = 0; i < elementsPerVertex.size(); ++i) {
    auto t = g.addVariable(Type::F32, {elementsPerVertex[i]}, "t" + std::to_string(i));
    g.setTileMapping(t, 0);
    auto v = g.addVertex(cs, "Fill", {{"out", t}}, 0);
    g.setInitialValue(v, "value", 1.0);
  }
  return stepCycles(hwsim::compileGraph(g, {p::Execute(cs)})).at("fills");
}

// Vertices launch one after another (40 cycles each); a worker issues every
// 6th cycle, so a vertex's work W runs as min(6, W) pieces of 6W/min(6, W)
// cycles on the workers free first. Plus the internal sync (150).
TEST(TileCost, WorkerContextsShareTheTilesCycles) {
  // One vertex of 1200 instructions: all six workers, 1200 cycles.
  EXPECT_EQ(fillCycles({2400}), 40 + 1200 + 150u);
  // One instruction still takes a worker's whole turn: 6 cycles.
  EXPECT_EQ(fillCycles({2}), 40 + 6 + 150u);
  // Six one-instruction vertices run side by side on the six workers.
  EXPECT_EQ(fillCycles({2, 2, 2, 2, 2, 2}), 6 * 40 + 6 + 150u);
  // A seventh waits for a worker: two turns.
  EXPECT_EQ(fillCycles({2, 2, 2, 2, 2, 2, 2}), 7 * 40 + 12 + 150u);
  // 1200 instructions on every worker, then one more turn on one of them.
  EXPECT_EQ(fillCycles({2400, 2}), 2 * 40 + 1206 + 150u);
  // Three instructions: three workers for one turn each.
  EXPECT_EQ(fillCycles({6}), 40 + 6 + 150u);
}

// ReduceSum of x [4, 4096] F32 over all of it on the 4-tile model: x's rows
// lie one per tile (ops::createTensor), so each tile reduces its row where
// it is (stage 1: 4096 / 2 = 2048 instructions, no exchange); tile 0 then
// receives the three other partials (12 bytes: 3 cycles at 4 B/cycle) and
// adds the four (2 instructions: one worker turn).
TEST(TileCost, ReductionRunsInTwoStagesAcrossTiles) {
  const std::size_t rows = 4, cols = 4096;
  hwsim_test::Harness h(hwsim::Target::smallIpuModel());
  auto x = hwsim::ops::createTensor(h.graph, Type::F32, {rows, cols}, "x");
  h.graph.createHostWrite("x", x);
  p::Sequence prog;
  auto sum = hwsim::ops::reduce(h.graph, prog, "ReduceSum", x, {0, 1}, "sum");
  auto colMax = hwsim::ops::reduce(h.graph, prog, "ReduceMax", x, {0}, "colmax");
  auto rowMean = hwsim::ops::reduce(h.graph, prog, "ReduceMean", x, {1}, "rowmean");
  h.graph.createHostRead("sum", sum);
  h.graph.createHostRead("colmax", colMax);
  h.graph.createHostRead("rowmean", rowMean);
  h.build({prog});
  const auto cycles = stepCycles(h.exe);
  EXPECT_EQ(cycles.count("sum/exchange_in"), 0u);
  EXPECT_EQ(cycles.at("sum/partial"), 40 + 2048 + 150u);
  EXPECT_EQ(cycles.at("sum/exchange_partials"), 3 + 150u);
  EXPECT_EQ(cycles.at("sum"), 40 + 6 + 150u);
  // Over rows only: each tile's partial is a whole row; the four tiles
  // each gather a quarter of the columns of the four partials (3 x 1024
  // elements from the others: 3072 cycles) and take their maximum (4096
  // elements: 2048 instructions).
  EXPECT_EQ(cycles.at("colmax/partial"), 40 + 2048 + 150u);
  EXPECT_EQ(cycles.at("colmax/exchange_partials"), 3072 + 150u);
  EXPECT_EQ(cycles.at("colmax"), 40 + 2048 + 150u);
  // The outermost reduced dimension of the row means is the last one: four
  // groups of 1024 columns, each gathered onto tiles 0-3 from all four rows'
  // tiles (a strided slice is copied: the busiest tile receives 3 x 1024
  // elements).
  EXPECT_EQ(cycles.at("rowmean/exchange_in"), 3072 + 150u);

  const auto in = hwsim_test::randomFloats(rows * cols, -1, 1, 31);
  h.write("x", in);
  h.engine->run(0);
  double total = 0;
  std::vector<double> rowTotal(rows, 0.0);
  std::vector<float> wantMax(cols, -INFINITY);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      total += in[r * cols + c];
      rowTotal[r] += in[r * cols + c];
      wantMax[c] = std::max(wantMax[c], in[r * cols + c]);
    }
  }
  EXPECT_NEAR(h.read<float>("sum", 1)[0], total, 1e-2);
  EXPECT_EQ(h.read<float>("colmax", cols), wantMax);
  const auto means = h.read<float>("rowmean", rows);
  for (std::size_t r = 0; r < rows; ++r) EXPECT_NEAR(means[r], rowTotal[r] / cols, 1e-5) << r;
}

// Small reductions, and means that cannot combine (integers), stay on one tile.
TEST(TileCost, SmallOrIntegerMeanReductionsStayOnOneTile) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto small = hwsim::ops::createTensor(g, Type::F32, {4, 16}, "small");
  auto ints = hwsim::ops::createTensor(g, Type::S32, {4, 4096}, "ints");
  p::Sequence prog;
  hwsim::ops::reduce(g, prog, "ReduceSum", small, {0}, "small_sum");
  hwsim::ops::reduce(g, prog, "ReduceMean", ints, {0}, "int_mean");
  const auto cycles = stepCycles(hwsim::compileGraph(g, {prog}));
  EXPECT_EQ(cycles.count("small_sum/partial"), 0u);
  EXPECT_EQ(cycles.count("int_mean/partial"), 0u);
  EXPECT_EQ(cycles.count("int_mean"), 1u);
}

}  // namespace
