// ops::matMul with preloaded weights (rhsLoad): b's copies to the tiles that
// multiply it are made by the load program, once; every run of the main
// program exchanges only a and still multiplies by the loaded b.
#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

std::vector<double> product(const std::vector<float> &x, const std::vector<float> &y, std::size_t M, std::size_t K,
                            std::size_t N) {
  std::vector<double> out(M * N, 0.0);
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t k = 0; k < K; ++k) {
      for (std::size_t j = 0; j < N; ++j) out[i * N + j] += double(x[i * K + k]) * y[k * N + j];
    }
  }
  return out;
}

TEST(MatMulWeights, LoadProgramCopiesTheWeightsOnceAndEachRunExchangesOnlyActivations) {
  const std::size_t M = 128, K = 64, N = 96;
  hwsim::Graph g(hwsim::Target::gc200());
  auto a = hwsim::ops::createMatMulInputLhs(g, Type::F32, {M, K}, {K, N}, "a", {}, true);
  auto b = hwsim::ops::createMatMulInputRhs(g, Type::F32, {M, K}, {K, N}, "b", {}, true);
  g.createHostWrite("a", a);
  g.createHostWrite("b", b);
  p::Sequence load, main;
  auto c = hwsim::ops::matMul(g, main, a, b, "mm", {}, Type::F32, &load);
  g.createHostRead("c", c);
  hwsim::Engine e(g, {load, main});
  std::uint64_t loadCycles = 0, mainCycles = 0;
  for (const auto &s : e.getExecutable().programSteps()) {
    (s.name == "mm/exchange_b" ? loadCycles : mainCycles) += s.cycles;
  }
  ASSERT_GT(loadCycles, 0u) << "expected more than one row block, so b is copied";
  auto dev = hwsim::DeviceManager::createIpuModelDevice(hwsim::Target::gc200());
  ASSERT_TRUE(dev.attach());
  e.load(dev);
  const auto y = hwsim_test::randomFloats(K * N, -1, 1, 21);
  e.writeTensor("b", y.data(), y.data() + y.size());
  e.run(0);
  EXPECT_EQ(e.deviceCycles(), loadCycles);
  // Two runs with different activations: both multiply by the loaded b, and
  // each costs only the main program's steps.
  for (unsigned seed : {22u, 23u}) {
    const auto x = hwsim_test::randomFloats(M * K, -1, 1, seed);
    e.writeTensor("a", x.data(), x.data() + x.size());
    const std::uint64_t before = e.deviceCycles();
    e.run(1);
    EXPECT_EQ(e.deviceCycles() - before, mainCycles);
    std::vector<float> got(M * N);
    e.readTensor("c", got.data(), got.data() + got.size());
    const auto want = product(x, y, M, K, N);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4) << i;
  }
}

TEST(MatMulWeights, RhsLoadMustNotBeTheMatMulsOwnProgram) {
  hwsim::Graph g(hwsim::Target::gc200());
  auto a = hwsim::ops::createTensor(g, Type::F32, {4, 8}, "a");
  auto b = hwsim::ops::createTensor(g, Type::F32, {8, 4}, "b");
  p::Sequence main;
  try {
    hwsim::ops::matMul(g, main, a, b, "mm", {}, Type::F32, &main);
    FAIL() << "expected an error";
  } catch (const hwsim::Error &err) {
    EXPECT_EQ(err.kind(), hwsim::ErrorKind::InvalidArgument);
    EXPECT_STREQ(err.what(), "matMul 'mm': rhsLoad must be another program than prog");
  }
}

}  // namespace
