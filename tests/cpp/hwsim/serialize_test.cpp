// Executable serialization: round trip, stable hash, and 1,000 random
// mutations/truncations that must give a CorruptExecutable error or a valid
// executable - never a crash (this test is also run under ASan/UBSan).
#include <random>

#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

// A small mlp-like model with every kind of object: constants, a stream,
// host handles, a remote buffer, control flow.
hwsim::Executable buildModel() {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {2, 8}, "x");
  auto w = g.addVariable(Type::F32, {8, 4}, "w");
  auto b = g.addConstant(Type::F32, {4}, std::vector<double>{0.1, -0.2, 0.3, 0.0}, "b");
  auto h = g.addVariable(Type::F32, {2, 4}, "h");
  auto y = g.addVariable(Type::F32, {2, 4}, "y");
  auto flag = g.addVariable(Type::S32, {1}, "flag");
  for (auto &t : {x, w, b, h, y, flag}) g.setTileMapping(t, 1);
  auto in = g.addHostToDeviceFIFO("x", Type::F32, 16);
  auto out = g.addDeviceToHostFIFO("y", Type::F32, 8);
  auto rb = g.addRemoteBuffer("w_remote", Type::F32, 32, 2);
  g.createHostWrite("flag", flag);
  g.createHostRead("h", h);
  auto cs = g.addComputeSet("layer");
  g.addVertex(cs, "MatMul", {{"a", x}, {"b", w}, {"out", h}}, 1);
  auto cs2 = g.addComputeSet("bias_softmax");
  g.addVertex(cs2, "Add", {{"in0", h}, {"in1", b}, {"out", h}}, 1);
  g.addVertex(cs2, "Softmax", {{"in", h}, {"out", y}}, 1);
  p::Sequence main{p::Copy(in, x), p::Execute(cs), p::If(flag, p::Execute(cs2)), p::Copy(y, out)};
  return hwsim::compileGraph(g, {p::Copy(rb, w.flatten(), 1), main});
}

std::vector<float> runModel(const hwsim::Executable &exe) {
  hwsim::Engine e(exe);
  auto dev = hwsim::DeviceManager::createSmallIpuModelDevice();
  EXPECT_TRUE(dev.attach());
  e.load(dev);
  std::vector<float> w(32);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i) - 0.7f;
  e.copyToRemoteBuffer(w.data(), "w_remote", 1);
  std::vector<float> x(16), y(8);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 5) - 2.0f;
  const std::int32_t flag = 1;
  e.writeTensor("flag", &flag, &flag + 1);
  e.connectStream("x", x.data());
  e.connectStream("y", y.data());
  e.run(0);
  e.run(1);
  return y;
}

TEST(Serialize, RoundTripRunsIdenticallyAndHashesTheSame) {
  const auto exe = buildModel();
  const auto bytes = exe.serialize();
  const auto back = hwsim::Executable::deserialize(bytes);
  EXPECT_EQ(back.serialize(), bytes);
  EXPECT_EQ(back.hash(), exe.hash());
  EXPECT_EQ(buildModel().hash(), exe.hash());  // deterministic compile
  const auto a = runModel(exe), b = runModel(back);
  EXPECT_EQ(a, b);
  float rowSum = 0;
  for (int i = 0; i < 4; ++i) rowSum += a[static_cast<std::size_t>(i)];
  EXPECT_NEAR(rowSum, 1.0f, 1e-5);
  EXPECT_EQ(back.streams().size(), 2u);
  EXPECT_EQ(back.hostWrites()[0].handle, "flag");
  EXPECT_EQ(back.hostReads()[0].handle, "h");
  EXPECT_EQ(back.remoteBuffers()[0].handle, "w_remote");
}

TEST(Serialize, DifferentExecutablesHashDifferently) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {4}, "x");
  g.setTileMapping(x, 0);
  const auto a = hwsim::compileGraph(g, {p::WriteUndef(x)});
  g.setTileMapping(x, 1);
  const auto b = hwsim::compileGraph(g, {p::WriteUndef(x)});
  EXPECT_NE(a.hash(), b.hash());
}

TEST(Serialize, TruncatedAndForeignBytesNameTheProblem) {
  const auto bytes = buildModel().serialize();
  try {
    hwsim::Executable::deserialize(bytes.data(), 5);
    FAIL();
  } catch (const hwsim::CorruptExecutable &e) {
    EXPECT_EQ(e.kind(), hwsim::ErrorKind::CorruptExecutable);
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
  auto foreign = bytes;
  foreign[4] = 'X';
  try {
    hwsim::Executable::deserialize(foreign);
    FAIL();
  } catch (const hwsim::CorruptExecutable &e) {
    EXPECT_EQ(e.offset(), 4u);
  }
  try {
    hwsim::Executable::deserialize(bytes.data(), bytes.size() / 2);
    FAIL();
  } catch (const hwsim::CorruptExecutable &e) {
    EXPECT_NE(std::string(e.what()).find("byte offset"), std::string::npos) << e.what();
  }
}

TEST(Serialize, ThousandMutationsNeverCrash) {
  const auto bytes = buildModel().serialize();
  std::mt19937 rng(12345);
  int rejected = 0, accepted = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    auto m = bytes;
    switch (iter % 4) {
      case 0:  // truncate
        m.resize(std::uniform_int_distribution<std::size_t>(0, m.size() - 1)(rng));
        break;
      case 1:  // flip random bytes
        for (int k = 0; k < 1 + iter % 8; ++k) m[std::uniform_int_distribution<std::size_t>(0, m.size() - 1)(rng)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        break;
      case 2:  // overwrite a 4-byte word (offsets, counts, indices)
      {
        const auto at = std::uniform_int_distribution<std::size_t>(0, m.size() - 4)(rng) & ~std::size_t{3};
        const std::uint32_t v = rng() % 3 == 0 ? 0xFFFFFFFFu : rng() % 64;
        std::memcpy(m.data() + at, &v, 4);
        break;
      }
      default:  // insert garbage in the middle
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(rng() % m.size()), 16, static_cast<std::uint8_t>(rng()));
        break;
    }
    try {
      const auto exe = hwsim::Executable::deserialize(m);
      ++accepted;
      // A mutated executable that verifies must be fully usable.
      (void)exe.serialize();
      (void)exe.hash();
      hwsim::Engine e(exe);
      (void)e.listStreams();
    } catch (const hwsim::CorruptExecutable &) {
      ++rejected;
    } catch (const hwsim::Error &) {
      ++rejected;  // e.g. an option that no longer validates for the engine
    }
  }
  EXPECT_EQ(rejected + accepted, 1000);
  EXPECT_GT(rejected, 500);
}

}  // namespace
