// Threads: stop() during a blocked host sync, and replicas that run
// concurrently without sharing memory, each with its own stream callbacks.
#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

TEST(Stop, DuringABlockedHostSyncReturnsStoppedPromptly) {
  Harness h;
  auto x = h.graph.addVariable(Type::F32, {4});
  h.graph.setTileMapping(x, 0);
  auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, 4);
  // An endless loop of host transfers, as a serving Main program would be.
  auto forever = h.graph.addConstant(Type::BOOL, {1}, 1.0);
  h.graph.setTileMapping(forever, 0);
  h.build({p::RepeatWhileTrue(p::Sequence(), forever, p::Copy(in, x))});
  std::atomic<int> calls{0};
  std::promise<void> blocked;
  std::atomic<bool> release{false};
  h.engine->connectStreamToCallback("in", [&](void *ptr) {
    std::memset(ptr, 0, 16);
    if (++calls == 3) {
      blocked.set_value();
      while (!release.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));  // host has no data yet
    }
  });
  auto run = std::async(std::launch::async, [&] { return h.engine->run(0); });
  blocked.get_future().wait();
  const auto t0 = std::chrono::steady_clock::now();
  h.engine->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(10));  // stop() itself never waits
  release = true;
  ASSERT_EQ(run.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_EQ(run.get(), hwsim::RunStatus::Stopped);
  EXPECT_EQ(calls.load(), 3);                               // no callback after the stop was seen
  EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Stopped);   // unusable until reloaded
  h.engine->load(h.device);
  std::atomic<int> more{0};
  h.engine->connectStreamToCallback("in", [&](void *ptr) {
    std::memset(ptr, 0, 16);
    if (++more == 5) h.engine->stop();
  });
  EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Stopped);
  EXPECT_EQ(more.load(), 5);
}

TEST(Replication, ReplicasHaveTheirOwnMemoryAndCallbacks) {
  Harness h(hwsim::Target::smallIpuModel(), 2);
  auto x = h.graph.addVariable(Type::F32, {3}, "x");
  auto acc = h.graph.addVariable(Type::F32, {3}, "acc");
  h.graph.setTileMapping(x, 0);
  h.graph.setTileMapping(acc, 0);
  h.graph.createHostRead("acc", acc);
  auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, 3);
  auto out = h.graph.addDeviceToHostFIFO("out", Type::F32, 3);
  auto cs = h.graph.addComputeSet("accumulate");
  h.graph.addVertex(cs, "Add", {{"in0", acc}, {"in1", x}, {"out", acc}}, 0);
  h.build({p::Repeat(4, p::Sequence{p::Copy(in, x), p::Execute(cs), p::Copy(acc, out)})});
  EXPECT_EQ(h.exe.numIpus(), 2u);
  std::vector<std::vector<float>> outs(2);
  for (unsigned r = 0; r < 2; ++r) {
    h.engine->connectStreamToCallback("in", r, [r](void *ptr) {
      auto *f = static_cast<float *>(ptr);
      f[0] = f[1] = f[2] = static_cast<float>(r + 1);
    });
    h.engine->connectStreamToCallback("out", r, [&outs, r](void *ptr) { outs[r].push_back(static_cast<float *>(ptr)[0]); });
  }
  EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
  EXPECT_EQ(outs[0], (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(outs[1], (std::vector<float>{2, 4, 6, 8}));
  EXPECT_EQ(h.read<float>("acc", 3, 0), std::vector<float>(3, 4));
  EXPECT_EQ(h.read<float>("acc", 3, 1), std::vector<float>(3, 8));
  // One thread per replica, as the session layer does.
  std::thread t1([&] { h.engine->runReplica(0, 1); });
  h.engine->runReplica(0, 0);
  t1.join();
  EXPECT_EQ(h.read<float>("acc", 3, 0), std::vector<float>(3, 8));
  EXPECT_EQ(h.read<float>("acc", 3, 1), std::vector<float>(3, 16));
}

TEST(Parallel, LargeComputeSetOverManyTilesMatchesSerial) {
  hwsim::Target t = hwsim::Target::gc200();
  Harness h(t);
  const std::size_t n = 1472 * 64;
  auto x = h.graph.addVariable(Type::F32, {n}, "x");
  auto y = h.graph.addVariable(Type::F32, {n}, "y");
  h.graph.mapLinearly(x, 64);
  h.graph.mapLinearly(y, 64);
  h.graph.createHostWrite("x", x);
  h.graph.createHostRead("y", y);
  auto cs = h.graph.addComputeSet("tanh");
  for (unsigned tile = 0; tile < 1472; ++tile) {
    h.graph.addVertex(cs, "Tanh", {{"in", x.slice(tile * 64, tile * 64 + 64)}, {"out", y.slice(tile * 64, tile * 64 + 64)}}, tile);
  }
  h.build({p::Execute(cs)});
  const auto in = hwsim_test::randomFloats(n, -3, 3, 9);
  h.write("x", in);
  h.engine->run(0);
  const auto out = h.read<float>("y", n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], std::tanh(in[i]), 1e-5) << i;
}

}  // namespace
