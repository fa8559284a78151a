#include "onnx/runtime_operands.hpp"

#include <hwsim/ops.hpp>

#include "onnx/device_math.hpp"
#include "onnx/device_ops.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// The positions start, start + step, ... (n of them) of a Slice along an
// axis of size dim: start counted from the end when negative, then clamped
// to [0, dim] ([0, dim - 1] for a negative step) as ONNX defines it. A step
// of nullptr is 1.
hwsim::Tensor slicePositions(DeviceMath &m, const hwsim::Tensor &start, const hwsim::Tensor *step, std::int64_t dim,
                             std::size_t n) {
  hwsim::Tensor s = m.op("Add", start, m.op("Mul", m.test("Less", start, 0.0), static_cast<double>(dim)));
  s = m.op("Max", s, 0.0);
  if (!step) return m.op("Add", m.iota(n), m.op("Min", s, static_cast<double>(dim)));
  const hwsim::Tensor last = m.op("Add", m.op("Mul", m.test("Less", *step, 0.0), -1.0), static_cast<double>(dim));
  return m.op("Add", m.op("Mul", m.iota(n), *step), m.op("Min", s, last));
}

}  // namespace

void lowerRuntimeSlice(LoweringContext &ctx, const NodeProto &node) {
  hwsim::Tensor y = ctx.device(node.input(0));
  const std::size_t rank = y.rank();
  const Dims out = declaredOutputDims(ctx, node, 0, "Slice's starts, ends, axes or steps");
  if (out.size() != rank) {
    throw Error(ErrorCode::CorruptModel, "{}: declared output shape {} for input {}", nodeLabel(node), toString(out),
                toString(toDims(y.shape())));
  }
  if (numElements(out) == 0) throw UnsupportedNode("a Slice with an empty result (tensors with no elements)");
  DeviceMath m(ctx, node.output(0));
  const hwsim::Tensor starts = ctx.device(node.input(1));
  const std::size_t k = starts.numElements();
  const bool hasSteps = !inputName(node, 4).empty();
  const hwsim::Tensor steps = hasSteps ? ctx.device(node.input(4)) : hwsim::Tensor();
  auto sliceAxis = [&](std::size_t axis, const hwsim::Tensor &start, const hwsim::Tensor *step) {
    y = m.take(y, slicePositions(m, start, step, static_cast<std::int64_t>(y.dim(static_cast<unsigned>(axis))),
                                 static_cast<std::size_t>(out[axis])),
               axis);
  };
  if (inputName(node, 3).empty() || isConstantInput(ctx, node, 3)) {
    std::vector<std::int64_t> axes;
    if (inputName(node, 3).empty()) {
      for (std::size_t i = 0; i < k; ++i) axes.push_back(static_cast<std::int64_t>(i));
    } else {
      axes = constantInts(ctx, node, 3, "Slice's axes");
    }
    if (axes.size() != k || (hasSteps && steps.numElements() != k)) {
      throw Error(ErrorCode::CorruptModel, "{}: {} starts for {} axes", nodeLabel(node), k, axes.size());
    }
    for (std::size_t i = 0; i < k; ++i) {
      const hwsim::Tensor step = hasSteps ? m.element(steps, i) : hwsim::Tensor();
      sliceAxis(normalizeAxis(axes[i], rank, nodeLabel(node)), m.element(starts, i), hasSteps ? &step : nullptr);
    }
  } else {
    // Which axes are sliced is known only at run time: every axis is taken
    // with the start and step its entry gives (0 and 1 when none names it).
    const hwsim::Tensor axes = m.s32(ctx.device(node.input(3)));
    const hwsim::Tensor wrapped = m.op("Add", axes, m.op("Mul", m.test("Less", axes, 0.0), static_cast<double>(rank)));
    for (std::size_t axis = 0; axis < rank; ++axis) {
      const hwsim::Tensor picks = m.test("Equal", wrapped, static_cast<double>(axis));
      // The value of the entry naming this axis, or `fallback` when none does.
      auto pick = [&](const hwsim::Tensor &v, double fallback) {
        return m.op("Add", m.sum(m.op("Mul", m.op("Sub", m.s32(v), fallback), picks)), fallback);
      };
      const hwsim::Tensor step = hasSteps ? pick(steps, 1.0) : hwsim::Tensor();
      sliceAxis(axis, pick(starts, 0.0), hasSteps ? &step : nullptr);
    }
  }
  ctx.setDevice(node.output(0), y.reshape(toShape(out)), ctx.value(node.input(0)).type);
}


namespace {

// The input positions that the n output positions along an axis of size
// dim read when `before` (run-time) elements are padded before it: i - before,
// then for edge and reflect folded into the part of the axis that cropping
// (a negative pad) keeps, [lo, hi]. Constant padding reads position dim,
// the padding value appended to the axis, for every position outside it.
hwsim::Tensor padPositions(DeviceMath &m, const hwsim::Tensor &before, std::int64_t dim, std::size_t n, PadMode mode) {
  const auto d = static_cast<double>(dim);
  const hwsim::Tensor source = m.op("Sub", m.iota(n), before);
  if (mode == PadMode::Constant) {
    const hwsim::Tensor inside = m.clamp(source, -1.0, d);
    return m.op("Add", inside, m.op("Mul", m.test("Less", inside, 0.0), d + 1.0));
  }
  // lo = max(0, -before); the pad after is n - dim - before, so
  // hi = dim - 1 - max(0, before + dim - n).
  const hwsim::Tensor lo = m.op("Max", m.op("Mul", before, -1.0), 0.0);
  const hwsim::Tensor cropAfter = m.op("Max", m.op("Add", before, d - static_cast<double>(n)), 0.0);
  const hwsim::Tensor kept = m.op("Add", m.op("Mul", m.op("Add", cropAfter, lo), -1.0), d);  // hi - lo + 1
  const hwsim::Tensor t = m.op("Sub", source, lo);
  if (mode == PadMode::Edge) {
    return m.op("Add", m.op("Min", m.op("Max", t, 0.0), m.op("Sub", kept, 1.0)), lo);
  }
  // Reflect: |t| mod 2 (kept - 1), mirrored back when it passes the end
  // (a period of 0, one element kept, gives 0: an integer mod 0 is 0).
  const hwsim::Tensor period = m.op("Mul", m.op("Sub", kept, 1.0), 2.0);
  const hwsim::Tensor j = m.op("Mod", m.unary("Abs", t), period);
  const hwsim::Tensor back = m.op("Sub", period, m.op("Mul", j, 2.0));  // period - j, less j
  const hwsim::Tensor past = m.test("GreaterEqual", j, kept);
  return m.op("Add", m.op("Add", j, m.op("Mul", back, past)), lo);
}

}  // namespace

void lowerRuntimePad(LoweringContext &ctx, const NodeProto &node, PadMode mode) {
  hwsim::Tensor y = ctx.device(node.input(0));
  const std::size_t rank = y.rank();
  std::vector<std::size_t> axes;
  if (!inputName(node, 3).empty()) {
    for (const auto a : constantInts(ctx, node, 3, "Pad's axes")) axes.push_back(normalizeAxis(a, rank, nodeLabel(node)));
  } else {
    for (std::size_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  const hwsim::Tensor pads = ctx.device(node.input(1));
  if (pads.numElements() != 2 * axes.size()) {
    throw Error(ErrorCode::CorruptModel, "{}: {} pads for {} axes", nodeLabel(node), pads.numElements(), axes.size());
  }
  Dims out = toDims(y.shape());
  if (isConstantInput(ctx, node, 1)) {
    const std::vector<std::int64_t> p = constantInts(ctx, node, 1, "Pad's pads");
    for (std::size_t i = 0; i < axes.size(); ++i) out[axes[i]] += p[i] + p[i + axes.size()];
  } else {
    out = declaredOutputDims(ctx, node, 0, "Pad's pads");
  }
  if (out.size() != rank) {
    throw Error(ErrorCode::CorruptModel, "{}: declared output shape {} for input {}", nodeLabel(node), toString(out),
                toString(toDims(y.shape())));
  }
  if (numElements(out) == 0) throw UnsupportedNode("a Pad with an empty result (tensors with no elements)");
  DeviceMath m(ctx, node.output(0));
  const std::string &valueName = inputName(node, 2);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const auto axis = static_cast<unsigned>(axes[i]);
    hwsim::Tensor source = y;
    if (mode == PadMode::Constant) {
      // The padding value appended along the axis, where positions outside the input read it.
      hwsim::Shape band = y.shape();
      band[axis] = 1;
      const hwsim::Tensor value =
          valueName.empty() ? constantBand(ctx, y, axis, 1, 0.0, node.output(0) + "/value")
                            : broadcastView(ctx.device(valueName).reshape(hwsim::Shape(rank, 1)), band);
      source = materialize(ctx, hwsim::concat({y, value}, axis), node.output(0) + "/padded");
    }
    y = m.take(source, padPositions(m, m.element(pads, i), static_cast<std::int64_t>(y.dim(axis)),
                                    static_cast<std::size_t>(out[axis]), mode),
               axis);
  }
  ctx.setDevice(node.output(0), y, ctx.value(node.input(0)).type);
}

}  // namespace mrt::onnx
