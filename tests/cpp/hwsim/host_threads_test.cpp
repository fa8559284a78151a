// The engine option host.threads: the same results with 1, 2 and all CPUs,
// pool threads started only when a compute set goes parallel, and clear
// errors for values that are no thread count.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hwsim/hwsim.hpp"
#include "test_util.hpp"
#include "worker_pool.hpp"

namespace {

namespace ops = hwsim::ops;
namespace p = hwsim::program;
using hwsim::Type;

constexpr std::size_t kM = 256, kK = 512, kN = 256;

// [M,K] x [K,N] on gc200's tiles: one compute set long enough on the host
// (milliseconds) for its gate to send it to the pool. Runs it five times
// (three timed inline, then trials on the pool) and returns the product.
std::vector<float> matMul(const hwsim::OptionFlags &options) {
  const hwsim::Target target = hwsim::Target::gc200();
  hwsim::Graph g(target);
  auto a = ops::createMatMulInputLhs(g, Type::F32, {kM, kK}, {kK, kN}, "a");
  auto b = ops::createMatMulInputRhs(g, Type::F32, {kM, kK}, {kK, kN}, "b");
  g.createHostWrite("a", a);
  g.createHostWrite("b", b);
  p::Sequence main;
  auto c = ops::matMul(g, main, a, b, "c");
  g.createHostRead("c", c);
  hwsim::Engine engine(g, {main}, options);
  auto device = hwsim::DeviceManager::createIpuModelDevice(target);
  EXPECT_TRUE(device.attach());
  engine.load(device);
  const auto av = hwsim_test::randomFloats(kM * kK, -1.f, 1.f, 1), bv = hwsim_test::randomFloats(kK * kN, -1.f, 1.f, 2);
  engine.writeTensor("a", av.data(), av.data() + av.size());
  engine.writeTensor("b", bv.data(), bv.data() + bv.size());
  for (int i = 0; i < 5; ++i) engine.run(0);
  std::vector<float> out(kM * kN);
  engine.readTensor("c", out.data(), out.data() + out.size());
  return out;
}

TEST(HostThreads, SameProductWithOneTwoAndAllThreadsAndPoolThreadsOnlyWhenUsed) {
  auto &pool = hwsim::detail::WorkerPool::instance();
  const auto one = matMul({{"host.threads", "1"}});
  EXPECT_EQ(pool.startedThreads(), 0u);  // inline engines never start the pool
  const auto inlineToo = matMul({{"debug.cpuMultiThreadExecution", "false"}});
  EXPECT_EQ(pool.startedThreads(), 0u);
  const auto two = matMul({{"host.threads", "2"}});
  const auto all = matMul({});
  const auto more = matMul({{"host.threads", "4096"}});  // cut to the CPUs the process may use
  if (pool.capacity() > 0) {
    EXPECT_EQ(pool.startedThreads(), pool.capacity());
  }
  EXPECT_EQ(one, inlineToo);
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, all);
  EXPECT_EQ(one, more);
  double want = 0;  // c[0][0] by the definition, against a product of zeros
  const auto av = hwsim_test::randomFloats(kM * kK, -1.f, 1.f, 1), bv = hwsim_test::randomFloats(kK * kN, -1.f, 1.f, 2);
  for (std::size_t k = 0; k < kK; ++k) want += static_cast<double>(av[k]) * bv[k * kN];
  EXPECT_NEAR(one[0], want, 1e-3);
}

// Refused both where options are checked alone (mrt_model_with_engine_options
// does that) and by an engine given them.
void expectInvalid(const std::string &value, const std::string &message) {
  EXPECT_THROW(hwsim::validateEngineOptions({{"host.threads", value}}), hwsim::InvalidOption) << value;
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  try {
    hwsim::Engine engine(g, {}, {{"host.threads", value}});
    FAIL() << "host.threads=" << value << " accepted";
  } catch (const hwsim::InvalidOption &e) {
    EXPECT_EQ(e.option(), "host.threads");
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(HostThreads, ValuesThatAreNoThreadCountAreInvalidOptionsNamingIt) {
  for (const char *bad : {"0", "000", "-1", "two", "", "1.5", "10000000000"}) {
    expectInvalid(bad, std::string("option 'host.threads': value '") + bad + "' is not a positive integer");
  }
  // The engine options stay usable: a good value after a bad one works.
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  hwsim::Engine engine(g, {}, {{"host.threads", "1"}});
  EXPECT_EQ(engine.getEngineOptions().at("host.threads"), "1");
}

}  // namespace
