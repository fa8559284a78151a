// Conv, MaxPool and AveragePool codelets and the ops::conv / ops::pool
// builders against naive reference loops (ONNX semantics), bad shapes, costs
// and tile memory for mnist- and ResNet-sized layers.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "test_util.hpp"

namespace {

using hwsim::Shape;
using hwsim::Type;
namespace p = hwsim::program;
namespace ops = hwsim::ops;

std::size_t numel(const Shape &s) {
  std::size_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Spatial geometry as 2-D (1-D: H = 1).
struct Geo {
  std::size_t H = 1, W, KH = 1, KW, OH = 1, OW, sh = 1, sw, ph = 0, pw, dh = 1, dw;
};
Geo geo(const Shape &in, const Shape &k, const Shape &out, const ops::ConvParams &cp) {
  auto at = [](const std::vector<std::size_t> &v, std::size_t i, std::size_t d) { return v.empty() ? d : v[i]; };
  Geo g;
  const std::size_t S = in.size() - 2, last = S - 1;
  g.W = in.back();
  g.KW = k.back();
  g.OW = out.back();
  g.sw = at(cp.strides, last, 1);
  g.pw = at(cp.padsBegin, last, 0);
  g.dw = at(cp.dilations, last, 1);
  if (S == 2) {
    g.H = in[2];
    g.KH = k[0];
    g.OH = out[2];
    g.sh = at(cp.strides, 0, 1);
    g.ph = at(cp.padsBegin, 0, 0);
    g.dh = at(cp.dilations, 0, 1);
  }
  return g;
}

std::vector<double> refConv(const std::vector<float> &x, const std::vector<float> &w, const Shape &in, const Shape &ws,
                            const ops::ConvParams &cp) {
  const Shape out = ops::convOutputShape(in, ws, cp);
  const Geo g = geo(in, Shape(ws.begin() + 2, ws.end()), out, cp);
  const std::size_t N = in[0], C = in[1], M = ws[0], G = cp.group, Cg = C / G, Mg = M / G;
  std::vector<double> y(numel(out), 0.0);
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t oh = 0; oh < g.OH; ++oh)
        for (std::size_t ow = 0; ow < g.OW; ++ow) {
          double s = 0;
          const std::size_t gi = m / Mg;
          for (std::size_t c = 0; c < Cg; ++c)
            for (std::size_t kh = 0; kh < g.KH; ++kh)
              for (std::size_t kw = 0; kw < g.KW; ++kw) {
                const long ih = long(oh * g.sh + kh * g.dh) - long(g.ph);
                const long iw = long(ow * g.sw + kw * g.dw) - long(g.pw);
                if (ih < 0 || iw < 0 || ih >= long(g.H) || iw >= long(g.W)) continue;
                s += double(x[((n * C + gi * Cg + c) * g.H + ih) * g.W + iw]) *
                     w[((m * Cg + c) * g.KH + kh) * g.KW + kw];
              }
          y[((n * M + m) * g.OH + oh) * g.OW + ow] = s;
        }
  return y;
}

std::vector<double> refPool(bool isMax, const std::vector<float> &x, const Shape &in, const ops::PoolParams &pp) {
  const Shape out = ops::poolOutputShape(in, pp);
  ops::ConvParams cp{pp.strides, pp.padsBegin, pp.padsEnd, pp.dilations, 1};
  const Geo g = geo(in, pp.kernelShape, out, cp);
  const std::size_t S = in.size() - 2;
  auto at = [](const std::vector<std::size_t> &v, std::size_t i) { return v.empty() ? std::size_t{0} : v[i]; };
  const long peh = S == 2 ? long(at(pp.padsEnd, 0)) : 0, pew = long(at(pp.padsEnd, S - 1));
  std::vector<double> y(numel(out));
  for (std::size_t nc = 0; nc < in[0] * in[1]; ++nc)
    for (std::size_t oh = 0; oh < g.OH; ++oh)
      for (std::size_t ow = 0; ow < g.OW; ++ow) {
        double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
        long valid = 0, padded = 0;
        for (std::size_t kh = 0; kh < g.KH; ++kh)
          for (std::size_t kw = 0; kw < g.KW; ++kw) {
            const long ih = long(oh * g.sh + kh * g.dh) - long(g.ph);
            const long iw = long(ow * g.sw + kw * g.dw) - long(g.pw);
            if (ih >= -long(g.ph) && ih < long(g.H) + peh && iw >= -long(g.pw) && iw < long(g.W) + pew) ++padded;
            if (ih < 0 || iw < 0 || ih >= long(g.H) || iw >= long(g.W)) continue;
            const double v = x[(nc * g.H + ih) * g.W + iw];
            ++valid;
            acc = isMax ? std::max(acc, v) : acc + v;
          }
        if (!isMax) acc /= double(pp.countIncludePad ? padded : valid);
        y[(nc * g.OH + oh) * g.OW + ow] = acc;
      }
  return y;
}

void expectNear(const std::vector<float> &got, const std::vector<double> &want, double tol, const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " element " << i;
  }
}

std::vector<double> convAttr(const ops::ConvParams &cp, const std::vector<std::size_t> &v) {
  (void)cp;
  return {v.begin(), v.end()};
}

struct ConvCase {
  const char *name;
  Shape in, weights;
  ops::ConvParams params;
};

const std::vector<ConvCase> &convCases() {
  static const std::vector<ConvCase> cases = {
      {"2d_plain", {2, 3, 9, 8}, {4, 3, 3, 3}, {}},
      {"2d_1x1", {1, 5, 6, 7}, {6, 5, 1, 1}, {}},
      {"2d_strides_pads", {1, 3, 11, 10}, {5, 3, 3, 2}, {{2, 3}, {1, 0}, {2, 1}, {}, 1}},
      {"2d_dilations", {1, 2, 12, 12}, {3, 2, 3, 3}, {{1, 2}, {2, 2}, {1, 2}, {2, 3}, 1}},
      {"2d_groups", {2, 6, 7, 7}, {4, 3, 3, 3}, {{}, {1, 1}, {1, 1}, {}, 2}},
      {"2d_depthwise", {1, 8, 9, 9}, {8, 1, 3, 3}, {{2, 2}, {1, 1}, {1, 1}, {}, 8}},
      {"2d_mnist1", {1, 1, 28, 28}, {8, 1, 5, 5}, {{}, {2, 2}, {2, 2}, {}, 1}},
      {"2d_mnist2", {1, 8, 14, 14}, {16, 8, 5, 5}, {{}, {2, 2}, {2, 2}, {}, 1}},
      {"2d_3_channels_dilated", {1, 2, 9, 40}, {3, 2, 3, 3}, {{}, {2, 3}, {2, 3}, {2, 3}, 1}},
      {"1d_plain", {2, 3, 17}, {4, 3, 5}, {}},
      {"1d_strides_pads_dilations", {1, 4, 20}, {6, 2, 3}, {{3}, {2}, {1}, {2}, 2}},
  };
  return cases;
}

// One Conv vertex on tile 0.
std::vector<float> runConvVertex(const ConvCase &c, const std::vector<float> &x, const std::vector<float> &w) {
  hwsim_test::Harness h;
  const Shape outShape = ops::convOutputShape(c.in, c.weights, c.params);
  auto in = h.input("in", Type::F32, c.in);
  auto wt = h.input("w", Type::F32, c.weights);
  auto out = h.output("out", Type::F32, outShape);
  std::vector<double> pads;
  const std::size_t S = c.in.size() - 2;
  for (std::size_t d = 0; d < 2 * S; ++d) {
    const auto &v = d < S ? c.params.padsBegin : c.params.padsEnd;
    pads.push_back(v.empty() ? 0.0 : double(v[d % S]));
  }
  h.build({h.vertex("Conv", {{"in", in}, {"weights", wt}, {"out", out}}, 0,
                    {{"strides", convAttr(c.params, c.params.strides)},
                     {"pads", pads},
                     {"dilations", convAttr(c.params, c.params.dilations)},
                     {"group", {double(c.params.group)}}})});
  h.write("in", x);
  h.write("w", w);
  EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
  return h.read<float>("out", numel(outShape));
}

// ops::conv over the 4 tiles of the small model.
std::vector<float> runConvOp(const ConvCase &c, const std::vector<float> &x, const std::vector<float> &w,
                             bool residentWeights) {
  hwsim_test::Harness h;
  auto in = h.input("in", Type::F32, c.in);
  hwsim::Tensor wt;
  if (residentWeights) {
    wt = ops::createConvWeights(h.graph, Type::F32, c.in, c.weights, c.params, "w");
    h.graph.createHostWrite("w", wt);
  } else {
    wt = h.input("w", Type::F32, c.weights, 3);
  }
  p::Sequence prog;
  auto out = ops::conv(h.graph, prog, in, wt, c.params, "conv");
  EXPECT_EQ(out.shape(), ops::convOutputShape(c.in, c.weights, c.params));
  h.graph.createHostRead("out", out);
  h.build({prog});
  h.write("in", x);
  h.write("w", w);
  EXPECT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
  return h.read<float>("out", out.numElements());
}

TEST(Conv, VertexMatchesReference) {
  unsigned seed = 1;
  for (const auto &c : convCases()) {
    const auto x = hwsim_test::randomFloats(numel(c.in), -1, 1, seed++);
    const auto w = hwsim_test::randomFloats(numel(c.weights), -1, 1, seed++);
    expectNear(runConvVertex(c, x, w), refConv(x, w, c.in, c.weights, c.params), 1e-4, c.name);
  }
}

TEST(Conv, OpOverTilesMatchesReference) {
  unsigned seed = 100;
  for (const auto &c : convCases()) {
    const auto x = hwsim_test::randomFloats(numel(c.in), -1, 1, seed++);
    const auto w = hwsim_test::randomFloats(numel(c.weights), -1, 1, seed++);
    const auto want = refConv(x, w, c.in, c.weights, c.params);
    expectNear(runConvOp(c, x, w, false), want, 1e-4, std::string(c.name) + " (weights exchanged)");
    expectNear(runConvOp(c, x, w, true), want, 1e-4, std::string(c.name) + " (createConvWeights)");
  }
}

TEST(Conv, F16InputsWithF32AndF16Out) {
  const Shape is{1, 3, 8, 8}, ws{4, 3, 3, 3};
  const ops::ConvParams cp{{}, {1, 1}, {1, 1}, {}, 1};
  const auto x = hwsim_test::randomFloats(numel(is), -1, 1, 7), w = hwsim_test::randomFloats(numel(ws), -1, 1, 8);
  const auto xh = hwsim_test::toHalf(x), wh = hwsim_test::toHalf(w);
  const auto want = refConv(hwsim_test::fromHalf(xh), hwsim_test::fromHalf(wh), is, ws, cp);
  for (Type outType : {Type::F32, Type::F16}) {
    hwsim_test::Harness h;
    auto in = h.input("in", Type::F16, is);
    auto wt = h.input("w", Type::F16, ws);
    p::Sequence prog;
    auto out = ops::conv(h.graph, prog, in, wt, cp, "conv", {}, outType);
    h.graph.createHostRead("out", out);
    h.build({prog});
    h.write("in", xh);
    h.write("w", wh);
    h.engine->run(0);
    const auto got = outType == Type::F32 ? h.read<float>("out", want.size())
                                          : hwsim_test::fromHalf(h.read<std::uint16_t>("out", want.size()));
    expectNear(got, want, outType == Type::F32 ? 1e-4 : 4e-3, outType == Type::F32 ? "f16->f32" : "f16->f16");
  }
}

TEST(Conv, AccumulateAddsToOut) {
  hwsim_test::Harness h;
  const Shape is{1, 2, 5, 5}, ws{3, 2, 3, 3}, os{1, 3, 3, 3};
  auto in = h.input("in", Type::F32, is);
  auto wt = h.input("w", Type::F32, ws);
  auto out = h.output("out", Type::F32, os);
  h.graph.createHostWrite("out_in", out);
  h.build({h.vertex("Conv", {{"in", in}, {"weights", wt}, {"out", out}}, 0, {{"accumulate", {1}}})});
  const auto x = hwsim_test::randomFloats(numel(is), -1, 1, 3), w = hwsim_test::randomFloats(numel(ws), -1, 1, 4);
  const std::vector<float> bias(numel(os), 0.5f);
  h.write("in", x);
  h.write("w", w);
  h.write("out_in", bias);
  h.engine->run(0);
  auto want = refConv(x, w, is, ws, {});
  for (auto &v : want) v += 0.5;
  expectNear(h.read<float>("out", want.size()), want, 1e-4, "accumulate");
}

struct PoolCase {
  const char *name;
  Shape in;
  ops::PoolParams params;
};

TEST(Pool, MaxAndAverageMatchReference) {
  const std::vector<PoolCase> cases = {
      {"2d_2x2", {2, 3, 8, 8}, {{2, 2}, {2, 2}, {}, {}, {}, false, false}},
      {"2d_3x3_s2_pad", {1, 4, 9, 10}, {{3, 3}, {2, 2}, {1, 1}, {1, 1}, {}, false, false}},
      {"2d_3x3_s2_pad_countpad", {1, 4, 9, 10}, {{3, 3}, {2, 2}, {1, 1}, {1, 1}, {}, true, false}},
      {"2d_asym_pads_dil", {1, 2, 11, 9}, {{2, 3}, {1, 2}, {0, 2}, {1, 1}, {2, 1}, true, false}},
      {"2d_ceil_mode", {1, 3, 7, 7}, {{2, 2}, {2, 2}, {}, {}, {}, false, true}},
      {"2d_ceil_mode_countpad", {1, 3, 7, 6}, {{3, 3}, {2, 2}, {1, 0}, {0, 0}, {}, true, true}},
      {"1d", {2, 3, 15}, {{3}, {2}, {1}, {1}, {}, false, false}},
      {"1d_countpad", {2, 3, 15}, {{4}, {3}, {2}, {1}, {}, true, false}},
  };
  unsigned seed = 50;
  for (const auto &c : cases) {
    const auto x = hwsim_test::randomFloats(numel(c.in), -2, 2, seed++);
    for (const char *codelet : {"MaxPool", "AveragePool"}) {
      const bool isMax = std::string(codelet) == "MaxPool";
      hwsim_test::Harness h;
      auto in = h.input("in", Type::F32, c.in);
      p::Sequence prog;
      auto out = ops::pool(h.graph, prog, codelet, in, c.params, "pool");
      h.graph.createHostRead("out", out);
      h.build({prog});
      h.write("in", x);
      ASSERT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
      expectNear(h.read<float>("out", out.numElements()), refPool(isMax, x, c.in, c.params), 1e-5,
                 std::string(c.name) + " " + codelet);
    }
  }
}

// MaxPool without padding (the kernels' inside-the-input path, which takes
// a block of columns one window tap at a time) gives std::max's result in
// window order bit for bit: NaN never wins, and of +0 and -0 the first seen.
TEST(Pool, MaxPoolKeepsStdMaxOrderForNaNAndSignedZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float specials[] = {nan, -0.0f, 0.0f, inf, -inf, 1.0f, -1.0f, 0.0f, -0.0f};
  const std::vector<PoolCase> cases = {
      {"2x2_s2", {1, 2, 8, 9}, {{2, 2}, {2, 2}, {}, {}, {}, false, false}},
      {"3x3_s3", {1, 2, 9, 9}, {{3, 3}, {3, 3}, {}, {}, {}, false, false}},
      {"3x2_s1", {1, 2, 7, 70}, {{3, 2}, {1, 1}, {}, {}, {}, false, false}},
  };
  std::mt19937 gen(77);
  for (const auto &c : cases) {
    std::vector<float> x(numel(c.in));
    for (auto &v : x) v = specials[gen() % std::size(specials)];
    hwsim_test::Harness h;
    auto in = h.input("in", Type::F32, c.in);
    p::Sequence prog;
    auto out = ops::pool(h.graph, prog, "MaxPool", in, c.params, "pool");
    h.graph.createHostRead("out", out);
    h.build({prog});
    h.write("in", x);
    ASSERT_EQ(h.engine->run(0), hwsim::RunStatus::Completed);
    const auto got = h.read<float>("out", out.numElements());
    const Shape os = out.shape();
    const std::size_t H = c.in[2], W = c.in[3], KH = c.params.kernelShape[0], KW = c.params.kernelShape[1];
    const std::size_t sh = c.params.strides[0], sw = c.params.strides[1];
    for (std::size_t ch = 0; ch < c.in[1]; ++ch) {
      for (std::size_t oh = 0; oh < os[2]; ++oh) {
        for (std::size_t ow = 0; ow < os[3]; ++ow) {
          float want = -inf;
          for (std::size_t kh = 0; kh < KH; ++kh) {
            for (std::size_t kw = 0; kw < KW; ++kw) want = std::max(want, x[(ch * H + oh * sh + kh) * W + ow * sw + kw]);
          }
          const float g = got[(ch * os[2] + oh) * os[3] + ow];
          std::uint32_t wantBits = 0, gotBits = 0;
          std::memcpy(&wantBits, &want, 4);
          std::memcpy(&gotBits, &g, 4);
          ASSERT_EQ(gotBits, wantBits) << c.name << " channel " << ch << " at " << oh << "," << ow;
        }
      }
    }
  }
}

TEST(Pool, CeilModeDropsWindowStartingInEndPadding) {
  // 6 wide, kernel 2, stride 2, end pad 1: ceil gives 4 windows but the 4th
  // starts at 6 (the padding), so 3 remain, as ONNX Runtime.
  ops::PoolParams pp{{2}, {2}, {0}, {1}, {}, false, true};
  EXPECT_EQ(ops::poolOutputShape({1, 1, 6}, pp), (Shape{1, 1, 3}));
  pp.padsEnd = {0};
  EXPECT_EQ(ops::poolOutputShape({1, 1, 7}, pp), (Shape{1, 1, 4}));
}

std::string compileError(hwsim_test::Harness &h, const std::vector<p::Program> &progs) {
  try {
    hwsim::compileGraph(h.graph, progs);
  } catch (const hwsim::Error &e) {
    return e.what();
  }
  return "";
}

TEST(Conv, BadShapesAreCompileErrorsNamingTheProblem) {
  {
    hwsim_test::Harness h;  // wrong out spatial size
    auto in = h.input("in", Type::F32, {1, 2, 6, 6});
    auto w = h.input("w", Type::F32, {3, 2, 3, 3});
    auto out = h.output("out", Type::F32, {1, 3, 5, 4});
    const auto err = compileError(h, {h.vertex("Conv", {{"in", in}, {"weights", w}, {"out", out}})});
    EXPECT_NE(err.find("out spatial dimension 0 is 5, expected 4"), std::string::npos) << err;
  }
  {
    hwsim_test::Harness h;  // weights channels do not match in / group
    auto in = h.input("in", Type::F32, {1, 4, 6, 6});
    auto w = h.input("w", Type::F32, {4, 4, 3, 3});
    auto out = h.output("out", Type::F32, {1, 4, 4, 4});
    const auto err =
        compileError(h, {h.vertex("Conv", {{"in", in}, {"weights", w}, {"out", out}}, 0, {{"group", {2}}})});
    EXPECT_NE(err.find("dimension 1 = in channels / group = 2"), std::string::npos) << err;
  }
  {
    hwsim_test::Harness h;  // rank 5
    auto in = h.input("in", Type::F32, {1, 1, 2, 2, 2});
    auto w = h.input("w", Type::F32, {1, 1, 1, 1, 1});
    auto out = h.output("out", Type::F32, {1, 1, 2, 2, 2});
    const auto err = compileError(h, {h.vertex("Conv", {{"in", in}, {"weights", w}, {"out", out}})});
    EXPECT_NE(err.find("rank 3 or 4"), std::string::npos) << err;
  }
  {
    hwsim_test::Harness h;  // pads attribute of the wrong length
    auto in = h.input("in", Type::F32, {1, 1, 6, 6});
    auto w = h.input("w", Type::F32, {1, 1, 3, 3});
    auto out = h.output("out", Type::F32, {1, 1, 6, 6});
    const auto err =
        compileError(h, {h.vertex("Conv", {{"in", in}, {"weights", w}, {"out", out}}, 0, {{"pads", {1, 1}}})});
    EXPECT_NE(err.find("attribute pads needs 4 values"), std::string::npos) << err;
  }
  for (const auto &[attr, values, want] : std::vector<std::tuple<const char *, std::vector<double>, const char *>>{
           {"strides", {1, 1.5}, "attribute strides value 1.5 must be an integer in [1, 16777216]"},
           {"dilations", {0, 1}, "attribute dilations value 0 must be an integer in [1, 16777216]"},
           {"pads", {0, -1, 0, 0}, "attribute pads value -1 must be an integer in [0, 16777216]"}}) {
    hwsim_test::Harness h;  // attribute values out of range
    auto in = h.input("in", Type::F32, {1, 1, 6, 6});
    auto w = h.input("w", Type::F32, {1, 1, 3, 3});
    auto out = h.output("out", Type::F32, {1, 1, 4, 4});
    const auto err =
        compileError(h, {h.vertex("Conv", {{"in", in}, {"weights", w}, {"out", out}}, 0, {{attr, values}})});
    EXPECT_NE(err.find(want), std::string::npos) << err;
  }
  {
    hwsim_test::Harness h;  // pool kernel_shape of the wrong length
    auto in = h.input("in", Type::F32, {1, 1, 6, 6});
    auto out = h.output("out", Type::F32, {1, 1, 3, 3});
    const auto err = compileError(h, {h.vertex("MaxPool", {{"in", in}, {"out", out}}, 0, {{"kernel_shape", {2}}})});
    EXPECT_NE(err.find("attribute kernel_shape needs 2 values (got 1)"), std::string::npos) << err;
  }
  {
    hwsim_test::Harness h;  // mixed types
    auto in = h.input("in", Type::F32, {1, 1, 4, 4});
    auto w = h.input("w", Type::F16, {1, 1, 3, 3});
    auto out = h.output("out", Type::F32, {1, 1, 2, 2});
    const auto err = compileError(h, {h.vertex("Conv", {{"in", in}, {"weights", w}, {"out", out}})});
    EXPECT_NE(err.find("must both be F32 or both F16"), std::string::npos) << err;
  }
  {
    hwsim_test::Harness h;  // pool out too big
    auto in = h.input("in", Type::F32, {1, 2, 6, 6});
    auto out = h.output("out", Type::F32, {1, 2, 4, 3});
    const auto err =
        compileError(h, {h.vertex("MaxPool", {{"in", in}, {"out", out}}, 0, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}})});
    EXPECT_NE(err.find("out spatial dimension 0 is 4, expected 3"), std::string::npos) << err;
  }
  {
    hwsim_test::Harness h;  // pool without kernel_shape
    auto in = h.input("in", Type::F32, {1, 2, 6, 6});
    auto out = h.output("out", Type::F32, {1, 2, 3, 3});
    const auto err = compileError(h, {h.vertex("AveragePool", {{"in", in}, {"out", out}})});
    EXPECT_NE(err.find("kernel_shape is required"), std::string::npos) << err;
  }
  // The ops reject what they cannot build, before any vertex exists.
  hwsim_test::Harness h;
  auto in = h.input("in", Type::F32, {1, 3, 6, 6});
  auto w = h.input("w", Type::F32, {4, 2, 3, 3});
  p::Sequence prog;
  EXPECT_THROW(ops::conv(h.graph, prog, in, w, {}, "bad"), hwsim::Error);
}

std::uint64_t stepCycles(const hwsim::Executable &exe, const std::string &kind) {
  for (const auto &s : exe.programSteps()) {
    if (s.kind == kind) return s.cycles;
  }
  ADD_FAILURE() << "no " << kind << " step";
  return 0;
}

TEST(Conv, CostsLikeTheEquivalentMatMul) {
  // [1,16,20,20] conv 32x3x3 pad 1: a [32, 144] x [144, 400] GEMM.
  const Shape is{1, 16, 20, 20}, ws{32, 16, 3, 3}, os{1, 32, 20, 20};
  hwsim_test::Harness hc;
  auto in = hc.input("in", Type::F32, is);
  auto w = hc.input("w", Type::F32, ws);
  auto out = hc.output("out", Type::F32, os);
  const auto conv = hwsim::compileGraph(
      hc.graph, {hc.vertex("Conv", {{"in", in}, {"weights", w}, {"out", out}}, 0, {{"pads", {1, 1, 1, 1}}})});
  hwsim_test::Harness hm;
  auto a = hm.input("a", Type::F32, {32, 144});
  auto b = hm.input("b", Type::F32, {144, 400});
  auto c = hm.output("c", Type::F32, {32, 400});
  const auto mm = hwsim::compileGraph(hm.graph, {hm.vertex("MatMul", {{"a", a}, {"b", b}, {"out", c}})});
  const double cc = double(stepCycles(conv, "Execute")), mc = double(stepCycles(mm, "Execute"));
  EXPECT_NEAR(cc, mc, 0.01 * mc);
  // And grouped convs cost their (smaller) GEMMs: depthwise 16 channels 3x3.
  hwsim_test::Harness hd;
  auto din = hd.input("in", Type::F32, is);
  auto dw = hd.input("w", Type::F32, {16, 1, 3, 3});
  auto dout = hd.output("out", Type::F32, {1, 16, 20, 20});
  const auto dexe = hwsim::compileGraph(hd.graph, {hd.vertex("Conv", {{"in", din}, {"weights", dw}, {"out", dout}}, 0,
                                                            {{"pads", {1, 1, 1, 1}}, {"group", {16}}})});
  const hwsim::Target t = hwsim::Target::smallIpuModel();
  const double macs = 16.0 * 400 * 9;
  EXPECT_NEAR(double(stepCycles(dexe, "Execute")) - t.internalSyncCycles,
              t.vertexOverheadCycles + std::ceil(2 * macs / t.f32MatMulFlopsPerCycle), 2.0);
  // Pooling: window reads at the vector width.
  hwsim_test::Harness hp;
  auto pin = hp.input("in", Type::F32, {1, 16, 20, 20});
  auto pout = hp.output("out", Type::F32, {1, 16, 10, 10});
  const auto pexe = hwsim::compileGraph(
      hp.graph, {hp.vertex("MaxPool", {{"in", pin}, {"out", pout}}, 0, {{"kernel_shape", {2, 2}}, {"strides", {2, 2}}})});
  EXPECT_NEAR(double(stepCycles(pexe, "Execute")) - t.internalSyncCycles,
              t.vertexOverheadCycles + std::ceil(16.0 * 100 * 4 / t.f32VectorWidth), 2.0);
}

// Model-sized layers on a GC200 compile within tile memory (the compiler
// fails with a LinkError otherwise) and spread over many tiles.
void compileOnGc200(const Shape &is, const Shape &ws, const ops::ConvParams &cp, bool run) {
  const hwsim::Target target = hwsim::Target::gc200();
  hwsim::Graph g(target);
  auto in = ops::createTensor(g, Type::F32, is, "in");
  auto w = ops::createConvWeights(g, Type::F32, is, ws, cp, "w");
  p::Sequence prog;
  auto out = ops::conv(g, prog, in, w, cp, "conv");
  g.createHostWrite("in", in);
  g.createHostWrite("w", w);
  g.createHostRead("out", out);
  const auto exe = hwsim::compileGraph(g, {prog});
  std::uint64_t maxBytes = 0;
  unsigned used = 0;
  for (auto b : exe.memoryPerTile()) {
    maxBytes = std::max(maxBytes, b);
    used += b > 0;
  }
  EXPECT_LE(maxBytes, target.bytesPerTile);
  EXPECT_GT(used, 8u);
  if (!run) return;
  auto dev = hwsim::DeviceManager::createIpuModelDevice(target);
  ASSERT_TRUE(dev.attach());
  hwsim::Engine e(exe);
  e.load(dev);
  const auto x = hwsim_test::randomFloats(numel(is), -1, 1, 11), wv = hwsim_test::randomFloats(numel(ws), -1, 1, 12);
  e.writeTensor("in", x.data(), x.data() + x.size());
  e.writeTensor("w", wv.data(), wv.data() + wv.size());
  ASSERT_EQ(e.run(0), hwsim::RunStatus::Completed);
  std::vector<float> got(out.numElements());
  e.readTensor("out", got.data(), got.data() + got.size());
  expectNear(got, refConv(x, wv, is, ws, cp), 1e-4, "gc200");
}

TEST(Conv, MnistLayersFitAndRunOnGc200) {
  compileOnGc200({1, 1, 28, 28}, {8, 1, 5, 5}, {{}, {2, 2}, {2, 2}, {}, 1}, true);
  compileOnGc200({1, 8, 14, 14}, {16, 8, 5, 5}, {{}, {2, 2}, {2, 2}, {}, 1}, true);
}

TEST(Conv, StridedDilatedGroupedAnd1dSplitOverManyTilesMatchReference) {
  compileOnGc200({1, 8, 30, 30}, {16, 4, 3, 3}, {{2, 2}, {1, 1}, {1, 0}, {2, 2}, 2}, true);
  compileOnGc200({2, 16, 32, 32}, {16, 1, 3, 3}, {{}, {1, 1}, {1, 1}, {}, 16}, true);
  compileOnGc200({2, 8, 200}, {8, 4, 5}, {{2}, {2}, {1}, {2}, 2}, true);
  compileOnGc200({3, 6, 40}, {12, 6, 3}, {{}, {1}, {1}, {}, 1}, true);
}

TEST(Conv, ResNetLayerFitsOnGc200) {
  compileOnGc200({1, 64, 56, 56}, {64, 64, 3, 3}, {{}, {1, 1}, {1, 1}, {}, 1}, true);
}

}  // namespace

namespace {

// Weights written only by a Load program: their copies to the other tiles of
// each output-channel block are made by Load (conv/exchange_weights, all
// that Load does here), once, and each Main run exchanges only the input.
TEST(Conv, PreloadedWeightsAreCopiedByLoadOnce) {
  const Shape is{2, 16, 32, 32}, ws{32, 16, 3, 3};
  const ops::ConvParams cp{{}, {1, 1}, {1, 1}, {}, 1};
  const hwsim::Target target = hwsim::Target::gc200();
  hwsim::Graph g(target);
  auto in = ops::createTensor(g, Type::F32, is, "in");
  auto w = ops::createConvWeights(g, Type::F32, is, ws, cp, "w", {}, true);
  p::Sequence load, main;
  EXPECT_THROW(ops::conv(g, main, in, w, cp, "bad", {}, Type::F32, &main), hwsim::Error);
  auto out = ops::conv(g, main, in, w, cp, "conv", {}, Type::F32, &load);
  g.createHostWrite("in", in);
  g.createHostWrite("w", w);
  g.createHostRead("out", out);
  const auto exe = hwsim::compileGraph(g, {load, main});
  std::uint64_t weightCopies = 0;
  for (const auto &step : exe.programSteps()) {
    if (step.name == "conv/exchange_weights") weightCopies = step.cycles;
  }
  EXPECT_GT(weightCopies, 0u);
  EXPECT_EQ(hwsim::pipelinePlan(exe, 0).latencyCycles(), weightCopies);

  auto dev = hwsim::DeviceManager::createIpuModelDevice(target);
  ASSERT_TRUE(dev.attach());
  hwsim::Engine e(exe);
  e.load(dev);
  const auto x = hwsim_test::randomFloats(numel(is), -1, 1, 21), wv = hwsim_test::randomFloats(numel(ws), -1, 1, 22);
  e.writeTensor("w", wv.data(), wv.data() + wv.size());
  ASSERT_EQ(e.run(0), hwsim::RunStatus::Completed);
  for (int run = 0; run < 2; ++run) {
    e.writeTensor("in", x.data(), x.data() + x.size());
    ASSERT_EQ(e.run(1), hwsim::RunStatus::Completed);
    std::vector<float> got(out.numElements());
    e.readTensor("out", got.data(), got.data() + got.size());
    expectNear(got, refConv(x, wv, is, ws, cp), 1e-4, "preloaded weights, run " + std::to_string(run));
  }
}

}  // namespace
