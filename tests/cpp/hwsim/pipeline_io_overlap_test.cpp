// A pipelined program whose first stage takes two inputs prefetched onto IO
// tiles (docs/hwsim.md "Overlapped I/O" and "Pipelining"): a prefetch made
// inside a stage is timed from where that stage is, not from the replica's
// clock at the start of the pipeline step, so the modelled cycles of
// streamed runs follow the documented formulas exactly; and the outputs are
// those of runs one after another.
#include <cmath>
#include <cstring>

#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;
namespace ops = hwsim::ops;

constexpr unsigned kTiles = 64;    // per IPU
constexpr unsigned kIoTiles = 32;  // the last 32 of each IPU
constexpr unsigned kComputeTiles = kTiles - kIoTiles;
constexpr std::size_t kOut = 256;         // what goes on to stage 1 and out
constexpr std::size_t kIn = kOut * kOut;  // 256 KiB of F32 per input transfer

hwsim::Target target() {
  hwsim::Target t = hwsim::Target::smallIpuModel(2);
  t.tilesPerIpu = kTiles;
  return t;
}

// Stage 0 (IPU 0): xa <- a, xb <- b, xa += xb (rows spread over the compute
// tiles); transfer row 0 of xa to y on IPU 1. Stage 1: y *= 3, y -> out. Input b's transfer is the bottleneck.
hwsim::Executable twoStagesWithTwoInputs(unsigned ioTiles) {
  hwsim::Graph g(target());
  const ops::TileRange ipu0{0, kComputeTiles}, ipu1{kTiles, kComputeTiles};
  auto xa = ops::createTensor(g, Type::F32, {kOut, kOut}, "xa", ipu0);
  auto xb = ops::createTensor(g, Type::F32, {kOut, kOut}, "xb", ipu0);
  auto y = ops::createTensor(g, Type::F32, {kOut}, "y", ipu1);
  auto three = g.addConstant(Type::F32, {1}, 3.0, "three");
  g.setTileMapping(three, kTiles);
  p::Sequence main;
  main.add(p::Copy(g.addHostToDeviceFIFO("a", Type::F32, kIn), xa, "input/a"));
  main.add(p::Copy(g.addHostToDeviceFIFO("b", Type::F32, kIn), xb, "input/b"));
  ops::binaryInPlace(g, main, "Add", xa, xb);
  main.add(p::Copy(xa[0], y, "to_ipu1"));
  ops::binaryInPlace(g, main, "Mul", y, three);
  main.add(p::Copy(y, g.addDeviceToHostFIFO("out", Type::F32, kOut), "output"));
  return hwsim::compileGraph(g, {main}, {{"exchange.numIOTiles", std::to_string(ioTiles)}});
}

// Supplies transfer k of a stream filled with k x scale, through prefetch.
class Source : public hwsim::StreamCallback {
 public:
  explicit Source(float scale) : scale_(scale) {}
  Result prefetch(void *p) override {
    fetch(p);
    return Result::Success;
  }
  void fetch(void *p) override {
    auto *f = static_cast<float *>(p);
    std::fill(f, f + kIn, static_cast<float>(next_++) * scale_);
  }

 private:
  float scale_;
  int next_ = 0;
};

struct Streamed {
  std::uint64_t cycles = 0;
  std::vector<std::vector<float>> outputs;
};

Streamed stream(const hwsim::Executable &exe, unsigned runs, bool pipelined) {
  auto dev = hwsim::DeviceManager::createIpuModelDevice(target());
  EXPECT_TRUE(dev.attach());
  hwsim::Engine e(exe);
  e.load(dev);
  Streamed s;
  e.connectStreamToCallback("a", 0, std::make_unique<Source>(1.0f));
  e.connectStreamToCallback("b", 0, std::make_unique<Source>(10.0f));
  e.connectStreamToCallback("out", [&](void *data) {
    s.outputs.emplace_back(kOut);
    std::memcpy(s.outputs.back().data(), data, kOut * sizeof(float));
  });
  for (unsigned r = 0; r < runs; ++r) EXPECT_EQ(pipelined ? e.runPipelined(0) : e.run(0), hwsim::RunStatus::Completed);
  EXPECT_EQ(e.flushPipeline(), hwsim::RunStatus::Completed);
  s.cycles = e.deviceCycles();
  return s;
}

TEST(PipelineIoOverlap, PrefetchesInsideAStageAreTimedFromThatStage) {
  const hwsim::Executable exe = twoStagesWithTwoInputs(kIoTiles);
  const hwsim::PipelinePlan plan = hwsim::pipelinePlan(exe, 0);
  ASSERT_EQ(plan.stages.size(), 2u) << plan.reason;

  // H: a stream copy of one input (host sync + 256 KiB over the host link).
  // X: the same transfer taken from the IO tiles: each compute tile of IPU 0
  // receives 8 KiB, each of the 64 IO tiles sends 4 KiB, at 4 B/cycle, plus
  // an internal sync.
  const hwsim::Target t = target();
  const auto H = static_cast<std::uint64_t>(std::ceil(kIn * 4 / (t.hostLinkBytesPerSecond / t.clockHz)) + t.hostSyncCycles);
  const auto X = static_cast<std::uint64_t>(kIn * 4 / kComputeTiles / t.exchangeBytesPerCycle + t.internalSyncCycles);
  const std::uint64_t A = plan.stages[0].cycles - 2 * H;  // stage 0 without its two stream copies
  const std::uint64_t C = plan.stages[0].transferCycles;
  const std::uint64_t B = plan.stages[1].cycles;
  // The shape of the case: b's transfer outlasts what the stage does after
  // it, and stage 0 stays the slower stage.
  ASSERT_GT(H, A + C + X);
  ASSERT_GT(H + X, B + C);

  // Step 0 (run 0 in stage 0, from cycle 0): a and b arrive by stream copy
  // (H each); a's next transfer leaves at H and lands at 2H, b's leaves at
  // 2H and lands at 3H. The step ends at T1 = 2H + A + C.
  // Step 1: a has landed (T1 > 2H) and costs X; b is taken at T1 + X and
  // waits 3H - (T1 + X) = H - A - C - X for the rest of its transfer, then
  // costs X: stage 0 takes H - C + X, so the step takes H + X. b's next
  // transfer leaves when this one is done and lands H later, so every later
  // step is the same: one run per H + X (the host link feeding b, then the
  // IO tiles' exchange). The flush step runs stage 1 alone (B).
  constexpr unsigned kRuns = 5;
  const Streamed piped = stream(exe, kRuns, true);
  EXPECT_EQ(piped.cycles, (2 * H + A + C) + (kRuns - 1) * (H + X) + B);

  // Runs one after another compute the same outputs: run r gives
  // (r + 10 r) x 3.
  const Streamed sequential = stream(exe, kRuns, false);
  ASSERT_EQ(piped.outputs.size(), kRuns);
  EXPECT_EQ(piped.outputs, sequential.outputs);
  for (unsigned r = 0; r < kRuns; ++r) {
    EXPECT_EQ(piped.outputs[r][0], static_cast<float>(r * 11 * 3)) << r;
    EXPECT_EQ(piped.outputs[r][kOut - 1], static_cast<float>(r * 11 * 3)) << r;
  }
}

}  // namespace
