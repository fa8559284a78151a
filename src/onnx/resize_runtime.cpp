// Resize with scales computed at run time. The scales move every sample (the
// coordinate transforms divide by them, not by the output / input ratio), so
// where the constant-scale lowering computes taps and weights on the host,
// this computes them on the device, one axis at a time (the last first, as
// ONNX's reference nests them), with the same formulas: each output position
// j maps to an input coordinate x, nearest rounds it, linear and cubic weigh
// the 2 or 4 taps around it (edge-clamped; exclude_outside drops and
// renormalizes), each tap a run-time Gather along the axis. The output shape
// is the declared one (floor(in * scale)).
#include "onnx/resize_runtime.hpp"

#include "onnx/device_math.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// Input coordinate of output positions j (F32) along an axis of `in`
// elements resized by the run-time scale s ([1], F32).
hwsim::Tensor coordinates(DeviceMath &m, const hwsim::Tensor &j, double in, const hwsim::Tensor &s,
                          const std::string &transform) {
  const hwsim::Tensor halfPixel = m.op("Sub", m.op("Div", m.op("Add", j, 0.5), s), 0.5);
  if (transform == "half_pixel") return halfPixel;
  if (transform == "asymmetric") return m.op("Div", j, s);
  if (transform == "tf_half_pixel_for_nn") return m.op("Div", m.op("Add", j, 0.5), s);
  // pytorch_half_pixel and align_corners special-case an output of length in * scale == 1.
  const hwsim::Tensor one = m.test("Equal", m.op("Mul", s, in), 1.0, hwsim::Type::F32);
  const hwsim::Tensor other = m.op("Add", m.op("Mul", one, -1.0), 1.0);
  if (transform == "pytorch_half_pixel") return m.op("Sub", m.op("Mul", halfPixel, other), m.op("Mul", one, 0.5));
  if (transform == "align_corners") {
    // j (in - 1) / (in * scale - 1), 0 for a length of 1 (the denominator made 1 there).
    const hwsim::Tensor denominator = m.op("Add", m.op("Sub", m.op("Mul", s, in), 1.0), one);
    return m.op("Mul", m.op("Div", m.op("Mul", j, in - 1), denominator), other);
  }
  throw UnsupportedNode("Resize with coordinate_transformation_mode '" + transform +
                        "' (half_pixel, asymmetric, align_corners, pytorch_half_pixel, tf_half_pixel_for_nn only)");
}

// 1 where nearest_mode rounds a coordinate with fractional part f up, else 0.
hwsim::Tensor roundsUp(DeviceMath &m, const hwsim::Tensor &f, const std::string &nearestMode) {
  if (nearestMode == "round_prefer_floor") return m.test("Greater", f, 0.5, hwsim::Type::F32);
  if (nearestMode == "round_prefer_ceil") return m.test("GreaterEqual", f, 0.5, hwsim::Type::F32);
  if (nearestMode == "floor") return m.op("Mul", f, 0.0);
  if (nearestMode == "ceil") return m.test("Greater", f, 0.0, hwsim::Type::F32);
  throw Error(ErrorCode::CorruptModel, "unknown nearest_mode '{}'", nearestMode);
}

struct AxisResize {
  ResizeMode mode;
  std::string transform, nearestMode;
  double cubicA = -0.75;
  bool excludeOutside = false;
};

// y resized along `axis` to n positions by the run-time scale s.
hwsim::Tensor resizeAxis(DeviceMath &m, const hwsim::Tensor &y, std::size_t axis, std::size_t n, const hwsim::Tensor &s,
                         const AxisResize &r) {
  const auto in = static_cast<double>(y.dim(static_cast<unsigned>(axis)));
  const hwsim::Tensor x = coordinates(m, m.cast(m.iota(n), hwsim::Type::F32), in, s, r.transform);
  hwsim::Tensor below = m.unary("Floor", x);
  hwsim::Tensor fraction = m.op("Sub", x, below);
  auto clamped = [&](const hwsim::Tensor &index) { return m.s32(m.clamp(index, 0.0, in - 1)); };
  if (r.mode == ResizeMode::Nearest) return m.take(y, clamped(m.op("Add", below, roundsUp(m, fraction, r.nearestMode))), axis);
  // The reference prefers the taps before x: an integral x is the last tap before the midpoint.
  const hwsim::Tensor integral = m.test("Equal", fraction, 0.0, hwsim::Type::F32);
  below = m.op("Sub", below, integral);
  fraction = m.op("Add", fraction, integral);
  std::vector<hwsim::Tensor> weights;
  if (r.mode == ResizeMode::Linear) {
    weights = {m.op("Add", m.op("Mul", fraction, -1.0), 1.0), fraction};
  } else {
    const auto cubic = cubicWeights(m, fraction, r.cubicA);
    weights.assign(cubic.begin(), cubic.end());
  }
  const hwsim::Tensor first = m.op("Sub", below, static_cast<double>(weights.size() / 2 - 1));
  std::vector<hwsim::Tensor> taps;
  for (std::size_t t = 0; t < weights.size(); ++t) taps.push_back(m.op("Add", first, static_cast<double>(t)));
  if (r.excludeOutside) {
    hwsim::Tensor sum;
    for (std::size_t t = 0; t < weights.size(); ++t) {
      const hwsim::Tensor inside = m.op("Mul", m.test("GreaterEqual", taps[t], 0.0, hwsim::Type::F32),
                                        m.test("LessEqual", taps[t], in - 1, hwsim::Type::F32));
      weights[t] = m.op("Mul", weights[t], inside);
      sum = sum.valid() ? m.op("Add", sum, weights[t]) : weights[t];
    }
    for (auto &w : weights) w = m.op("Div", w, sum);
  }
  // One weight per position along the axis, broadcast over the dimensions after it.
  hwsim::Shape weightShape(y.rank() - axis, 1);
  weightShape[0] = n;
  hwsim::Tensor result;
  for (std::size_t t = 0; t < weights.size(); ++t) {
    const hwsim::Tensor term =
        m.op("Mul", m.take(y, clamped(taps[t]), axis), m.cast(weights[t], y.elementType()).reshape(weightShape));
    result = result.valid() ? m.op("Add", result, term) : term;
  }
  return result;
}

}  // namespace

void resizeByRuntimeScales(LoweringContext &ctx, const NodeProto &node, ResizeMode mode, const std::string &transform,
                           const std::string &nearestMode, int scalesInput) {
  hwsim::Tensor y = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  const Dims out = declaredOutputDims(ctx, node, 0, node.op_type() + "'s scales");
  const hwsim::Tensor scales = ctx.device(node.input(scalesInput));
  if (out.size() != y.rank() || scales.numElements() != y.rank()) {
    throw Error(ErrorCode::CorruptModel, "{}: {} scales and declared output shape {} for input {}", nodeLabel(node),
                scales.numElements(), toString(out), toString(toDims(y.shape())));
  }
  if (numElements(out) == 0) throw UnsupportedNode("a Resize to an empty tensor");
  if (mode != ResizeMode::Nearest && !hwsim::isFloatingPoint(y.elementType())) {
    throw UnsupportedNode("interpolating " + node.op_type() + " of " + typeName(type));
  }
  const AxisResize r{mode, transform, nearestMode, attrFloat(node, "cubic_coeff_a", -0.75f),
                     attrInt(node, "exclude_outside", 0) != 0};
  DeviceMath m(ctx, node.output(0));
  const hwsim::Tensor s = m.cast(scales.reshape({scales.numElements()}), hwsim::Type::F32);
  for (std::size_t d = y.rank(); d-- > 0;) {
    y = resizeAxis(m, y, d, static_cast<std::size_t>(out[d]), s.slice(d, d + 1, 0), r);
  }
  ctx.setDevice(node.output(0), y, type);
}

}  // namespace mrt::onnx
