// Convolution and pooling over [N, C, *spatial] tensors (1-D or 2-D spatial,
// ONNX semantics, zero padding). Conv lowers each (image, group) to one Eigen
// GEMM on an im2col matrix; 1-D is run as 2-D with a height of 1. Validation
// checks every shape against the attributes, so execute never reads or
// writes outside its operands (deserialized executables are untrusted).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "codelets/f32_operands.hpp"
#include "codelets/registry.hpp"
#include "codelets/type_dispatch.hpp"

namespace hwsim::detail {

namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Largest stride / pad / dilation / kernel value accepted (keeps all index
// arithmetic far inside int64).
constexpr std::int64_t kMaxAttr = 1 << 24;

// Reads an attribute of `count` integers in [lo, kMaxAttr]; empty means
// `count` copies of `dflt`. Returns an error message or "".
std::string intList(const std::vector<double> &a, std::size_t count, std::int64_t lo, std::int64_t dflt,
                    const char *what, std::vector<std::int64_t> &out) {
  out.assign(count, dflt);
  if (a.empty()) return {};
  if (a.size() != count) return fmt::format("attribute {} needs {} values (got {})", what, count, a.size());
  for (std::size_t i = 0; i < count; ++i) {
    const double v = a[i];
    if (v != std::floor(v) || v < static_cast<double>(lo) || v > static_cast<double>(kMaxAttr)) {
      return fmt::format("attribute {} value {} must be an integer in [{}, {}]", what, v, lo, kMaxAttr);
    }
    out[i] = static_cast<std::int64_t>(v);
  }
  return {};
}

// Everything execute needs, as 2-D (1-D: H = KH = OH = 1).
struct Geometry {
  std::int64_t N = 0, C = 0, M = 0, H = 1, W = 0, KH = 1, KW = 0, OH = 1, OW = 0;
  std::int64_t sh = 1, sw = 1, ph0 = 0, pw0 = 0, ph1 = 0, pw1 = 0, dh = 1, dw = 1;
  std::int64_t group = 1;
};

std::string shapeString(const Shape &s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// Parses strides/pads/dilations for `S` spatial dims into g, and checks that
// out's spatial dims match in's under the window `kernel`. With allowCeil
// (pooling), out may also have the ceil_mode size. Returns an error or "".
std::string spatialGeometry(const Shape &in, const Shape &out, const std::vector<std::int64_t> &kernel,
                            const std::vector<double> &stridesA, const std::vector<double> &padsA,
                            const std::vector<double> &dilationsA, bool allowCeil, Geometry &g) {
  const std::size_t S = in.size() - 2;
  std::vector<std::int64_t> strides, pads, dil;
  if (auto e = intList(stridesA, S, 1, 1, "strides", strides); !e.empty()) return e;
  if (auto e = intList(padsA, 2 * S, 0, 0, "pads", pads); !e.empty()) return e;
  if (auto e = intList(dilationsA, S, 1, 1, "dilations", dil); !e.empty()) return e;
  std::vector<std::int64_t> outDims(S);
  for (std::size_t d = 0; d < S; ++d) {
    const auto size = static_cast<std::int64_t>(in[2 + d]);
    const std::int64_t padded = size + pads[d] + pads[S + d];
    const std::int64_t window = dil[d] * (kernel[d] - 1) + 1;
    if (padded < window) {
      return fmt::format("spatial dimension {}: padded input {} is smaller than the dilated kernel {}", d, padded,
                         window);
    }
    const std::int64_t floorOut = (padded - window) / strides[d] + 1;
    const std::int64_t ceilOut = (padded - window + strides[d] - 1) / strides[d] + 1;
    const auto got = static_cast<std::int64_t>(out[2 + d]);
    if (got != floorOut && !(allowCeil && got == ceilOut)) {
      return allowCeil && ceilOut != floorOut
                 ? fmt::format("out spatial dimension {} is {}, expected {} (or {} with ceil_mode) for in {}", d,
                               got, floorOut, ceilOut, shapeString(in))
                 : fmt::format("out spatial dimension {} is {}, expected {} for in {}", d, got, floorOut,
                               shapeString(in));
    }
    outDims[d] = got;
  }
  g.N = static_cast<std::int64_t>(in[0]);
  g.C = static_cast<std::int64_t>(in[1]);
  if (S == 1) {
    g.W = static_cast<std::int64_t>(in[2]);
    g.KW = kernel[0];
    g.OW = outDims[0];
    g.sw = strides[0];
    g.pw0 = pads[0];
    g.pw1 = pads[1];
    g.dw = dil[0];
  } else {
    g.H = static_cast<std::int64_t>(in[2]);
    g.W = static_cast<std::int64_t>(in[3]);
    g.KH = kernel[0];
    g.KW = kernel[1];
    g.OH = outDims[0];
    g.OW = outDims[1];
    g.sh = strides[0];
    g.sw = strides[1];
    g.ph0 = pads[0];
    g.pw0 = pads[1];
    g.ph1 = pads[2];
    g.pw1 = pads[3];
    g.dh = dil[0];
    g.dw = dil[1];
  }
  return {};
}

bool hasZero(const Shape &s) { return std::find(s.begin(), s.end(), 0u) != s.end(); }

// Conv attributes: strides, pads, dilations, group, accumulate.
std::string convGeometry(const Operand *ops, const Attrs &attrs, Geometry &g) {
  const Operand &in = ops[0], &w = ops[1], &out = ops[2];
  const Shape &is = *in.shape, &ws = *w.shape, &os = *out.shape;
  if (is.size() != 3 && is.size() != 4) {
    return fmt::format("in must be [N,C,W] or [N,C,H,W] (rank 3 or 4), got rank {}", is.size());
  }
  if (ws.size() != is.size() || os.size() != is.size()) {
    return fmt::format("in, weights and out must have the same rank (got {}, {}, {})", is.size(), ws.size(),
                       os.size());
  }
  if (hasZero(is) || hasZero(ws) || hasZero(os)) {
    return fmt::format("empty dimension in in {}, weights {} or out {}", shapeString(is), shapeString(ws),
                       shapeString(os));
  }
  if (attrs[3].size() != 1 || attrs[3][0] != std::floor(attrs[3][0]) || attrs[3][0] < 1 ||
      attrs[3][0] > static_cast<double>(kMaxAttr)) {
    return "attribute group must be one positive integer";
  }
  if (attrs[4].size() != 1) return "attribute accumulate must be one number";
  g.group = static_cast<std::int64_t>(attrs[3][0]);
  const auto C = static_cast<std::int64_t>(is[1]), M = static_cast<std::int64_t>(ws[0]);
  if (C % g.group != 0 || M % g.group != 0) {
    return fmt::format("group {} must divide in channels {} and out channels {}", g.group, C, M);
  }
  if (static_cast<std::int64_t>(ws[1]) * g.group != C) {
    return fmt::format("weights {} need dimension 1 = in channels / group = {}", shapeString(ws), C / g.group);
  }
  if (os[0] != is[0] || os[1] != ws[0]) {
    return fmt::format("out {} must be [N={}, M={}, ...] for in {} and weights {}", shapeString(os), is[0], ws[0],
                       shapeString(is), shapeString(ws));
  }
  std::vector<std::int64_t> kernel;
  for (std::size_t d = 2; d < ws.size(); ++d) {
    if (ws[d] > static_cast<std::uint64_t>(kMaxAttr)) return "kernel too large";
    kernel.push_back(static_cast<std::int64_t>(ws[d]));
  }
  if (auto e = spatialGeometry(is, os, kernel, attrs[0], attrs[1], attrs[2], false, g); !e.empty()) return e;
  g.M = M;
  return {};
}

// Pool attributes: kernel_shape, strides, pads, dilations[, count_include_pad].
std::string poolGeometry(const Operand *ops, const Attrs &attrs, Geometry &g) {
  const Operand &in = ops[0], &out = ops[1];
  const Shape &is = *in.shape, &os = *out.shape;
  if (is.size() != 3 && is.size() != 4) {
    return fmt::format("in must be [N,C,W] or [N,C,H,W] (rank 3 or 4), got rank {}", is.size());
  }
  if (os.size() != is.size()) return fmt::format("out must have in's rank {} (got {})", is.size(), os.size());
  if (hasZero(is) || hasZero(os)) {
    return fmt::format("empty dimension in in {} or out {}", shapeString(is), shapeString(os));
  }
  if (!isFloatingPoint(in.type) || in.type != out.type) {
    return fmt::format("in and out must be the same float type (got {} and {})", toString(in.type),
                       toString(out.type));
  }
  if (os[0] != is[0] || os[1] != is[1]) {
    return fmt::format("out {} must keep in's N and C {}", shapeString(os), shapeString(is));
  }
  const std::size_t S = is.size() - 2;
  if (attrs[0].empty()) return "attribute kernel_shape is required";
  std::vector<std::int64_t> kernel;
  if (auto e = intList(attrs[0], S, 1, 1, "kernel_shape", kernel); !e.empty()) return e;
  if (auto e = spatialGeometry(is, os, kernel, attrs[1], attrs[2], attrs[3], true, g); !e.empty()) return e;
  g.M = g.C;
  if (attrs.size() > 4 && attrs[4].size() != 1) return "attribute count_include_pad must be one number";
  return {};
}

// col [Cg*KH*KW, (oh1-oh0)*OW] for output rows [oh0, oh1) of one image and
// group: zero where the window is in padding.
void im2col(const float *x, const Geometry &g, std::int64_t Cg, std::int64_t oh0, std::int64_t oh1, float *col) {
  const std::int64_t P = (oh1 - oh0) * g.OW;
  for (std::int64_t c = 0; c < Cg; ++c) {
    const float *xc = x + c * g.H * g.W;
    for (std::int64_t kh = 0; kh < g.KH; ++kh) {
      for (std::int64_t kw = 0; kw < g.KW; ++kw) {
        float *row = col + ((c * g.KH + kh) * g.KW + kw) * P;
        // Output columns whose input column is inside [0, W).
        const std::int64_t off = kw * g.dw - g.pw0;  // iw = ow * sw + off
        std::int64_t owLo = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
        std::int64_t owHi = g.W - off <= 0 ? 0 : (g.W - off - 1) / g.sw + 1;  // exclusive
        owLo = std::min(owLo, g.OW);
        owHi = std::clamp(owHi, owLo, g.OW);
        for (std::int64_t oh = oh0; oh < oh1; ++oh) {
          float *dst = row + (oh - oh0) * g.OW;
          const std::int64_t ih = oh * g.sh - g.ph0 + kh * g.dh;
          if (ih < 0 || ih >= g.H) {
            std::fill(dst, dst + g.OW, 0.0f);
            continue;
          }
          const float *src = xc + ih * g.W + off;
          std::fill(dst, dst + owLo, 0.0f);
          if (g.sw == 1) {
            std::copy(src + owLo, src + owHi, dst + owLo);
          } else {
            for (std::int64_t ow = owLo; ow < owHi; ++ow) dst[ow] = src[ow * g.sw];
          }
          std::fill(dst + owHi, dst + g.OW, 0.0f);
        }
      }
    }
  }
}

}  // namespace

// ---------- Conv ----------

std::string validateConv(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  const Operand &in = ops[0], &w = ops[1], &out = ops[2];
  if (in.type != w.type || !isFloatingPoint(in.type)) {
    return fmt::format("in and weights must both be F32 or both F16 (got {} and {})", toString(in.type),
                       toString(w.type));
  }
  if (in.type == Type::F32 && out.type != Type::F32) return "F32 inputs need an F32 out";
  if (in.type == Type::F16 && !isFloatingPoint(out.type)) return "F16 inputs need an F16 or F32 out";
  Geometry g;
  return convGeometry(ops, attrs, g);
}

double cyclesConv(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  if (!convGeometry(ops, attrs, g).empty()) return t.vertexOverheadCycles;
  // The multiply-accumulates of the equivalent GEMM, at the AMP rate.
  const double macs = static_cast<double>(g.N) * static_cast<double>(g.M) * static_cast<double>(g.OH * g.OW) *
                      static_cast<double>(g.C / g.group) * static_cast<double>(g.KH * g.KW);
  const double rate = ops[0].type == Type::F16 ? t.f16MatMulFlopsPerCycle : t.f32MatMulFlopsPerCycle;
  return t.vertexOverheadCycles + std::ceil(2.0 * macs / rate);
}

void executeConv(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  if (!convGeometry(ops, attrs, g).empty()) return;  // validated before; never trust blindly
  const Operand &out = ops[2];
  const bool accumulate = attrs[4][0] != 0.0;
  const float *x = asF32(ops[0], 0);
  const float *w = asF32(ops[1], 1);
  const std::int64_t Cg = g.C / g.group, Mg = g.M / g.group, P = g.OH * g.OW, K = Cg * g.KH * g.KW;
  float *y = nullptr;
  if (out.type == Type::F32) {
    y = ptr<Type::F32>(out);
  } else {
    auto &acc = scratch(2);
    acc.resize(out.numElements);
    const auto *h = ptr<Type::F16>(out);
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = accumulate ? static_cast<float>(h[i]) : 0.0f;
    y = acc.data();
  }
  const bool direct = g.KH == 1 && g.KW == 1 && g.sh == 1 && g.sw == 1 && g.ph0 == 0 && g.pw0 == 0 &&
                      g.ph1 == 0 && g.pw1 == 0;  // 1x1: the input is its own im2col
  // im2col a band of output rows at a time, so host scratch stays bounded.
  constexpr std::int64_t kMaxColElements = std::int64_t{1} << 22;
  const std::int64_t band = direct ? g.OH : std::clamp<std::int64_t>(kMaxColElements / std::max<std::int64_t>(1, K * g.OW), 1, g.OH);
  auto &col = scratch(3);
  if (!direct) col.resize(static_cast<std::size_t>(K * band * g.OW));
  using Stride = Eigen::OuterStride<>;
  for (std::int64_t n = 0; n < g.N; ++n) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      const float *xg = x + (n * g.C + gi * Cg) * g.H * g.W;
      Eigen::Map<const RowMajorF> A(w + gi * Mg * K, Mg, K);
      for (std::int64_t oh0 = 0; oh0 < g.OH; oh0 += band) {
        const std::int64_t oh1 = std::min(g.OH, oh0 + band), cols = (oh1 - oh0) * g.OW;
        const float *colData = xg;
        if (!direct) {
          im2col(xg, g, Cg, oh0, oh1, col.data());
          colData = col.data();
        }
        Eigen::Map<const RowMajorF> B(colData, K, cols);
        Eigen::Map<RowMajorF, 0, Stride> Y(y + (n * g.M + gi * Mg) * P + oh0 * g.OW, Mg, cols, Stride(P));
        if (accumulate || out.type != Type::F32) Y.noalias() += A * B;
        else Y.noalias() = A * B;
      }
    }
  }
  if (out.type == Type::F16) {
    auto *h = ptr<Type::F16>(out);
    for (std::size_t i = 0; i < out.numElements; ++i) h[i] = Eigen::half(y[i]);
  }
}

// ---------- MaxPool / AveragePool ----------

std::string validatePool(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  return poolGeometry(ops, attrs, g);
}

double cyclesPool(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  if (!poolGeometry(ops, attrs, g).empty()) return t.vertexOverheadCycles;
  // Every window element read once, at the vector width of the type.
  const double reads = static_cast<double>(g.N * g.C) * static_cast<double>(g.OH * g.OW) *
                       static_cast<double>(g.KH * g.KW);
  return t.vertexOverheadCycles + std::ceil(reads / vectorWidth(t, ops[0].type));
}

void executePool(const CodeletSpec &spec, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  if (!poolGeometry(ops, attrs, g).empty()) return;
  const bool isMax = spec.op == 0;
  const bool countPad = !isMax && attrs[4][0] != 0.0;
  const Operand &out = ops[1];
  const float *x = asF32(ops[0], 0);
  float *y = out.type == Type::F32 ? ptr<Type::F32>(out) : (scratch(2).resize(out.numElements), scratch(2).data());
  for (std::int64_t nc = 0; nc < g.N * g.C; ++nc) {
    const float *xc = x + nc * g.H * g.W;
    float *yc = y + nc * g.OH * g.OW;
    for (std::int64_t oh = 0; oh < g.OH; ++oh) {
      const std::int64_t h0 = oh * g.sh - g.ph0;
      for (std::int64_t ow = 0; ow < g.OW; ++ow) {
        const std::int64_t w0 = ow * g.sw - g.pw0;
        float acc = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
        std::int64_t valid = 0, inPadded = 0;
        for (std::int64_t kh = 0; kh < g.KH; ++kh) {
          const std::int64_t ih = h0 + kh * g.dh;
          const bool rowIn = ih >= 0 && ih < g.H;
          const bool rowPadded = ih >= -g.ph0 && ih < g.H + g.ph1;
          for (std::int64_t kw = 0; kw < g.KW; ++kw) {
            const std::int64_t iw = w0 + kw * g.dw;
            if (rowPadded && iw >= -g.pw0 && iw < g.W + g.pw1) ++inPadded;
            if (!rowIn || iw < 0 || iw >= g.W) continue;
            const float v = xc[ih * g.W + iw];
            ++valid;
            if (isMax) acc = std::max(acc, v);
            else acc += v;
          }
        }
        if (!isMax) {
          const std::int64_t div = countPad ? inPadded : valid;
          acc = div > 0 ? acc / static_cast<float>(div) : 0.0f;
        }
        yc[oh * g.OW + ow] = acc;
      }
    }
  }
  if (out.type == Type::F16) {
    auto *h = ptr<Type::F16>(out);
    for (std::size_t i = 0; i < out.numElements; ++i) h[i] = Eigen::half(y[i]);
  }
}

}  // namespace hwsim::detail
