// Resize (opsets 10-13) and Upsample with constant scales or sizes (sizes
// computed at run time are the declared output shape; run-time scales are
// resize_runtime.cpp's), one axis at a time
// (the interpolation is separable). Every output position along an axis
// maps back to an input coordinate computed on the host; nearest takes the
// input element there (a gather view with compile-time indices), linear and
// cubic sum 2 or 4 neighbours times host-computed weights. The coordinates
// and weights follow ONNX's reference implementation, which the backend node
// tests were generated with (align_corners and pytorch_half_pixel use the
// unrounded output length in * scale; cubic uses cubic_coeff_a and
// exclude_outside).
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"
#include "onnx/resize_runtime.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

using Mode = ResizeMode;

// Output position j of an axis resized from `in` by `scale`, as an input coordinate.
using CoordinateFn = std::function<double(double j, double in, double scale)>;

CoordinateFn coordinateTransform(const std::string &name) {
  if (name == "half_pixel") return [](double j, double, double scale) { return (j + 0.5) / scale - 0.5; };
  if (name == "asymmetric") return [](double j, double, double scale) { return j / scale; };
  if (name == "tf_half_pixel_for_nn") return [](double j, double, double scale) { return (j + 0.5) / scale; };
  if (name == "pytorch_half_pixel") {
    return [](double j, double in, double scale) { return in * scale == 1 ? -0.5 : (j + 0.5) / scale - 0.5; };
  }
  if (name == "align_corners") {
    return [](double j, double in, double scale) { return in * scale == 1 ? 0.0 : j * (in - 1) / (in * scale - 1); };
  }
  throw UnsupportedNode("Resize with coordinate_transformation_mode '" + name +
                        "' (half_pixel, asymmetric, align_corners, pytorch_half_pixel, tf_half_pixel_for_nn only)");
}

// Whether nearest rounds a coordinate with fractional part `fraction` (in (0, 1)) up.
using RoundUpFn = std::function<bool(double fraction)>;

RoundUpFn nearestRounding(const std::string &name) {
  if (name == "round_prefer_floor") return [](double f) { return f > 0.5; };
  if (name == "round_prefer_ceil") return [](double f) { return f >= 0.5; };
  if (name == "floor") return [](double) { return false; };
  if (name == "ceil") return [](double) { return true; };
  throw Error(ErrorCode::CorruptModel, "unknown nearest_mode '{}'", name);
}

// The weights an interpolating mode gives the taps around a coordinate whose
// distance from the tap before it is `ratio` (in (0, 1]): 2 taps for linear,
// 4 for cubic, as ONNX's reference computes them.
using CoefficientsFn = std::function<std::vector<double>(double ratio)>;

CoefficientsFn cubicCoefficients(double a) {
  return [a](double r) {
    const double s = 1 - r;
    return std::vector<double>{((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
                               ((a + 2) * r - (a + 3)) * r * r + 1, ((a + 2) * s - (a + 3)) * s * s + 1,
                               ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  };
}

struct Sampling {
  Mode mode = Mode::Nearest;
  CoordinateFn coordinate;
  RoundUpFn roundUp;              // nearest
  CoefficientsFn coefficients;    // linear and cubic
  bool excludeOutside = false;    // taps outside the input get weight 0, the rest renormalized
};

// One axis: output j = sum over taps t of weight[t][j] * x[index[t][j]].
struct AxisSamples {
  std::vector<std::vector<std::int64_t>> index;
  std::vector<std::vector<double>> weight;
};

// Taps outside the input read its border element (ONNX pads with edge values).
AxisSamples axisSamples(const Sampling &s, std::int64_t in, std::int64_t out, double scale) {
  auto clampIndex = [in](std::int64_t i) { return std::clamp<std::int64_t>(i, 0, in - 1); };
  AxisSamples a;
  for (std::int64_t j = 0; j < out; ++j) {
    const double x = s.coordinate(static_cast<double>(j), static_cast<double>(in), scale);
    double below = std::floor(x), fraction = x - below;
    if (s.mode == Mode::Nearest) {
      a.index.resize(1);
      a.weight.resize(1);
      a.index[0].push_back(clampIndex(static_cast<std::int64_t>(fraction > 0 && s.roundUp(fraction) ? below + 1 : below)));
      a.weight[0].push_back(1);
      continue;
    }
    // The reference prefers the taps before x: an integral x is the last tap before the midpoint.
    if (fraction == 0) {
      below -= 1;
      fraction = 1;
    }
    std::vector<double> w = s.coefficients(fraction);
    const auto taps = static_cast<std::int64_t>(w.size());
    const std::int64_t first = static_cast<std::int64_t>(below) - (taps / 2 - 1);
    if (s.excludeOutside) {
      double sum = 0;
      for (std::int64_t t = 0; t < taps; ++t) {
        if (first + t < 0 || first + t >= in) w[static_cast<std::size_t>(t)] = 0;
        sum += w[static_cast<std::size_t>(t)];
      }
      for (double &v : w) v /= sum;
    }
    a.index.resize(w.size());
    a.weight.resize(w.size());
    for (std::size_t t = 0; t < w.size(); ++t) {
      a.index[t].push_back(clampIndex(first + static_cast<std::int64_t>(t)));
      a.weight[t].push_back(w[t]);
    }
  }
  return a;
}

// Whether every output j is exactly input j.
bool isIdentity(const AxisSamples &a, std::int64_t in) {
  if (static_cast<std::int64_t>(a.index[0].size()) != in) return false;
  for (std::size_t j = 0; j < a.index[0].size(); ++j) {
    for (std::size_t t = 0; t < a.index.size(); ++t) {
      const double want = a.index[t][j] == static_cast<std::int64_t>(j) ? 1.0 : 0.0;
      // A tap at j with weight 1 is the element; others must weigh nothing.
      if (a.weight[t][j] != want && a.weight[t][j] != 0) return false;
    }
  }
  return true;
}

// x's elements at `indices` along `axis`; copied when an index repeats
// (vertices must not read repeated regions), a view otherwise.
hwsim::Tensor gathered(LoweringContext &ctx, const hwsim::Tensor &x, std::size_t axis,
                       const std::vector<std::int64_t> &indices, const std::string &name) {
  const hwsim::Tensor view = takeView(x, axis, indices);
  const bool repeats = std::set<std::int64_t>(indices.begin(), indices.end()).size() < indices.size();
  return repeats ? materialize(ctx, view, ctx.uniqueName(name)) : view;
}

// Nearest is a gather; the interpolating modes sum the taps times their
// host-computed weights (taps that weigh nothing anywhere are left out).
hwsim::Tensor resizeAxis(LoweringContext &ctx, const hwsim::Tensor &x, std::int32_t type, std::size_t axis,
                         const AxisSamples &a, const std::string &name) {
  if (a.index.size() == 1) return gathered(ctx, x, axis, a.index[0], name + "/nearest");
  if (!hwsim::isFloatingPoint(x.elementType())) throw UnsupportedNode("interpolating Resize of " + typeName(type));
  std::string sum;
  for (std::size_t t = 0; t < a.index.size(); ++t) {
    if (std::all_of(a.weight[t].begin(), a.weight[t].end(), [](double w) { return w == 0; })) continue;
    const std::string tap = ctx.uniqueName(name + "/tap"), weight = ctx.uniqueName(name + "/weight");
    ctx.setDevice(tap, gathered(ctx, x, axis, a.index[t], tap), type);
    // [out, 1, ...]: one weight per position along the axis, broadcast over the dimensions after it.
    Dims weightDims(x.rank() - axis, 1);
    weightDims[0] = static_cast<std::int64_t>(a.weight[t].size());
    HostTensor w{type, weightDims, a.weight[t]};
    convertValues(w.values, type);
    ctx.setHost(weight, std::move(w));
    const std::string term = ctx.uniqueName(name + "/term");
    ctx.setDevice(term, broadcastBinary(ctx, "Mul", tap, weight, term), type);
    if (sum.empty()) {
      sum = term;
    } else {
      const std::string next = ctx.uniqueName(name + "/sum");
      ctx.setDevice(next, broadcastBinary(ctx, "Add", sum, term, next), type);
      sum = next;
    }
  }
  return ctx.device(sum);
}

Mode modeOf(const NodeProto &node) {
  const std::string mode = attrString(node, "mode", "nearest");
  if (mode == "nearest") return Mode::Nearest;
  if (mode == "linear" || mode == "bilinear") return Mode::Linear;  // Upsample-7 also names it bilinear
  if (mode == "cubic" && node.op_type() == "Resize") return Mode::Cubic;
  throw UnsupportedNode(node.op_type() + " with mode '" + mode + "'");
}

// The opset-18 attributes at their defaults.
void rejectUnsupportedAttributes(const NodeProto &node) {
  if (attrInt(node, "antialias", 0) != 0) throw UnsupportedNode("Resize with antialias 1");
  if (findAttribute(node, "axes") != nullptr) throw UnsupportedNode("Resize with the axes attribute");
  if (const std::string p = attrString(node, "keep_aspect_ratio_policy", "stretch"); p != "stretch") {
    throw UnsupportedNode("Resize with keep_aspect_ratio_policy '" + p + "'");
  }
}

struct ResizeShape {
  Dims out;
  std::vector<double> scales;  // per axis, what the coordinate transforms divide by
};

// From sizes (scale = out / in) or scales (out = floor(in * scale)).
ResizeShape resizeShape(const Dims &in, const std::vector<double> &scales, const std::vector<std::int64_t> &sizes,
                        const NodeProto &node) {
  ResizeShape r;
  if (!sizes.empty()) {
    if (sizes.size() != in.size()) throw Error(ErrorCode::CorruptModel, "{}: {} sizes for rank {}", nodeLabel(node), sizes.size(), in.size());
    r.out = sizes;
    for (std::size_t d = 0; d < in.size(); ++d) r.scales.push_back(static_cast<double>(sizes[d]) / static_cast<double>(in[d]));
    return r;
  }
  if (scales.size() != in.size()) throw Error(ErrorCode::CorruptModel, "{}: {} scales for rank {}", nodeLabel(node), scales.size(), in.size());
  r.scales = scales;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (scales[d] <= 0) throw Error(ErrorCode::CorruptModel, "{}: scale {} is not positive", nodeLabel(node), scales[d]);
    r.out.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(in[d]) * scales[d])));
  }
  return r;
}

void resize(LoweringContext &ctx, const NodeProto &node, const Sampling &sampling, const std::vector<double> &scales,
            const std::vector<std::int64_t> &sizes) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  const Dims in = toDims(x.shape());
  const ResizeShape shape = resizeShape(in, scales, sizes, node);
  hwsim::Tensor y = x;
  // The last axis first, as the reference nests its interpolations.
  for (std::size_t d = in.size(); d-- > 0;) {
    if (shape.out[d] <= 0) throw UnsupportedNode("a Resize to an empty tensor");
    const AxisSamples a = axisSamples(sampling, in[d], shape.out[d], shape.scales[d]);
    if (!isIdentity(a, in[d])) y = resizeAxis(ctx, y, type, d, a, node.output(0) + "/axis" + std::to_string(d));
  }
  ctx.setDevice(node.output(0), y, type);
}

// The interpolation of `mode` with these coordinates (nearest rounding as
// nearest_mode says; cubic with cubic_coeff_a and exclude_outside).
Sampling samplingOf(const NodeProto &node, Mode mode, const std::string &transform, const std::string &nearestMode) {
  Sampling s;
  s.mode = mode;
  s.coordinate = coordinateTransform(transform);
  s.roundUp = nearestRounding(nearestMode);
  if (mode == Mode::Linear) s.coefficients = [](double r) { return std::vector<double>{1 - r, r}; };
  if (mode == Mode::Cubic) s.coefficients = cubicCoefficients(attrFloat(node, "cubic_coeff_a", -0.75f));
  s.excludeOutside = attrInt(node, "exclude_outside", 0) != 0;
  return s;
}

// Resize-11/13: X, roi, scales, sizes (roi only matters to tf_crop_and_resize,
// which is rejected); Resize-10: X, scales with Upsample's sampling. Sizes
// computed at run time are the declared output shape.
void lowerResize(LoweringContext &ctx, const NodeProto &node) {
  const Mode mode = modeOf(node);
  rejectUnsupportedAttributes(node);
  if (ctx.opset() < 11) {
    if (!isConstantInput(ctx, node, 1)) return resizeByRuntimeScales(ctx, node, mode, "asymmetric", "floor", 1);
    resize(ctx, node, samplingOf(node, mode, "asymmetric", "floor"), constantValues(ctx, node, 1, "Resize's scales"), {});
    return;
  }
  const std::string transform = attrString(node, "coordinate_transformation_mode", "half_pixel");
  const std::string nearestMode = attrString(node, "nearest_mode", "round_prefer_floor");
  const Sampling s = samplingOf(node, mode, transform, nearestMode);
  if (!inputName(node, 2).empty() && !isConstantInput(ctx, node, 2)) {
    return resizeByRuntimeScales(ctx, node, mode, transform, nearestMode, 2);
  }
  std::vector<double> scales;
  if (!inputName(node, 2).empty()) scales = constantValues(ctx, node, 2, "Resize's scales");
  std::vector<std::int64_t> sizes;
  if (!inputName(node, 3).empty()) {
    sizes = isConstantInput(ctx, node, 3) ? constantInts(ctx, node, 3, "Resize's sizes")
                                          : declaredOutputDims(ctx, node, 0, "Resize's sizes");
  }
  if (scales.empty() == sizes.empty()) {
    throw Error(ErrorCode::CorruptModel, "{}: exactly one of scales and sizes must be given", nodeLabel(node));
  }
  resize(ctx, node, s, scales, sizes);
}

// Upsample-7 (scales attribute) and -9 (scales input): asymmetric coordinates, nearest rounds down.
void lowerUpsample(LoweringContext &ctx, const NodeProto &node) {
  const Sampling s = samplingOf(node, modeOf(node), "asymmetric", "floor");
  std::vector<double> scales;
  if (const auto *attr = findAttribute(node, "scales")) scales.assign(attr->floats().begin(), attr->floats().end());
  else if (!isConstantInput(ctx, node, 1)) return resizeByRuntimeScales(ctx, node, s.mode, "asymmetric", "floor", 1);
  else scales = constantValues(ctx, node, 1, "Upsample's scales");
  resize(ctx, node, s, scales, {});
}

}  // namespace

void registerResizeOps(OpRegistry &registry) {
  registry.add("Resize", lowerResize);
  registry.add("Upsample", lowerUpsample);
}

}  // namespace mrt::onnx
