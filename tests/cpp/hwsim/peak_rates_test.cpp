// The cost model's peak rates against the published figures docs/hwsim.md
// cites: each test compiles a transfer or a multiply big enough that fixed
// costs (syncs, vertex launch) are small, and checks the modelled rate
// (bytes or FLOPs over modelled seconds) is within 5% of the figure.
#include <cmath>
#include <string>

#include "test_util.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;

// Modelled seconds of the program's step of `kind` (exactly one expected).
double stepSeconds(const hwsim::Executable &exe, const std::string &kind) {
  double seconds = -1;
  for (const auto &s : exe.programSteps()) {
    if (s.kind != kind) continue;
    EXPECT_LT(seconds, 0) << "more than one " << kind << " step";
    seconds = static_cast<double>(s.cycles) / exe.target().clockHz;
  }
  EXPECT_GE(seconds, 0) << "no " << kind << " step";
  return seconds;
}

void expectWithin5Percent(double modelled, double published, const std::string &what) {
  EXPECT_NEAR(modelled / published, 1.0, 0.05) << what << ": modelled " << modelled << ", published " << published;
}

// One tile's MatMul vertex, scaled to every tile of the IPU (the AMP units
// all run at once): GC200's 250 TFLOPS F16 and 62.5 TFLOPS F32.
double matMulFlopsPerSecond(Type type) {
  const std::size_t m = 64, k = 64, n = 64;
  hwsim::Graph g(hwsim::Target::gc200());
  auto a = g.addVariable(type, {m, k}, "a");
  auto b = g.addVariable(type, {k, n}, "b");
  auto c = g.addVariable(Type::F32, {m, n}, "c");
  for (const auto &t : {a, b, c}) g.setTileMapping(t, 0);
  auto cs = g.addComputeSet("mm");
  g.addVertex(cs, "MatMul", {{"a", a}, {"b", b}, {"out", c}}, 0);
  const hwsim::Executable exe = hwsim::compileGraph(g, {p::Execute(cs)});
  const double flops = 2.0 * m * k * n * exe.target().numTiles();
  return flops / stepSeconds(exe, "Execute");
}

TEST(PeakRates, F16MatMulIsGc200s250Tflops) { expectWithin5Percent(matMulFlopsPerSecond(Type::F16), 250e12, "F16 matmul"); }

TEST(PeakRates, F32MatMulIsGc200s62AndAHalfTflops) {
  expectWithin5Percent(matMulFlopsPerSecond(Type::F32), 62.5e12, "F32 matmul");
}

// A 2048^3 F16 matmul whose weights (b) the load program copies to the tiles
// that multiply them: a run of the main program exchanges only a, and its
// modelled time (every step but the load's copy of b) is at least 70% of the
// AMP units' peak, as real IPUs reach on big matmuls (issue 15).
TEST(PeakRates, LargeF16MatMulWithPreloadedWeightsReachesSeventyPercentOfPeak) {
  const std::size_t n = 2048;
  hwsim::Graph g(hwsim::Target::gc200());
  auto a = hwsim::ops::createMatMulInputLhs(g, Type::F16, {n, n}, {n, n}, "a", {}, true);
  auto b = hwsim::ops::createMatMulInputRhs(g, Type::F16, {n, n}, {n, n}, "b", {}, true);
  p::Sequence load, main;
  hwsim::ops::matMul(g, main, a, b, "mm", {}, Type::F16, &load);
  const hwsim::Executable exe = hwsim::compileGraph(g, {load, main});
  std::uint64_t perRun = 0, loadCopies = 0;
  for (const auto &s : exe.programSteps()) (s.name == "mm/exchange_b" ? loadCopies : perRun) += s.cycles;
  EXPECT_GT(loadCopies, 0u) << "b is expected on more than one row of tiles";
  const hwsim::Target &t = exe.target();
  const double peak = 2.0 * n * n * n / (t.f16MatMulFlopsPerCycle * t.numTiles());
  EXPECT_GE(peak / static_cast<double>(perRun), 0.7) << perRun << " cycles per run, " << peak << " at peak";
}

// Every tile sends 64 KiB to its neighbour: GC200's 8 TB/s exchange.
TEST(PeakRates, ExchangeIsGc200s8TerabytesPerSecond) {
  hwsim::Graph g(hwsim::Target::gc200());
  const unsigned tiles = g.getTarget().numTiles();
  const std::size_t perTile = 16 * 1024;  // F32 elements: 64 KiB
  auto src = g.addVariable(Type::F32, {tiles * perTile}, "src");
  auto dst = g.addVariable(Type::F32, {tiles * perTile}, "dst");
  for (unsigned t = 0; t < tiles; ++t) {
    g.setTileMapping(src.slice(t * perTile, (t + 1) * perTile), t);
    g.setTileMapping(dst.slice(t * perTile, (t + 1) * perTile), (t + 1) % tiles);
  }
  const hwsim::Executable exe = hwsim::compileGraph(g, {p::Copy(src, dst)});
  expectWithin5Percent(4.0 * tiles * perTile / stepSeconds(exe, "Copy"), 8e12, "exchange");
}

// 16 MiB from the host: PCIe Gen4 x16, 31.5 GB/s each way.
TEST(PeakRates, HostLinkIsPcieGen4x16) {
  hwsim::Graph g(hwsim::Target::gc200());
  const std::size_t n = 4 << 20;
  auto t = hwsim::ops::createTensor(g, Type::F32, {1024, n / 1024}, "t");
  auto in = g.addHostToDeviceFIFO("in", Type::F32, n);
  auto out = g.addDeviceToHostFIFO("out", Type::F32, n);
  const hwsim::Executable toDevice = hwsim::compileGraph(g, {p::Copy(in, t)});
  expectWithin5Percent(4.0 * n / stepSeconds(toDevice, "StreamToTensor"), 31.5e9, "host to device");
  const hwsim::Executable toHost = hwsim::compileGraph(g, {p::Copy(t, out)});
  expectWithin5Percent(4.0 * n / stepSeconds(toHost, "TensorToStream"), 31.5e9, "device to host");
}

// 32 MiB from every tile of IPU 0 to IPU 1: 10 IPU-Links, 160 GB/s each way.
TEST(PeakRates, IpuLinksAreGc200s160GigabytesPerSecondEachWay) {
  hwsim::Graph g(hwsim::Target::gc200(2));
  const unsigned perIpu = g.getTarget().tilesPerIpu;
  const std::size_t n = 8 << 20;
  auto src = hwsim::ops::createTensor(g, Type::F32, {1024, n / 1024}, "src", {0, perIpu});
  auto dst = hwsim::ops::createTensor(g, Type::F32, {1024, n / 1024}, "dst", {perIpu, perIpu});
  const hwsim::Executable exe = hwsim::compileGraph(g, {p::Copy(src, dst)});
  expectWithin5Percent(4.0 * n / stepSeconds(exe, "Copy"), 160e9, "IPU-Links");
}

}  // namespace
