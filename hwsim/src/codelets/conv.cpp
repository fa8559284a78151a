// Convolution and pooling over [N, C, *spatial] tensors (1-D or 2-D spatial,
// ONNX semantics, zero padding): validation and cycle costs. The host
// implementations are compiled per instruction set (hwsim/kernels/conv_kernels.cpp).
// Validation checks every shape against the attributes, so execute never
// reads or writes outside its operands (deserialized executables are untrusted).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "codelets/conv_geometry.hpp"
#include "codelets/registry.hpp"

namespace hwsim::detail {

namespace {

// Largest stride / pad / dilation / kernel value accepted (keeps all index
// arithmetic far inside int64).
constexpr std::int64_t kMaxAttr = 1 << 24;

// Up to 4 integers (pads of 2 spatial dimensions): fixed storage, so parsing
// a geometry allocates nothing.
using Ints = std::array<std::int64_t, 4>;

// Whether v is an integer in [lo, hi], lo >= 0 (false for NaN).
bool isIntegerIn(double v, std::int64_t lo, std::int64_t hi) {
  return v >= static_cast<double>(lo) && v <= static_cast<double>(hi) &&
         static_cast<double>(static_cast<std::int64_t>(v)) == v;
}

// Reads an attribute of `count` (at most 4) integers in [lo, kMaxAttr]; empty
// means `count` copies of `dflt`. Returns an error message or "".
std::string intList(const std::vector<double> &a, std::size_t count, std::int64_t lo, std::int64_t dflt,
                    const char *what, Ints &out) {
  std::fill_n(out.begin(), count, dflt);
  if (a.empty()) return {};
  if (a.size() != count) return fmt::format("attribute {} needs {} values (got {})", what, count, a.size());
  for (std::size_t i = 0; i < count; ++i) {
    const double v = a[i];
    if (!isIntegerIn(v, lo, kMaxAttr)) {
      return fmt::format("attribute {} value {} must be an integer in [{}, {}]", what, v, lo, kMaxAttr);
    }
    out[i] = static_cast<std::int64_t>(v);
  }
  return {};
}

std::string shapeString(const Shape &s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// Parses strides/pads/dilations for `S` spatial dims into g, and checks that
// out's spatial dims match in's under the window `kernel`. With allowCeil
// (pooling), out may also have the ceil_mode size. Returns an error or "".
std::string spatialGeometry(const Shape &in, const Shape &out, const Ints &kernel,
                            const std::vector<double> &stridesA, const std::vector<double> &padsA,
                            const std::vector<double> &dilationsA, bool allowCeil, Geometry &g) {
  const std::size_t S = in.size() - 2;
  Ints strides{}, pads{}, dil{};
  if (auto e = intList(stridesA, S, 1, 1, "strides", strides); !e.empty()) return e;
  if (auto e = intList(padsA, 2 * S, 0, 0, "pads", pads); !e.empty()) return e;
  if (auto e = intList(dilationsA, S, 1, 1, "dilations", dil); !e.empty()) return e;
  Ints outDims{};
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

// The vertex's Geometry as parsed by `parse`, or null if it is invalid.
PreparedState prepareGeometry(std::string (*parse)(const Operand *, const Attrs &, Geometry &), const Operand *ops,
                              const Attrs &attrs) {
  auto g = std::make_shared<Geometry>();
  if (!parse(ops, attrs, *g).empty()) return nullptr;
  return g;
}

}  // namespace

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
  if (attrs[3].size() != 1 || !isIntegerIn(attrs[3][0], 1, kMaxAttr)) {
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
  Ints kernel{};
  for (std::size_t d = 2; d < ws.size(); ++d) {
    if (ws[d] > static_cast<std::uint64_t>(kMaxAttr)) return "kernel too large";
    kernel[d - 2] = static_cast<std::int64_t>(ws[d]);
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
  Ints kernel{};
  if (auto e = intList(attrs[0], S, 1, 1, "kernel_shape", kernel); !e.empty()) return e;
  if (auto e = spatialGeometry(is, os, kernel, attrs[1], attrs[2], attrs[3], true, g); !e.empty()) return e;
  g.M = g.C;
  if (attrs.size() > 4 && attrs[4].size() != 1) return "attribute count_include_pad must be one number";
  return {};
}

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

PreparedState prepareConv(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  return prepareGeometry(convGeometry, ops, attrs);
}

// ---------- MaxPool / AveragePool ----------

std::string validatePool(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  return poolGeometry(ops, attrs, g);
}

PreparedState preparePool(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  return prepareGeometry(poolGeometry, ops, attrs);
}

double cyclesPool(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  if (!poolGeometry(ops, attrs, g).empty()) return t.vertexOverheadCycles;
  // Every window element read once, at the vector width of the type.
  const double reads = static_cast<double>(g.N * g.C) * static_cast<double>(g.OH * g.OW) *
                       static_cast<double>(g.KH * g.KW);
  return t.vertexOverheadCycles + std::ceil(reads / vectorWidth(t, ops[0].type));
}

}  // namespace hwsim::detail
