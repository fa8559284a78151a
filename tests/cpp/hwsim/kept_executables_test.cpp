// Kept executables (kept_executables.hpp) and shared engine plans
// (engine_plan.hpp), both private: loading bytes equal to an executable
// loaded lately gives that executable's data back, bytes that differ in any
// byte are verified again, only the most recent ones are kept, and engines
// of one executable with the same plan settings share one plan, computing
// what an engine of their own would.
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "engine_impl.hpp"
#include "kept_executables.hpp"
#include "mib_limit.hpp"
#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

// y = x + x on `elements` floats over two tiles; executables of different
// sizes have different bytes. Sizes from 1000 up, which no other test of
// this binary loads.
hwsim::Executable doubling(std::size_t elements) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {elements}, "x");
  auto y = g.addVariable(Type::F32, {elements}, "y");
  const std::size_t half = elements / 2;
  for (const auto &t : {x, y}) {
    g.setTileMapping(t.slice(0, half), 0);
    g.setTileMapping(t.slice(half, elements), 1);
  }
  g.createHostWrite("x", x);
  g.createHostRead("y", y);
  auto cs = g.addComputeSet("double");
  g.addVertex(cs, "Add", {{"in0", x.slice(0, half)}, {"in1", x.slice(0, half)}, {"out", y.slice(0, half)}}, 0);
  g.addVertex(cs, "Add", {{"in0", x.slice(half, elements)}, {"in1", x.slice(half, elements)}, {"out", y.slice(half, elements)}}, 1);
  return hwsim::compileGraph(g, {p::Execute(cs)});
}

std::vector<float> runDoubling(const hwsim::Executable &exe, const hwsim::OptionFlags &options = {}) {
  hwsim::Engine engine(exe, options);
  auto device = hwsim::DeviceManager::createSmallIpuModelDevice();
  EXPECT_TRUE(device.attach());
  engine.load(device);
  const std::size_t n = exe.hostWrites()[0].numBytes / sizeof(float);
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i) - 3.5f;
  engine.writeTensor("x", x.data(), x.data() + n);
  EXPECT_EQ(engine.run(0), hwsim::RunStatus::Completed);
  engine.readTensor("y", y.data(), y.data() + n);
  return y;
}

TEST(KeptExecutables, EqualBytesGiveTheExecutableLoadedBefore) {
  const auto bytes = doubling(1000).serialize();
  const auto first = hwsim::Executable::deserialize(bytes);
  const std::vector<std::uint8_t> copy = bytes;  // other memory, same bytes
  const auto again = hwsim::Executable::deserialize(copy);
  EXPECT_EQ(&again.data(), &first.data());
  const auto y = runDoubling(again);
  ASSERT_EQ(y.size(), 1000u);
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_EQ(y[i], 2 * (static_cast<float>(i) - 3.5f)) << i;
}

TEST(KeptExecutables, BytesDifferingInOneByteAreVerifiedAgainEveryTime) {
  const auto bytes = doubling(1002).serialize();
  const auto kept = hwsim::Executable::deserialize(bytes);
  auto foreign = bytes;  // same size, same first bytes: only a full comparison tells them apart
  foreign[4] = 'X';      // the FlatBuffers file identifier
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      hwsim::Executable::deserialize(foreign);
      FAIL() << "attempt " << attempt << ": corrupt bytes were accepted";
    } catch (const hwsim::CorruptExecutable &e) {
      EXPECT_EQ(e.offset(), 4u);
    }
  }
  auto last = bytes;
  last.back() ^= 0x01;  // a difference in the last byte only
  try {
    const auto other = hwsim::Executable::deserialize(last);
    EXPECT_NE(&other.data(), &kept.data());
  } catch (const hwsim::CorruptExecutable &) {
    // Verified and refused: also not the kept executable.
  }
  EXPECT_EQ(&hwsim::Executable::deserialize(bytes).data(), &kept.data());
}

// A loader's seal is kept with the bytes: findKept() finds the executable
// only for equal bytes under an equal seal, a plain load of equal bytes
// gives the seal it brings to the entry, and an unsealed entry is found by
// no seal.
TEST(KeptExecutables, FindKeptNeedsEqualBytesUnderAnEqualSeal) {
  const auto bytes = doubling(1004).serialize();
  const std::vector<std::uint8_t> seal = {1, 2, 3, 4}, other = {1, 2, 3, 5};
  EXPECT_FALSE(hwsim::Executable::findKept(bytes.data(), bytes.size(), seal).valid());  // nothing kept yet
  const auto sealed = hwsim::Executable::deserialize(bytes.data(), bytes.size(), seal);
  const std::vector<std::uint8_t> copy = bytes;
  EXPECT_EQ(&hwsim::Executable::findKept(copy.data(), copy.size(), seal).data(), &sealed.data());
  EXPECT_FALSE(hwsim::Executable::findKept(copy.data(), copy.size(), other).valid());
  EXPECT_FALSE(hwsim::Executable::findKept(copy.data(), copy.size(), {}).valid());
  auto changed = bytes;
  changed.back() ^= 0x01;  // the last byte only
  EXPECT_FALSE(hwsim::Executable::findKept(changed.data(), changed.size(), seal).valid());
  EXPECT_FALSE(hwsim::Executable::findKept(bytes.data(), bytes.size() - 1, seal).valid());
  EXPECT_FALSE(hwsim::Executable::findKept(nullptr, 0, seal).valid());

  // Loaded again with another seal: the entry is found by that one now.
  EXPECT_EQ(&hwsim::Executable::deserialize(copy.data(), copy.size(), other).data(), &sealed.data());
  EXPECT_EQ(&hwsim::Executable::findKept(bytes.data(), bytes.size(), other).data(), &sealed.data());
  EXPECT_FALSE(hwsim::Executable::findKept(bytes.data(), bytes.size(), seal).valid());

  // Loaded without a seal, an executable is found by none.
  const auto plainBytes = doubling(1006).serialize();
  const auto plain = hwsim::Executable::deserialize(plainBytes);
  EXPECT_FALSE(hwsim::Executable::findKept(plainBytes.data(), plainBytes.size(), {}).valid());
  EXPECT_FALSE(hwsim::Executable::findKept(plainBytes.data(), plainBytes.size(), seal).valid());
  const auto y = runDoubling(hwsim::Executable::findKept(bytes.data(), bytes.size(), other));
  ASSERT_EQ(y.size(), 1004u);
  EXPECT_EQ(y[10], 2 * (10 - 3.5f));
}

TEST(KeptExecutables, OnlyTheMostRecentlyLoadedAreKept) {
  std::vector<std::vector<std::uint8_t>> bytes;
  std::vector<hwsim::Executable> loaded;
  for (std::size_t i = 0; i <= hwsim::detail::kKeptExecutables; ++i) {
    bytes.push_back(doubling(2000 + 2 * i).serialize());
    loaded.push_back(hwsim::Executable::deserialize(bytes.back()));
  }
  // The first was pushed out by the kKeptExecutables after it; the last is kept.
  EXPECT_NE(&hwsim::Executable::deserialize(bytes.front()).data(), &loaded.front().data());
  EXPECT_EQ(&hwsim::Executable::deserialize(bytes.back()).data(), &loaded.back().data());
}

// With MRT_HWSIM_KEPT_EXECUTABLES_MIB=0 set before the first load of the
// process (a child process): nothing is kept. Returns 0 when nothing was.
int keepNoneWhenTheEnvironmentSaysSo() {
  if (::setenv("MRT_HWSIM_KEPT_EXECUTABLES_MIB", "0", 1) != 0) return 2;
  const auto bytes = doubling(3000).serialize();
  const auto first = hwsim::Executable::deserialize(bytes);
  return &hwsim::Executable::deserialize(bytes).data() == &first.data() ? 1 : 0;
}

TEST(KeptExecutables, TheEnvironmentCanKeepNone) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(keepNoneWhenTheEnvironmentSaysSo()), ::testing::ExitedWithCode(0), "");
}

TEST(KeptExecutables, ABadLimitInTheEnvironmentIsNamedAndTheDefaultKept) {
  std::string warning;
  EXPECT_EQ(hwsim::detail::mibLimitFor("MRT_HWSIM_KEPT_EXECUTABLES_MIB", "12", 1024, 16 << 20, warning), 12u << 20);
  EXPECT_TRUE(warning.empty()) << warning;
  EXPECT_EQ(hwsim::detail::mibLimitFor("MRT_HWSIM_KEPT_EXECUTABLES_MIB", "2000", 1024, 16 << 20, warning), 16u << 20);
  EXPECT_NE(warning.find("MRT_HWSIM_KEPT_EXECUTABLES_MIB '2000' is not a whole number of MiB from 0 to 1024; keeping up to 16 MiB"),
            std::string::npos)
      << warning;
}

// A fork while another thread loads executables: the child can load one
// (the cache's lock is never copied held). Without the fork handlers a
// child hangs on the lock in most of these forks.
TEST(KeptExecutables, AChildForkedWhileAnotherThreadLoadsCanLoad) {
  const auto bytes = doubling(1006).serialize();
  // Made before the thread starts: a fork while another thread makes a
  // static object leaves it half made in the child, whatever the object.
  hwsim::Executable::deserialize(bytes);
  std::atomic<bool> stop{false};
  std::thread loader([&] {
    while (!stop.load()) hwsim::Executable::deserialize(bytes);
  });
  int hung = 0;
  for (int i = 0; i < 20; ++i) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      hwsim::Executable::deserialize(bytes);
      std::_Exit(0);
    }
    int status = 0;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (::waitpid(child, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > end) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
        ++hung;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  stop = true;
  loader.join();
  EXPECT_EQ(hung, 0) << "children that never got the lock";
}

TEST(EnginePlans, EnginesOfOneExecutableShareThePlanOfTheirSettings) {
  const auto exe = doubling(1004);
  hwsim::Engine a(exe), b(exe), unplanar(exe, {{"host.planarOperands", "false"}});
  const auto &planA = hwsim::Engine::Impl::of(a).enginePlan;
  EXPECT_EQ(planA.get(), hwsim::Engine::Impl::of(b).enginePlan.get());
  EXPECT_NE(planA.get(), hwsim::Engine::Impl::of(unplanar).enginePlan.get());
  EXPECT_EQ(hwsim::Engine::Impl::of(unplanar).enginePlan.get(),
            hwsim::detail::EnginePlan::of(exe.data(), {planA->settings.hostThreads, true, false}).get());
  // Engines on one plan compute what one engine alone does.
  const auto once = runDoubling(exe);
  EXPECT_EQ(runDoubling(exe), once);
  EXPECT_EQ(runDoubling(exe, {{"host.planarOperands", "false"}}), once);
  EXPECT_EQ(once[5], 3.0f);
}

}  // namespace
