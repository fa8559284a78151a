// Planar operands (planar_operands.hpp): a Conv vertex is handed its out
// planes in place at their pitch, and reads an input whose channel planes
// one copy fills from sources at one pitch (mnist-8's second Conv: the
// exchange of each tile's input rows and their halo) from those sources.
// The scenario is built with host.planarOperands on and off and must give
// the same bytes and modelled cycles, and the convolution's values.
#include <cmath>
#include <cstring>
#include <limits>

#include "engine_impl.hpp"
#include "planar_operands.hpp"
#include "test_util.hpp"

namespace {

using hwsim::Shape;
using hwsim::Type;
using hwsim_test::Harness;
namespace p = hwsim::program;

constexpr std::size_t kC = 3, kH = 6, kW = 7, kM = 4, kK = 3;  // 3x3 kernel, pad 1
constexpr unsigned kTiles = 4;

hwsim::OptionFlags withPlanes(bool on) { return {{"host.planarOperands", on ? "true" : "false"}}; }

// prefix followed by i (appended: GCC 12 warns, wrongly, of an overlapping
// memcpy in const char* + std::string).
std::string numbered(const char *prefix, std::size_t i) {
  std::string name = prefix;
  name += std::to_string(i);
  return name;
}

std::vector<std::uint8_t> bytesOf(const std::vector<float> &v) {
  std::vector<std::uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// out [1, kM, kH, kW] = conv(x [1, kC, kH, kW], w [kM, kC, 3, 3]), pad 1, one
// vertex per block of 2 output channels and one row, row r on tile r % 4:
// its input rows (with the halo) copied to the tile by one exchange copy for
// all vertices, its out two planes of one row (kH * kW floats apart). The
// second channel block accumulates into out.
struct SplitConv {
  explicit SplitConv(bool planar) {
    auto x = h.input("x", Type::F32, {1, kC, kH, kW});
    auto w = h.input("w", Type::F32, {kM, kC, kK, kK});
    auto out = h.graph.addVariable(Type::F32, {1, kM, kH, kW}, "out");
    h.graph.createHostRead("out", out);
    h.graph.createHostWrite("out_in", out);
    auto cs = h.graph.addComputeSet("conv");
    p::Sequence load;
    std::vector<hwsim::Tensor> weightsOn;
    for (unsigned t = 0; t < kTiles; ++t) {
      weightsOn.push_back(h.graph.addVariable(Type::F32, {kM, kC, kK, kK}, numbered("w", t)));
      h.graph.setTileMapping(weightsOn[t], t);
      load.add(p::Copy(w, weightsOn[t]));
    }
    std::vector<hwsim::Tensor> sources, halos;
    for (std::size_t r = 0; r < kH; ++r) {
      const unsigned tile = static_cast<unsigned>(r % kTiles);
      h.graph.setTileMapping(out.slice(r, r + 1, 2), tile);
      const std::size_t r0 = r == 0 ? 0 : r - 1, r1 = std::min(kH, r + 2);
      auto halo = h.graph.addVariable(Type::F32, {1, kC, r1 - r0, kW}, numbered("halo", r));
      h.graph.setTileMapping(halo, tile);
      sources.push_back(x.slice(r0, r1, 2).flatten());
      halos.push_back(halo.flatten());
      const double padTop = r == 0 ? 1 : 0, padBottom = r + 2 > kH ? 1 : 0;
      for (std::size_t m0 = 0; m0 < kM; m0 += 2) {
        auto v = h.graph.addVertex(cs, "Conv",
                                   {{"in", halo},
                                    {"weights", weightsOn[tile].slice(m0, m0 + 2, 0)},
                                    {"out", out.slice(m0, m0 + 2, 1).slice(r, r + 1, 2)}},
                                   tile);
        h.graph.setInitialValue(v, "pads", {padTop, 1, padBottom, 1});
        if (m0 > 0) h.graph.setInitialValue(v, "accumulate", 1.0);
      }
    }
    auto in = h.graph.addHostToDeviceFIFO("in", Type::F32, kC * kH * kW);
    const p::Copy exchange(hwsim::concat(sources), hwsim::concat(halos));
    h.build({load, p::Sequence{p::Copy(in, x), exchange, p::Execute(cs)}, p::Sequence{p::Execute(cs)}},
            withPlanes(planar));
    h.engine->connectStream("in", streamed.data());
  }
  std::vector<float> run(unsigned program, const std::vector<float> &input) {
    streamed = input;
    EXPECT_EQ(h.engine->run(program), hwsim::RunStatus::Completed);
    return h.read<float>("out", kM * kH * kW);
  }

  Harness h;
  std::vector<float> streamed = std::vector<float>(kC * kH * kW, 0.f);
};

// out (+)= conv(x, w) as SplitConv computes it: channels [0, 2) assigned,
// [2, 4) accumulated.
void referenceConv(const std::vector<float> &x, const std::vector<float> &w, std::vector<float> &out) {
  for (std::size_t m = 0; m < kM; ++m) {
    for (std::size_t r = 0; r < kH; ++r) {
      for (std::size_t c0 = 0; c0 < kW; ++c0) {
        double sum = 0;
        for (std::size_t c = 0; c < kC; ++c) {
          for (std::size_t kh = 0; kh < kK; ++kh) {
            for (std::size_t kw = 0; kw < kK; ++kw) {
              const long ih = long(r + kh) - 1, iw = long(c0 + kw) - 1;
              if (ih < 0 || iw < 0 || ih >= long(kH) || iw >= long(kW)) continue;
              sum += double(x[(c * kH + ih) * kW + iw]) * w[((m * kC + c) * kK + kh) * kK + kw];
            }
          }
        }
        float &o = out[(m * kH + r) * kW + c0];
        o = m < 2 ? float(sum) : o + float(sum);
      }
    }
  }
}

// What the engine planned for the Conv vertices' in and out: how many ins
// read the exchange's sources at a pitch (one plane per input channel,
// kH * kW floats apart), and how many outs are in place at a pitch (one
// plane per output channel); none gathered or scattered when planar.
struct PlanarPlan {
  std::size_t inFromSources = 0, outInPlace = 0, scattered = 0;
};

PlanarPlan planOf(const Harness &h) {
  PlanarPlan plan;
  for (const auto &cs : hwsim::Engine::Impl::of(*h.engine).csVertices) {
    for (const auto &vx : cs.vertices) {
      if (vx.spec->name != "Conv") continue;
      const hwsim::detail::PreparedOperand *ops = cs.operands.data() + vx.firstOperand;
      if (ops[0].read.planePitch == kH * kW * sizeof(float)) ++plan.inFromSources;
      if (ops[2].inPlace && ops[2].planePitch == kH * kW * sizeof(float)) ++plan.outInPlace;
      if (vx.anyScattered) ++plan.scattered;
    }
  }
  return plan;
}

TEST(PlanarOperands, SplitConvGivesTheBytesAndCyclesOfGatheredOperands) {
  SplitConv planar(true), gathered(false);
  const PlanarPlan on = planOf(planar.h), off = planOf(gathered.h);
  EXPECT_EQ(on.inFromSources, 2 * kH);
  EXPECT_EQ(on.outInPlace, 2 * kH);
  EXPECT_EQ(on.scattered, 0u);
  EXPECT_EQ(off.inFromSources, 0u);
  EXPECT_EQ(off.outInPlace, 0u);
  EXPECT_EQ(off.scattered, 2 * kH);
  const auto w = hwsim_test::randomFloats(kM * kC * kK * kK, -1, 1, 1);
  const auto outStart = hwsim_test::randomFloats(kM * kH * kW, -1, 1, 2);
  std::vector<std::vector<float>> seen[2];
  for (int k = 0; k < 2; ++k) {
    SplitConv &m = k == 0 ? planar : gathered;
    m.h.write("w", w);
    m.h.write("out_in", outStart);
    ASSERT_EQ(m.h.engine->run(0), hwsim::RunStatus::Completed);
    // Each run its own input; a host write of x between runs (the pending
    // exchange must keep the old rows), and a program without the exchange.
    seen[k].push_back(m.run(1, hwsim_test::randomFloats(kC * kH * kW, -1, 1, 3)));
    seen[k].push_back(m.run(1, hwsim_test::randomFloats(kC * kH * kW, -1, 1, 4)));
    m.h.write("x", hwsim_test::randomFloats(kC * kH * kW, -1, 1, 5));
    seen[k].push_back(m.run(2, std::vector<float>(kC * kH * kW, 0.f)));
    seen[k].push_back(m.run(1, hwsim_test::randomFloats(kC * kH * kW, -1, 1, 6)));
  }
  for (std::size_t i = 0; i < seen[0].size(); ++i) EXPECT_EQ(bytesOf(seen[0][i]), bytesOf(seen[1][i])) << "run " << i;
  EXPECT_EQ(planar.h.engine->deviceCycles(), gathered.h.engine->deviceCycles());
  // And the values are the convolution of the rows each run exchanged (the
  // program without the exchange: those of the run before the host write).
  std::vector<float> want = outStart;
  const unsigned seeds[] = {3, 4, 4, 6};
  for (std::size_t i = 0; i < 4; ++i) {
    referenceConv(hwsim_test::randomFloats(kC * kH * kW, -1, 1, seeds[i]), w, want);
    for (std::size_t e = 0; e < want.size(); ++e) {
      EXPECT_NEAR(seen[0][i][e], want[e], 1e-4) << "run " << i << " element " << e;
    }
  }
}

// A Conv whose out (channels 1-2 of row 0 of t: two planes apart) shares
// channel 1 with its in (channels 0-1 of t): out stays gathered and
// scattered, so the codelet reads in before anything is written.
TEST(PlanarOperands, OutSharingBytesWithInStaysScattered) {
  std::vector<float> got[2];
  const auto start = hwsim_test::randomFloats(3 * 2 * 4, -1, 1, 7), w = hwsim_test::randomFloats(4, -1, 1, 8);
  for (int k = 0; k < 2; ++k) {
    Harness h;
    auto t = h.input("t", Type::F32, {1, 3, 2, 4});
    h.graph.createHostRead("t_out", t);
    auto wt = h.input("w", Type::F32, {2, 2, 1, 1});
    h.build({h.vertex("Conv", {{"in", t.slice(0, 2, 1)}, {"weights", wt}, {"out", t.slice(1, 3, 1).slice(0, 1, 2)}}, 0,
                      {{"strides", {2, 1}}})},
            withPlanes(k == 0));
    EXPECT_EQ(planOf(h).scattered, 1u);
    h.write("t", start);
    h.write("w", w);
    EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
    got[k] = h.read<float>("t_out", start.size());
  }
  EXPECT_EQ(bytesOf(got[0]), bytesOf(got[1]));
  for (std::size_t m = 0; m < 2; ++m) {
    for (std::size_t c0 = 0; c0 < 4; ++c0) {
      const float want = w[m * 2] * start[c0] + w[m * 2 + 1] * start[8 + c0];
      EXPECT_NEAR(got[0][(m + 1) * 8 + c0], want, 1e-6) << "channel " << m << " column " << c0;
    }
  }
}

TEST(PlanarOperands, PitchOfAViewsRanges) {
  using hwsim::detail::viewPlanePitch;
  using Ranges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
  const Shape twoRows{1, 2, 1, 14};  // 2 planes of 56 bytes
  EXPECT_EQ(viewPlanePitch(Ranges{{100, 56}, {884, 56}}, Type::F32, twoRows), 784u);
  EXPECT_EQ(viewPlanePitch(Ranges{{100, 28}, {884, 28}}, Type::F16, twoRows), 784u);
  EXPECT_EQ(viewPlanePitch(Ranges{{100, 112}}, Type::F32, twoRows), 56u);  // end to end
  // A plane in two pieces, pitches that differ or go backwards, a pitch
  // that is not a whole number of elements, one plane: no pitch.
  EXPECT_EQ(viewPlanePitch(Ranges{{0, 28}, {100, 28}, {200, 56}}, Type::F32, twoRows), 0u);
  EXPECT_EQ(viewPlanePitch(Ranges{{0, 56}, {100, 56}, {300, 56}}, Type::F32, Shape{1, 3, 1, 14}), 0u);
  EXPECT_EQ(viewPlanePitch(Ranges{{500, 56}, {0, 56}}, Type::F32, twoRows), 0u);
  EXPECT_EQ(viewPlanePitch(Ranges{{0, 56}, {58, 56}}, Type::F32, twoRows), 0u);
  EXPECT_EQ(viewPlanePitch(Ranges{{0, 56}}, Type::F32, Shape{1, 1, 1, 14}), 0u);
}

}  // namespace
