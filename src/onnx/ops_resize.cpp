// Resize (opsets 10-13) and Upsample with constant scales or sizes, one axis
// at a time (the interpolation is separable). Every output position along an
// axis maps back to an input coordinate computed on the host; nearest takes
// the input element there (a gather view with compile-time indices), linear
// is lo + w * (hi - lo) of the two neighbours, w a host-computed constant.
// The coordinates follow ONNX's reference implementation, which the backend
// node tests were generated with (align_corners and pytorch_half_pixel use
// the unrounded output length in * scale).
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

enum class Mode { Nearest, Linear };

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

struct Sampling {
  Mode mode = Mode::Nearest;
  CoordinateFn coordinate;
  RoundUpFn roundUp;
};

// One axis: output j = x[lo[j]] + weight[j] * (x[hi[j]] - x[lo[j]]).
struct AxisSamples {
  std::vector<std::int64_t> lo, hi;
  std::vector<double> weight;
};

// Neighbours outside the input read its border element (ONNX pads with edge values).
AxisSamples axisSamples(const Sampling &s, std::int64_t in, std::int64_t out, double scale) {
  AxisSamples a;
  auto clampIndex = [in](double i) { return static_cast<std::int64_t>(std::clamp<double>(i, 0, static_cast<double>(in - 1))); };
  for (std::int64_t j = 0; j < out; ++j) {
    const double x = s.coordinate(static_cast<double>(j), static_cast<double>(in), scale);
    const double below = std::floor(x), fraction = x - below;
    if (s.mode == Mode::Nearest) {
      a.lo.push_back(clampIndex(fraction > 0 && s.roundUp(fraction) ? below + 1 : below));
      a.hi.push_back(a.lo.back());
      a.weight.push_back(0);
    } else {
      a.lo.push_back(clampIndex(below));
      a.hi.push_back(clampIndex(below + 1));
      a.weight.push_back(fraction);
    }
  }
  return a;
}

bool isIdentity(const AxisSamples &a, std::int64_t in) {
  if (static_cast<std::int64_t>(a.lo.size()) != in) return false;
  for (std::int64_t j = 0; j < in; ++j) {
    if (a.lo[static_cast<std::size_t>(j)] != j || a.weight[static_cast<std::size_t>(j)] != 0) return false;
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

hwsim::Tensor resizeAxis(LoweringContext &ctx, const hwsim::Tensor &x, std::int32_t type, std::size_t axis,
                         const AxisSamples &a, const std::string &name) {
  const bool nearest = std::all_of(a.weight.begin(), a.weight.end(), [](double w) { return w == 0; });
  if (!nearest && !hwsim::isFloatingPoint(x.elementType())) throw UnsupportedNode("linear Resize of " + typeName(type));
  const hwsim::Tensor lo = gathered(ctx, x, axis, a.lo, name + "/lo");
  if (nearest) return lo;
  const hwsim::Tensor hi = gathered(ctx, x, axis, a.hi, name + "/hi");
  const std::string diff = ctx.uniqueName(name + "/diff"), weight = ctx.uniqueName(name + "/weight");
  ctx.setDevice(diff, broadcastBinary(ctx, "Sub", hi, lo, diff), type);
  // [out, 1, ...]: one weight per position along the axis, broadcast over the dimensions after it.
  Dims weightDims(x.rank() - axis, 1);
  weightDims[0] = static_cast<std::int64_t>(a.weight.size());
  HostTensor w{type, weightDims, a.weight};
  convertValues(w.values, type);
  ctx.setHost(weight, std::move(w));
  const hwsim::Tensor step = broadcastBinary(ctx, "Mul", diff, weight, ctx.uniqueName(name + "/step"));
  return broadcastBinary(ctx, "Add", lo, step, ctx.uniqueName(name));
}

Mode modeOf(const NodeProto &node) {
  const std::string mode = attrString(node, "mode", "nearest");
  if (mode == "nearest") return Mode::Nearest;
  if (mode == "linear" || mode == "bilinear") return Mode::Linear;  // Upsample-7 also names it bilinear
  throw UnsupportedNode(node.op_type() + " with mode '" + mode + "' (nearest and linear only)");
}

// Opset-18 attributes (and exclude_outside, which only cubic uses) at their defaults.
void rejectUnsupportedAttributes(const NodeProto &node) {
  if (attrInt(node, "antialias", 0) != 0) throw UnsupportedNode("Resize with antialias 1");
  if (attrInt(node, "exclude_outside", 0) != 0) throw UnsupportedNode("Resize with exclude_outside 1");
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
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (shape.out[d] <= 0) throw UnsupportedNode("a Resize to an empty tensor");
    const AxisSamples a = axisSamples(sampling, in[d], shape.out[d], shape.scales[d]);
    if (!isIdentity(a, in[d])) y = resizeAxis(ctx, y, type, d, a, node.output(0) + "/axis" + std::to_string(d));
  }
  ctx.setDevice(node.output(0), y, type);
}

// Resize-11/13: X, roi, scales, sizes (roi only matters to tf_crop_and_resize,
// which is rejected); Resize-10: X, scales with Upsample's sampling.
void lowerResize(LoweringContext &ctx, const NodeProto &node) {
  Sampling s;
  s.mode = modeOf(node);
  rejectUnsupportedAttributes(node);
  if (ctx.opset() < 11) {
    s.coordinate = coordinateTransform("asymmetric");
    s.roundUp = nearestRounding("floor");
    resize(ctx, node, s, constantValues(ctx, node, 1, "Resize's scales"), {});
    return;
  }
  const std::string transform = attrString(node, "coordinate_transformation_mode", "half_pixel");
  s.coordinate = coordinateTransform(transform);
  s.roundUp = nearestRounding(attrString(node, "nearest_mode", "round_prefer_floor"));
  // cubic_coeff_a and extrapolation_value only matter to the rejected cubic and tf_crop_and_resize.
  std::vector<double> scales;
  if (!inputName(node, 2).empty()) scales = constantValues(ctx, node, 2, "Resize's scales");
  std::vector<std::int64_t> sizes;
  if (!inputName(node, 3).empty()) sizes = constantInts(ctx, node, 3, "Resize's sizes");
  if (scales.empty() == sizes.empty()) {
    throw Error(ErrorCode::CorruptModel, "{}: exactly one of scales and sizes must be given", nodeLabel(node));
  }
  resize(ctx, node, s, scales, sizes);
}

// Upsample-7 (scales attribute) and -9 (scales input): asymmetric coordinates, nearest rounds down.
void lowerUpsample(LoweringContext &ctx, const NodeProto &node) {
  Sampling s{modeOf(node), coordinateTransform("asymmetric"), nearestRounding("floor")};
  std::vector<double> scales;
  if (const auto *attr = findAttribute(node, "scales")) scales.assign(attr->floats().begin(), attr->floats().end());
  else scales = constantValues(ctx, node, 1, "Upsample's scales");
  resize(ctx, node, s, scales, {});
}

}  // namespace

void registerResizeOps(OpRegistry &registry) {
  registry.add("Resize", lowerResize);
  registry.add("Upsample", lowerUpsample);
}

}  // namespace mrt::onnx
