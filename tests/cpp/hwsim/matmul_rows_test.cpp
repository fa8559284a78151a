// MatMul rows (matmul_rows.hpp): the vertices multiplying one block of rows
// of a by b's column blocks run as one GEMM against b's blocks joined in a
// buffer of the replica, joined again only after a step or the host may have
// written their bytes. Each scenario runs with host.matMulRows on and off
// (one GEMM per vertex): both must give the product of what the vertices
// read (reference math in double) and the same modelled cycles.
#include <cmath>
#include <set>
#include <string>

#include "engine_impl.hpp"
#include "matmul_rows.hpp"
#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

constexpr std::size_t M = 128, K = 64, N = 96;

// a [rows, depth] x b [depth, columns], in double.
std::vector<double> product(const std::vector<float> &a, const std::vector<float> &b, std::size_t rows,
                            std::size_t depth = K, std::size_t columns = N) {
  std::vector<double> out(rows * columns, 0.0);
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t k = 0; k < depth; ++k) {
      for (std::size_t j = 0; j < columns; ++j) out[i * columns + j] += double(a[i * depth + k]) * b[k * columns + j];
    }
  }
  return out;
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want, const std::string &what,
                double tolerance = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tolerance) << what << ", element " << i;
}

// c = a x w on a GC200, w preloaded: program 0 loads (copies w to the tiles
// that multiply it), program 1 multiplies.
void buildWeightedMatMul(hwsim_test::Harness &h, std::size_t rows, std::size_t depth, std::size_t columns,
                         const hwsim::OptionFlags &options) {
  auto a = hwsim::ops::createMatMulInputLhs(h.graph, Type::F32, {rows, depth}, {depth, columns}, "a", {}, true);
  auto w = hwsim::ops::createMatMulInputRhs(h.graph, Type::F32, {rows, depth}, {depth, columns}, "w", {}, true);
  h.graph.createHostWrite("a", a);
  h.graph.createHostWrite("w", w);
  p::Sequence load, main;
  h.graph.createHostRead("c", hwsim::ops::matMul(h.graph, main, a, w, "mm", {}, Type::F32, &load));
  h.build({load, main}, options);
}

// The rows an engine planned, over every compute set.
std::vector<hwsim::detail::MatMulRow> rowsOf(const hwsim::Engine &engine) {
  std::vector<hwsim::detail::MatMulRow> all;
  for (const auto &cs : hwsim::Engine::Impl::of(engine).matMulRows.rows) all.insert(all.end(), cs.begin(), cs.end());
  return all;
}

// Two matmuls of one a on a GC200: c = a x w, w preloaded (its copies to the
// tiles made by the load program, as the mlp's weights), and d = a x v, v's
// blocks exchanged by every run of `second`; `bump` adds 1 to w in a
// compute set.
struct TwoMatMuls {
  explicit TwoMatMuls(bool rows) {
    hwsim::Graph &g = graph;
    auto a = hwsim::ops::createMatMulInputLhs(g, Type::F32, {M, K}, {K, N}, "a", {}, true);
    auto w = hwsim::ops::createMatMulInputRhs(g, Type::F32, {M, K}, {K, N}, "w", {}, true);
    auto v = hwsim::ops::createTensor(g, Type::F32, {K, N}, "v");
    auto ones = hwsim::ops::createTensor(g, Type::F32, {K, N}, "ones");
    for (const auto &[name, t] : {std::pair{"a", a}, {"w", w}, {"v", v}, {"ones", ones}}) g.createHostWrite(name, t);
    p::Sequence load, first, bump, second;
    auto c = hwsim::ops::matMul(g, first, a, w, "mm_w", {}, Type::F32, &load);
    hwsim::ops::binaryInPlace(g, bump, "Add", w, ones);
    auto d = hwsim::ops::matMul(g, second, a, v, "mm_v");
    g.createHostRead("c", c);
    g.createHostRead("d", d);
    const hwsim::OptionFlags options{{"host.matMulRows", rows ? "true" : "false"}};
    exe = hwsim::compileGraph(g, {load, first, bump, second}, options);
    engine = std::make_unique<hwsim::Engine>(exe, options);
    EXPECT_TRUE(device.attach());
    engine->load(device);
    write("ones", std::vector<float>(K * N, 1.0f));
  }
  void write(const char *name, const std::vector<float> &values) { engine->writeTensor(name, values.data(), values.data() + values.size()); }
  std::vector<float> run(unsigned program, const char *out) {
    EXPECT_EQ(engine->run(program), hwsim::RunStatus::Completed);
    std::vector<float> got(M * N);
    engine->readTensor(out, got.data(), got.data() + got.size());
    return got;
  }
  std::vector<hwsim::detail::MatMulRow> rows() const { return rowsOf(*engine); }

  hwsim::Graph graph{hwsim::Target::gc200()};
  hwsim::Device device = hwsim::DeviceManager::createIpuModelDevice(hwsim::Target::gc200());
  hwsim::Executable exe;
  std::unique_ptr<hwsim::Engine> engine;
};

TEST(MatMulRows, PreloadedWeightsRunAsRowsOfJoinedColumns) {
  TwoMatMuls joined(true), perVertex(false);
  // mm_w's plan puts w's 96 columns in blocks of 32 on their own tiles:
  // every block of rows of a is one row of 3 vertices, all of them reading
  // w where it lives, so they share one joined b. mm_v reads the copies its
  // exchange makes at each run: no rows.
  const auto rows = joined.rows();
  ASSERT_GE(rows.size(), 2u);
  std::uint64_t rowsOfA = 0;
  for (const auto &row : rows) {
    EXPECT_EQ(row.vertices, 3u);
    EXPECT_EQ(row.outShape[1], N);
    EXPECT_EQ(row.joinedB, rows[0].joinedB);
    rowsOfA += row.outShape[0];
  }
  EXPECT_EQ(rowsOfA, M);
  EXPECT_EQ(hwsim::Engine::Impl::of(*joined.engine).matMulRows.joinedBs.size(), 1u);
  EXPECT_TRUE(perVertex.rows().empty());
}

TEST(MatMulRows, ProductsFollowEveryWriteOfTheirB) {
  const auto x1 = hwsim_test::randomFloats(M * K, -1, 1, 1), x2 = hwsim_test::randomFloats(M * K, -1, 1, 2);
  const auto w1 = hwsim_test::randomFloats(K * N, -1, 1, 3), w2 = hwsim_test::randomFloats(K * N, -1, 1, 4);
  const auto v1 = hwsim_test::randomFloats(K * N, -1, 1, 5);
  std::vector<float> w3 = w2;
  for (float &e : w3) e += 1.0f;
  TwoMatMuls joined(true), perVertex(false);
  for (TwoMatMuls *m : {&joined, &perVertex}) {
    SCOPED_TRACE(m == &joined ? "rows" : "per vertex");
    m->write("w", w1);
    EXPECT_EQ(m->engine->run(0), hwsim::RunStatus::Completed);  // load: w's copies
    m->write("a", x1);
    expectNear(m->run(1, "c"), product(x1, w1, M), "x1 w1");
    m->write("a", x2);
    expectNear(m->run(1, "c"), product(x2, w1, M), "x2 w1");
    // The host writes w without the load program: the first block of rows
    // multiplies w where it lives, the others still their copies of w1 (so
    // the rows read different bytes than their joined b holds: each of
    // them joins it again or runs vertex by vertex).
    m->write("w", w2);
    const std::vector<float> mixed = m->run(1, "c");
    const auto withW2 = product(x2, w2, M), withW1 = product(x2, w1, M);
    const std::uint64_t firstBlock = joined.rows().front().outShape[0];
    for (std::size_t i = 0; i < M; ++i) {
      const std::vector<double> &want = i < firstBlock ? withW2 : withW1;
      for (std::size_t j = 0; j < N; ++j) ASSERT_NEAR(mixed[i * N + j], want[i * N + j], 1e-4) << "row " << i << " column " << j;
    }
    EXPECT_EQ(m->engine->run(0), hwsim::RunStatus::Completed);  // load again: every copy holds w2
    expectNear(m->run(1, "c"), withW2, "x2 w2");
    // A compute set adds 1 to w, the load program copies it again.
    EXPECT_EQ(m->engine->run(2), hwsim::RunStatus::Completed);
    EXPECT_EQ(m->engine->run(0), hwsim::RunStatus::Completed);
    expectNear(m->run(1, "c"), product(x2, w3, M), "x2 w2+1");
    // v, exchanged at each run.
    m->write("v", v1);
    expectNear(m->run(3, "d"), product(x2, v1, M), "x2 v1");
    expectNear(m->run(1, "c"), product(x2, w3, M), "x2 w2+1 after v's");
  }
  EXPECT_EQ(joined.engine->deviceCycles(), perVertex.engine->deviceCycles());
}

// One block of rows: every vertex reads w where it lives, so a host write of
// w must reach the row through its joined b.
TEST(MatMulRows, OneRowSeesTheHostsWritesOfItsB) {
  constexpr std::size_t kRows = 32;
  const auto x = hwsim_test::randomFloats(kRows * K, -1, 1, 6);
  const auto w1 = hwsim_test::randomFloats(K * N, -1, 1, 7), w2 = hwsim_test::randomFloats(K * N, -1, 1, 8);
  for (bool rows : {true, false}) {
    SCOPED_TRACE(rows ? "rows" : "per vertex");
    hwsim_test::Harness h(hwsim::Target::gc200());
    buildWeightedMatMul(h, kRows, K, N, {{"host.matMulRows", rows ? "true" : "false"}});
    EXPECT_EQ(rowsOf(*h.engine).size(), rows ? 1u : 0u);
    h.write("a", x);
    h.write("w", w1);
    EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
    EXPECT_EQ(h.engine->run(1), hwsim::RunStatus::Completed);
    expectNear(h.read<float>("c", kRows * N), product(x, w1, kRows), "w1");
    h.write("w", w2);
    EXPECT_EQ(h.engine->run(1), hwsim::RunStatus::Completed);
    expectNear(h.read<float>("c", kRows * N), product(x, w2, kRows), "w2");
  }
}

// One row where the host has two threads: cut into two parts of 16 rows of
// a and out, each its own GEMM against the one joined b, which the pool may
// run side by side; the products follow a host write of w. With one thread
// the row stays whole.
TEST(MatMulRows, OneRowIsCutIntoPartsForTwoThreads) {
  // Enough work (about 40 us) that the gate's trial runs take the pool.
  constexpr std::size_t kRows = 32, kDepth = 512, kColumns = 128;
  const auto x = hwsim_test::randomFloats(kRows * kDepth, -1, 1, 11);
  const auto w1 = hwsim_test::randomFloats(kDepth * kColumns, -1, 1, 12), w2 = hwsim_test::randomFloats(kDepth * kColumns, -1, 1, 13);
  for (const char *threads : {"2", "1"}) {
    SCOPED_TRACE(std::string("host.threads ") + threads);
    hwsim_test::Harness h(hwsim::Target::gc200());
    buildWeightedMatMul(h, kRows, kDepth, kColumns, {{"host.threads", threads}});
    ASSERT_EQ(rowsOf(*h.engine).size(), 1u);
    std::vector<hwsim::detail::MatMulRowPart> parts;
    for (const auto &cs : hwsim::Engine::Impl::of(*h.engine).matMulRows.parts) parts.insert(parts.end(), cs.begin(), cs.end());
    if (std::string(threads) == "2") {
      ASSERT_EQ(parts.size(), 2u);
      EXPECT_EQ(parts[0].firstRow, 0u);
      EXPECT_EQ(parts[1].firstRow, kRows / 2);
      EXPECT_EQ(parts[1].aShape, (hwsim::Shape{kRows / 2, kDepth}));
      EXPECT_EQ(parts[1].outShape, (hwsim::Shape{kRows / 2, kColumns}));
    } else {
      EXPECT_TRUE(parts.empty());
    }
    h.write("a", x);
    h.write("w", w1);
    EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
    for (int run = 0; run < 8; ++run) {  // past the gate's timing and trial runs
      EXPECT_EQ(h.engine->run(1), hwsim::RunStatus::Completed);
      expectNear(h.read<float>("c", kRows * kColumns), product(x, w1, kRows, kDepth, kColumns), "w1, run " + std::to_string(run), 1e-3);
    }
    h.write("w", w2);
    EXPECT_EQ(h.engine->run(1), hwsim::RunStatus::Completed);
    expectNear(h.read<float>("c", kRows * kColumns), product(x, w2, kRows, kDepth, kColumns), "w2", 1e-3);
  }
}

// Big enough for the worker pool (its gate sends a compute set of more than
// 120 us of work there after timing three runs): where the process may use
// two CPUs, the rows run on two threads, each reading the one joined b the
// replica's thread made (the test is labelled concurrency: TSan runs it).
TEST(MatMulRows, RowsOnThePoolReadOneJoinedB) {
  constexpr std::size_t kRows = 512, kDepth = 512, kColumns = 128;
  const auto x = hwsim_test::randomFloats(kRows * kDepth, -1, 1, 9), w = hwsim_test::randomFloats(kDepth * kColumns, -1, 1, 10);
  hwsim_test::Harness h(hwsim::Target::gc200());
  buildWeightedMatMul(h, kRows, kDepth, kColumns, {{"host.threads", "2"}});
  ASSERT_GE(rowsOf(*h.engine).size(), 2u);
  h.write("a", x);
  h.write("w", w);
  EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
  const auto want = product(x, w, kRows, kDepth, kColumns);
  for (int run = 0; run < 6; ++run) {
    EXPECT_EQ(h.engine->run(1), hwsim::RunStatus::Completed);
    expectNear(h.read<float>("c", kRows * kColumns), want, "run " + std::to_string(run), 1e-3);
  }
}

}  // namespace
