// hwsim::ops: the example models' building blocks against reference math,
// including an mlp split over two IPUs (the pipeline2 layout).
#include <array>
#include <cmath>

#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

std::vector<double> mlpReference(const std::vector<float> &x, const std::vector<float> &w1, const std::vector<float> &b1,
                                 const std::vector<float> &w2, const std::vector<float> &b2, std::size_t B, std::size_t I,
                                 std::size_t H, std::size_t O) {
  std::vector<double> out(B * O);
  for (std::size_t r = 0; r < B; ++r) {
    std::vector<double> h(H), o(O);
    for (std::size_t j = 0; j < H; ++j) {
      double s = b1[j];
      for (std::size_t k = 0; k < I; ++k) s += double(x[r * I + k]) * w1[k * H + j];
      h[j] = std::max(s, 0.0);
    }
    double m = -1e300, z = 0;
    for (std::size_t j = 0; j < O; ++j) {
      double s = b2[j];
      for (std::size_t k = 0; k < H; ++k) s += h[k] * w2[k * O + j];
      o[j] = s;
      m = std::max(m, s);
    }
    for (std::size_t j = 0; j < O; ++j) z += std::exp(o[j] - m);
    for (std::size_t j = 0; j < O; ++j) out[r * O + j] = std::exp(o[j] - m) / z;
  }
  return out;
}

void runMlp(unsigned ipus) {
  const std::size_t B = 4, I = 784, H = 128, O = 10;
  hwsim::Target target = hwsim::Target::gc200(ipus);
  hwsim::Graph g(target);
  const unsigned perIpu = target.tilesPerIpu;
  const hwsim::ops::TileRange first{0, perIpu}, second{ipus == 2 ? perIpu : 0, perIpu};
  auto image = hwsim::ops::createTensor(g, Type::F32, {B, I}, "image", first);
  auto w1 = hwsim::ops::createTensor(g, Type::F32, {I, H}, "w1", first);
  auto b1 = hwsim::ops::createTensor(g, Type::F32, {H}, "b1", first);
  auto w2 = hwsim::ops::createTensor(g, Type::F32, {H, O}, "w2", second);
  auto b2 = hwsim::ops::createTensor(g, Type::F32, {O}, "b2", second);
  p::Sequence load, main;
  for (auto &[name, t] : std::vector<std::pair<std::string, hwsim::Tensor>>{{"w1", w1}, {"b1", b1}, {"w2", w2}, {"b2", b2}}) {
    load.add(p::Copy(g.addHostToDeviceFIFO(name, Type::F32, t.numElements()), t));
  }
  main.add(p::Copy(g.addHostToDeviceFIFO("image", Type::F32, B * I), image));
  auto h = hwsim::ops::matMul(g, main, image, w1, "layer1", first);
  auto hb = hwsim::ops::binary(g, main, "Add", h, b1, "bias1");
  auto hr = hwsim::ops::unary(g, main, "Relu", hb, "relu");
  auto o = hwsim::ops::matMul(g, main, hr, w2, "layer2", second);
  hwsim::ops::binaryInPlace(g, main, "Add", o, b2);
  auto probs = hwsim::ops::softmax(g, main, o, "probs", second);
  main.add(p::Copy(probs, g.addDeviceToHostFIFO("probs", Type::F32, B * O)));
  hwsim::Engine e(g, {load, main});
  auto dev = hwsim::DeviceManager::createIpuModelDevice(target);
  ASSERT_TRUE(dev.attach());
  e.load(dev);
  const auto x = hwsim_test::randomFloats(B * I, 0, 1, 1), vw1 = hwsim_test::randomFloats(I * H, -0.1f, 0.1f, 2),
             vb1 = hwsim_test::randomFloats(H, -0.1f, 0.1f, 3), vw2 = hwsim_test::randomFloats(H * O, -0.3f, 0.3f, 4),
             vb2 = hwsim_test::randomFloats(O, -0.1f, 0.1f, 5);
  std::vector<float> out(B * O);
  e.connectStream("image", const_cast<float *>(x.data()));
  e.connectStream("w1", const_cast<float *>(vw1.data()));
  e.connectStream("b1", const_cast<float *>(vb1.data()));
  e.connectStream("w2", const_cast<float *>(vw2.data()));
  e.connectStream("b2", const_cast<float *>(vb2.data()));
  e.connectStream("probs", out.data());
  e.run(0);
  e.run(1);
  const auto want = mlpReference(x, vw1, vb1, vw2, vb2, B, I, H, O);
  for (std::size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], want[i], 1e-5) << i;
}

TEST(Ops, MlpOnOneIpuMatchesReference) { runMlp(1); }
TEST(Ops, MlpPipelinedOverTwoIpusMatchesReference) { runMlp(2); }

TEST(Ops, LargeMatMulSpreadsOverTilesAndMatches) {
  const std::size_t M = 96, K = 64, N = 160;
  hwsim::Graph g(hwsim::Target::gc200());
  auto a = hwsim::ops::createTensor(g, Type::F32, {M, K}, "a");
  auto b = hwsim::ops::createTensor(g, Type::F32, {K, N}, "b");
  g.createHostWrite("a", a);
  g.createHostWrite("b", b);
  p::Sequence prog;
  auto c = hwsim::ops::matMul(g, prog, a, b, "mm");
  g.createHostRead("c", c);
  auto sum = hwsim::ops::reduce(g, prog, "ReduceSum", c, {0}, "colsum");
  g.createHostRead("sum", sum);
  hwsim::Engine e(g, {prog});
  auto dev = hwsim::DeviceManager::createIpuModelDevice(hwsim::Target::gc200());
  ASSERT_TRUE(dev.attach());
  e.load(dev);
  const auto x = hwsim_test::randomFloats(M * K, -1, 1, 8), y = hwsim_test::randomFloats(K * N, -1, 1, 9);
  e.writeTensor("a", x.data(), x.data() + x.size());
  e.writeTensor("b", y.data(), y.data() + y.size());
  e.run(0);
  std::vector<float> got(M * N), colsum(N);
  e.readTensor("c", got.data(), got.data() + got.size());
  e.readTensor("sum", colsum.data(), colsum.data() + N);
  std::vector<double> want(M * N, 0);
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 0; j < N; ++j) want[i * N + j] += double(x[i * K + k]) * y[k * N + j];
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  for (std::size_t j = 0; j < N; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < M; ++i) s += want[i * N + j];
    ASSERT_NEAR(colsum[j], s, 1e-3);
  }
  std::vector<unsigned> used;
  for (auto bytes : e.getExecutable().memoryPerTile()) used.push_back(bytes > 0);
  EXPECT_GT(std::count(used.begin(), used.end(), 1u), 10);
}

// Operands made by createMatMulInputLhs/Rhs are multiplied where they lie:
// the same product, and no exchange step for them in the program.
TEST(Ops, MatMulInputsCreatedInPlaceNeedNoExchange) {
  const std::size_t M = 64, K = 48, N = 96;
  hwsim::Graph g(hwsim::Target::gc200());
  auto a = hwsim::ops::createMatMulInputLhs(g, Type::F32, {M, K}, {K, N}, "a");
  auto b = hwsim::ops::createMatMulInputRhs(g, Type::F32, {M, K}, {K, N}, "b");
  ASSERT_EQ(a.shape(), (hwsim::Shape{M, K}));
  ASSERT_EQ(b.shape(), (hwsim::Shape{K, N}));
  g.createHostWrite("a", a);
  g.createHostWrite("b", b);
  p::Sequence prog;
  auto c = hwsim::ops::matMul(g, prog, a, b, "mm");
  g.createHostRead("c", c);
  hwsim::Engine e(g, {prog});
  // The grid is 2 x 3 blocks: b's column blocks live on row 0's tiles only,
  // so row 1 still receives them; a's row blocks live on column 0's tiles.
  EXPECT_FALSE(e.getSimulatedErrorLocations("mm/exchange_b").empty());
  auto dev = hwsim::DeviceManager::createIpuModelDevice(hwsim::Target::gc200());
  ASSERT_TRUE(dev.attach());
  e.load(dev);
  const auto x = hwsim_test::randomFloats(M * K, -1, 1, 10), y = hwsim_test::randomFloats(K * N, -1, 1, 11);
  e.writeTensor("a", x.data(), x.data() + x.size());
  e.writeTensor("b", y.data(), y.data() + y.size());
  e.run(0);
  std::vector<float> got(M * N);
  e.readTensor("c", got.data(), got.data() + got.size());
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      double want = 0;
      for (std::size_t k = 0; k < K; ++k) want += double(x[i * K + k]) * y[k * N + j];
      ASSERT_NEAR(got[i * N + j], want, 1e-4) << i << "," << j;
    }
  }
}

TEST(Ops, MatMulOfOneRowWithInPlaceWeightsExchangesOnlyTheRow) {
  const std::size_t M = 1, K = 784, N = 128;
  hwsim::Graph g(hwsim::Target::gc200());
  auto a = hwsim::ops::createMatMulInputLhs(g, Type::F32, {M, K}, {K, N}, "a");
  auto b = hwsim::ops::createMatMulInputRhs(g, Type::F32, {M, K}, {K, N}, "b");
  g.createHostWrite("a", a);
  g.createHostWrite("b", b);
  p::Sequence prog;
  auto c = hwsim::ops::matMul(g, prog, a, b, "mm");
  g.createHostRead("c", c);
  hwsim::Engine e(g, {prog});
  EXPECT_TRUE(e.getSimulatedErrorLocations("mm/exchange_b").empty());   // weights stay put
  EXPECT_FALSE(e.getSimulatedErrorLocations("mm/exchange_a").empty());  // the row goes to every column block
  auto dev = hwsim::DeviceManager::createIpuModelDevice(hwsim::Target::gc200());
  ASSERT_TRUE(dev.attach());
  e.load(dev);
  const auto x = hwsim_test::randomFloats(M * K, -1, 1, 12), y = hwsim_test::randomFloats(K * N, -1, 1, 13);
  e.writeTensor("a", x.data(), x.data() + x.size());
  e.writeTensor("b", y.data(), y.data() + y.size());
  e.run(0);
  std::vector<float> got(N);
  e.readTensor("c", got.data(), got.data() + got.size());
  for (std::size_t j = 0; j < N; ++j) {
    double want = 0;
    for (std::size_t k = 0; k < K; ++k) want += double(x[k]) * y[k * N + j];
    ASSERT_NEAR(got[j], want, 1e-3) << j;
  }
}

// Gather and GatherElements of a tensor spread over many tiles, with indices
// living elsewhere: both are brought to one tile and picked there.
TEST(Ops, GatherAndGatherElementsOfASpreadTensor) {
  const std::size_t rows = 64, cols = 48;
  hwsim::Graph g(hwsim::Target::gc200());
  auto data = hwsim::ops::createTensor(g, Type::F32, {rows, cols}, "data");
  auto indices = hwsim::ops::createTensor(g, Type::S32, {3}, "indices", {5, 1});
  auto elementIndices = hwsim::ops::createTensor(g, Type::S32, {2, cols}, "element_indices", {7, 1});
  for (const auto &[name, t] : std::vector<std::pair<std::string, hwsim::Tensor>>{
           {"data", data}, {"indices", indices}, {"element_indices", elementIndices}}) {
    g.createHostWrite(name, t);
  }
  p::Sequence prog;
  auto picked = hwsim::ops::gather(g, prog, data, indices, 0, "picked");
  auto columns = hwsim::ops::gather(g, prog, data, indices, 1, "columns");
  auto elements = hwsim::ops::gatherElements(g, prog, data, elementIndices, 0, "elements");
  EXPECT_EQ(picked.shape(), (hwsim::Shape{3, cols}));
  EXPECT_EQ(columns.shape(), (hwsim::Shape{rows, 3}));
  g.createHostRead("picked", picked);
  g.createHostRead("columns", columns);
  g.createHostRead("elements", elements);
  hwsim::Engine e(g, {prog});
  auto dev = hwsim::DeviceManager::createIpuModelDevice(hwsim::Target::gc200());
  ASSERT_TRUE(dev.attach());
  e.load(dev);
  const auto x = hwsim_test::randomFloats(rows * cols, -1, 1, 17);
  const std::vector<std::int32_t> idx = {63, -1, 2};
  std::vector<std::int32_t> elementIdx(2 * cols);
  for (std::size_t i = 0; i < elementIdx.size(); ++i) elementIdx[i] = static_cast<std::int32_t>((i * 7) % rows);
  e.writeTensor("data", x.data(), x.data() + x.size());
  e.writeTensor("indices", idx.data(), idx.data() + idx.size());
  e.writeTensor("element_indices", elementIdx.data(), elementIdx.data() + elementIdx.size());
  e.run(0);
  std::vector<float> gotPicked(3 * cols), gotColumns(rows * 3), gotElements(2 * cols);
  e.readTensor("picked", gotPicked.data(), gotPicked.data() + gotPicked.size());
  e.readTensor("columns", gotColumns.data(), gotColumns.data() + gotColumns.size());
  e.readTensor("elements", gotElements.data(), gotElements.data() + gotElements.size());
  const std::size_t resolvedRows[] = {63, 63, 2};
  for (std::size_t k = 0; k < 3; ++k) {
    for (std::size_t c = 0; c < cols; ++c) ASSERT_EQ(gotPicked[k * cols + c], x[resolvedRows[k] * cols + c]);
  }
  const std::size_t resolvedCols[] = {0, 47, 2};  // 63 is beyond the 48 columns: zeros
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t k = 0; k < 3; ++k) {
      ASSERT_EQ(gotColumns[r * 3 + k], k == 0 ? 0.0f : x[r * cols + resolvedCols[k]]) << r << " " << k;
    }
  }
  for (std::size_t i = 0; i < elementIdx.size(); ++i) {
    ASSERT_EQ(gotElements[i], x[static_cast<std::size_t>(elementIdx[i]) * cols + i % cols]) << i;
  }
}

}  // namespace

// A scalar operand of an elementwise op spread over every tile reaches them
// all in one exchange phase: one Copy step, costed as the busiest tile's 4
// received bytes plus one internal sync (docs/hwsim.md's formula), not a
// step and a sync per tile.
TEST(Ops, BroadcastOperandIsExchangedInOneStep) {
  const hwsim::Target target = hwsim::Target::gc200();
  const std::size_t n = 1 << 20;
  hwsim::Graph g(target);
  auto x = hwsim::ops::createTensor(g, Type::F32, {1024, n / 1024}, "x");
  auto one = g.addConstant(Type::F32, {1}, 1.0, "one");
  g.setTileMapping(one, 0);
  g.createHostWrite("x", x);
  p::Sequence prog;
  auto y = hwsim::ops::binary(g, prog, "Add", x, one, "add");
  g.createHostRead("y", y);
  const hwsim::Executable exe = hwsim::compileGraph(g, {prog});
  std::vector<hwsim::ProgramStepInfo> copies;
  for (const auto &s : exe.programSteps()) {
    if (s.kind == "Copy") copies.push_back(s);
  }
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].name, "add/broadcast");
  const auto exchange = static_cast<std::uint64_t>(std::ceil(4 / target.exchangeBytesPerCycle));
  EXPECT_EQ(copies[0].cycles, exchange + static_cast<std::uint64_t>(target.internalSyncCycles));

  hwsim::Engine e(exe);
  auto dev = hwsim::DeviceManager::createIpuModelDevice(target);
  ASSERT_TRUE(dev.attach());
  e.load(dev);
  const auto in = hwsim_test::randomFloats(n, -1, 1, 14);
  e.writeTensor("x", in.data(), in.data() + in.size());
  e.run(0);
  std::vector<float> got(n);
  e.readTensor("y", got.data(), got.data() + got.size());
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], in[i] + 1.0f) << i;
}

// Shapes whose operands fit the device but not one tile's share of an
// output block without splitting K: each compiles, and the product of
// [1,4096] by [4096,4096] (split K, partials summed on the tiles) matches
// the reference.
TEST(Ops, MatMulSplitsTheReductionDimensionWhenBlocksWouldNotFit) {
  for (const auto &[m, k, n] : std::vector<std::array<std::size_t, 3>>{{64, 4096, 4096}, {2048, 2048, 2048}, {1, 9216, 4096}}) {
    hwsim::Graph g(hwsim::Target::gc200());
    auto a = hwsim::ops::createMatMulInputLhs(g, Type::F32, {m, k}, {k, n}, "a");
    auto b = hwsim::ops::createMatMulInputRhs(g, Type::F32, {m, k}, {k, n}, "b");
    p::Sequence prog;
    hwsim::ops::matMul(g, prog, a, b, "mm");
    EXPECT_NO_THROW(hwsim::compileGraph(g, {prog})) << m << "x" << k << "x" << n;
  }
  const std::size_t K = 4096, N = 4096;
  hwsim_test::Harness h(hwsim::Target::gc200());
  auto a = hwsim::ops::createTensor(h.graph, Type::F32, {1, K}, "a");
  auto b = hwsim::ops::createMatMulInputRhs(h.graph, Type::F32, {1, K}, {K, N}, "b");
  h.graph.createHostWrite("a", a);
  h.graph.createHostWrite("b", b);
  p::Sequence prog;
  auto c = hwsim::ops::matMul(h.graph, prog, a, b, "mm", {}, Type::F16);
  h.graph.createHostRead("c", c);
  h.build({prog});
  bool summed = false;
  for (const auto &s : h.exe.programSteps()) summed = summed || s.name == "mm/sum_partials";
  EXPECT_TRUE(summed) << "expected K to be split";
  const auto x = hwsim_test::randomFloats(K, -1, 1, 15), y = hwsim_test::randomFloats(K * N, -1, 1, 16);
  h.write("a", x);
  h.write("b", y);
  h.engine->run(0);
  const auto got = hwsim_test::fromHalf(h.read<std::uint16_t>("c", N));
  for (std::size_t j = 0; j < N; ++j) {
    double want = 0;
    for (std::size_t k = 0; k < K; ++k) want += double(x[k]) * y[k * N + j];
    ASSERT_NEAR(got[j], want, 0.02 + 1e-3 * std::abs(want)) << j;
  }
}

// A large F16 matmul with operands laid out where it multiplies them: the
// multiply itself runs near the AMP units' peak on almost every tile, and
// the whole matmul (with the operand broadcasts and, K being split, the
// partial sums) at over half of it. With b preloaded (its copies made by the
// load program), a run reaches 70%: PeakRates.LargeF16MatMulWithPreloaded...
TEST(Ops, LargeF16MatMulRunsNearThePeakOnAlmostEveryTile) {
  const std::size_t n = 2048;
  hwsim::Graph g(hwsim::Target::gc200());
  auto a = hwsim::ops::createMatMulInputLhs(g, Type::F16, {n, n}, {n, n}, "a");
  auto b = hwsim::ops::createMatMulInputRhs(g, Type::F16, {n, n}, {n, n}, "b");
  p::Sequence prog;
  hwsim::ops::matMul(g, prog, a, b, "mm", {}, Type::F16);
  const hwsim::Executable exe = hwsim::compileGraph(g, {prog});
  std::uint64_t total = 0, multiply = 0;
  for (const auto &s : exe.programSteps()) {
    total += s.cycles;
    if (s.name == "mm") multiply = s.cycles;
  }
  const hwsim::Target &t = exe.target();
  const double peak = 2.0 * n * n * n / (t.f16MatMulFlopsPerCycle * t.numTiles());
  EXPECT_GE(peak / static_cast<double>(multiply), 0.9) << multiply << " cycles in the multiply, " << peak << " at peak";
  EXPECT_GE(peak / static_cast<double>(total), 0.5) << total << " cycles in all, " << peak << " at peak";
}
