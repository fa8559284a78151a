// IO tiles (exchange.numIOTiles): the next run's input lands on the IO tiles
// through the stream callback's prefetch while the other tiles compute, so
// the modelled time per run falls by the host transfer it hides (less the
// exchange from the IO tiles); vertices on IO tiles are refused.
#include <cmath>
#include <memory>
#include <string>

#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

constexpr unsigned kTiles = 64;        // per IPU
constexpr unsigned kIoTiles = 32;      // the last 32
constexpr unsigned kComputeTiles = kTiles - kIoTiles;
constexpr std::size_t kElems = 65536;  // 256 KiB of F32 per transfer
constexpr std::size_t kPerTile = kElems / kComputeTiles;

hwsim::Target target() {
  hwsim::Target t = hwsim::Target::smallIpuModel();
  t.tilesPerIpu = kTiles;
  return t;
}

// Main: in -> x (over the compute tiles), x += 1 sixteen times, x -> out.
struct Model {
  explicit Model(unsigned ioTiles, bool vertexOnLastTile = false) : h(target()) {
    auto x = h.graph.addVariable(Type::F32, {kElems}, "x");
    h.graph.mapLinearly(x, kPerTile, 0, kComputeTiles);
    auto ones = h.graph.addConstant(Type::F32, {kTiles}, 1.0, "ones");
    h.graph.mapLinearly(ones, 1);
    auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, kElems);
    auto out = h.graph.addDeviceToHostFIFO("out", Type::F32, kElems);
    auto cs = h.graph.addComputeSet("add_one");
    for (unsigned tile = 0; tile < kComputeTiles; ++tile) {
      auto part = x.slice(tile * kPerTile, (tile + 1) * kPerTile);
      h.graph.addVertex(cs, "Add", {{"in0", part}, {"in1", ones.slice(tile, tile + 1)}, {"out", part}}, tile);
    }
    if (vertexOnLastTile) {
      auto y = h.graph.addVariable(Type::F32, {1}, "y");
      h.graph.setTileMapping(y, kTiles - 1);
      h.graph.addVertex(cs, "Add", {{"in0", y}, {"in1", ones.slice(kTiles - 1, kTiles)}, {"out", y}}, kTiles - 1);
    }
    options = {{"exchange.numIOTiles", std::to_string(ioTiles)}};
    programs = {p::Sequence{p::Copy(in, x), p::Repeat(16, p::Execute(cs)), p::Copy(x, out)}};
  }
  void build() { h.build(programs, options); }
  hwsim_test::Harness h;
  hwsim::OptionFlags options;
  std::vector<p::Program> programs;
};

// Supplies transfer k filled with k; prefetches when `prefetching`.
class Source : public hwsim::StreamCallback {
 public:
  explicit Source(bool prefetching) : prefetching_(prefetching) {}
  Result prefetch(void *p) override {
    if (!prefetching_) return Result::NotAvailable;
    ++prefetched;
    fetch(p);
    return Result::Success;
  }
  void fetch(void *p) override {
    auto *f = static_cast<float *>(p);
    std::fill(f, f + kElems, static_cast<float>(next++));
  }
  int next = 0, prefetched = 0;

 private:
  bool prefetching_;
};

struct Runs {
  std::uint64_t cycles = 0;
  int prefetched = 0;
  std::vector<float> last;
};

Runs runModel(unsigned ioTiles, bool prefetching, int runs) {
  Model m(ioTiles);
  m.build();
  auto source = std::make_unique<Source>(prefetching);
  Source *raw = source.get();
  m.h.engine->connectStreamToCallback("in", 0, std::move(source));
  Runs result;
  result.last.resize(kElems);
  m.h.engine->connectStream("out", result.last.data());
  for (int i = 0; i < runs; ++i) m.h.engine->run(0);
  result.cycles = m.h.engine->deviceCycles();
  result.prefetched = raw->prefetched;
  return result;
}

TEST(IoTiles, PrefetchOntoIoTilesHidesTheHostTransferOfTheNextRun) {
  constexpr int kRuns = 5;
  const Runs plain = runModel(0, true, kRuns);
  const Runs overlapped = runModel(kIoTiles, true, kRuns);
  // The same results: transfer 4 (+16) came out of the last run either way.
  EXPECT_EQ(plain.last[0], 4.0f + 16.0f);
  EXPECT_EQ(overlapped.last[kElems - 1], 4.0f + 16.0f);
  EXPECT_EQ(overlapped.prefetched, kRuns);
  // Runs 2..5 take their input from the IO tiles: instead of the stream copy
  // (host sync + bytes over the host link) they pay the exchange from the
  // IO tiles (each IO tile sends 256 KiB / 32 = 8 KiB, each compute tile
  // receives 8 KiB, at 4 B/cycle) and an internal sync. The transfer itself
  // landed while run N computed (16 x ~1200 cycles), so nothing is waited for.
  const hwsim::Target t = target();
  const auto hostCopy = static_cast<std::uint64_t>(std::ceil(kElems * 4 / (t.hostLinkBytesPerSecond / t.clockHz)) + t.hostSyncCycles);
  const auto fromIoTiles = static_cast<std::uint64_t>(8192 / t.exchangeBytesPerCycle + t.internalSyncCycles);
  ASSERT_GT(plain.cycles, overlapped.cycles);
  EXPECT_EQ(plain.cycles - overlapped.cycles, (kRuns - 1) * (hostCopy - fromIoTiles));
}

TEST(IoTiles, WithoutIoTilesOrWithoutPrefetchNothingOverlaps) {
  // Prefetching alone prepares data early but the device still takes it at
  // the stream copy; IO tiles without a prefetch have nothing to receive.
  const Runs plain = runModel(0, false, 3);
  EXPECT_EQ(runModel(0, true, 3).cycles, plain.cycles);
  const Runs noPrefetch = runModel(kIoTiles, false, 3);
  EXPECT_EQ(noPrefetch.prefetched, 0);
  EXPECT_EQ(noPrefetch.cycles, plain.cycles);
}

TEST(IoTiles, IoTilesHoldTheStreamsLandingBuffers) {
  Model m(kIoTiles);
  m.build();
  const auto &memory = m.h.exe.memoryPerTile();
  // in (256 KiB) spread over 32 IO tiles, next to the one 'ones' element each.
  EXPECT_EQ(memory[kTiles - 1], 8192u + 8u);
  EXPECT_EQ(memory[kComputeTiles], 8192u + 8u);
}

TEST(IoTiles, AVertexOnAnIoTileIsRefused) {
  Model m(kIoTiles, true);
  try {
    hwsim::compileGraph(m.h.graph, m.programs, m.options);
    FAIL() << "compiled";
  } catch (const hwsim::Error &e) {
    EXPECT_EQ(e.kind(), hwsim::ErrorKind::GraphError);
    EXPECT_NE(std::string(e.what()).find("compute set 'add_one' has a vertex on tile 63, one of the 32 IO tiles of IPU 0"),
              std::string::npos)
        << e.what();
  }
  // Given to the engine only, the option is checked against the executable.
  const hwsim::Executable exe = hwsim::compileGraph(m.h.graph, m.programs, {});
  try {
    hwsim::Engine engine(exe, m.options);
    FAIL() << "engine created";
  } catch (const hwsim::InvalidOption &e) {
    EXPECT_EQ(e.option(), "exchange.numIOTiles");
    EXPECT_NE(std::string(e.what()).find("vertex on tile 63"), std::string::npos) << e.what();
  }
  // All tiles of an IPU cannot be IO tiles.
  Model all(0);
  try {
    hwsim::compileGraph(all.h.graph, all.programs, {{"exchange.numIOTiles", "64"}});
    FAIL() << "compiled";
  } catch (const hwsim::Error &e) {
    EXPECT_NE(std::string(e.what()).find("exchange.numIOTiles=64 leaves no compute tile: an IPU of this target has 64 tiles"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(hwsim::compileGraph(all.h.graph, all.programs, {{"exchange.numIOTiles", "many"}}), hwsim::InvalidOption);
}

}  // namespace
