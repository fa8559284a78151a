// MaxUnpool (opsets 9, 11): the inverse of MaxPool with its Indices output.
// Y is zeros of the unpooled shape with X's elements written at the flat
// positions (over all of Y, batch and channels included) that I gives, by
// hwsim's ScatterElements (an out-of-range index drops its element); a
// larger output_shape adds zeros after the end of each dimension.
#include <hwsim/ops.hpp>

#include "onnx/device_math.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// Each spatial size (in - 1) * stride + kernel - pads: the shape I's flat positions refer to.
Dims unpooledDims(const NodeProto &node, const Dims &in) {
  const std::size_t spatial = in.size() < 2 ? 0 : in.size() - 2;
  const auto kernel = attrInts(node, "kernel_shape").value_or(std::vector<std::int64_t>{});
  const auto strides = attrInts(node, "strides").value_or(std::vector<std::int64_t>(spatial, 1));
  const auto pads = attrInts(node, "pads").value_or(std::vector<std::int64_t>(2 * spatial, 0));
  if (spatial == 0 || kernel.size() != spatial || strides.size() != spatial || pads.size() != 2 * spatial) {
    throw Error(ErrorCode::CorruptModel, "{}: kernel_shape, strides and pads for input {}", nodeLabel(node), toString(in));
  }
  Dims out(in.begin(), in.begin() + 2);
  for (std::size_t d = 0; d < spatial; ++d) out.push_back((in[d + 2] - 1) * strides[d] + kernel[d] - pads[d] - pads[d + spatial]);
  return out;
}

// output_shape: a constant, or run-time (the declared shape); the unpooled shape without it.
Dims outputDims(const LoweringContext &ctx, const NodeProto &node, const Dims &unpooled) {
  if (inputName(node, 2).empty()) return unpooled;
  return isConstantInput(ctx, node, 2) ? constantInts(ctx, node, 2, "MaxUnpool's output_shape")
                                       : declaredOutputDims(ctx, node, 0, "MaxUnpool's output_shape");
}

void lowerMaxUnpool(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0)), indices = ctx.device(node.input(1));
  if (indices.shape() != x.shape()) {
    throw Error(ErrorCode::CorruptModel, "{}: indices {} for X {}", nodeLabel(node), toString(toDims(indices.shape())),
                toString(toDims(x.shape())));
  }
  const Dims unpooled = unpooledDims(node, toDims(x.shape()));
  const Dims out = outputDims(ctx, node, unpooled);
  if (out.size() != x.rank() || numElements(unpooled) == 0) {
    throw Error(ErrorCode::CorruptModel, "{}: output shape {} for X {}", nodeLabel(node), toString(out), toString(toDims(x.shape())));
  }
  DeviceMath m(ctx, node.output(0));
  const std::size_t n = x.numElements();
  hwsim::Tensor y = hwsim::ops::scatterElements(
      ctx.graph(), ctx.main(), m.constant({numElements(unpooled)}, 0.0, x.elementType()), m.s32(indices).reshape({n}),
      x.reshape({n}), 0, hwsim::ops::ScatterReduction::None, node.output(0)).reshape(toShape(unpooled));
  // A larger output_shape holds the unpooled tensor at its start, zeros after it (as ONNX's reference).
  bool padded = false;
  for (unsigned d = 0; d < out.size(); ++d) {
    if (out[d] < unpooled[d]) {
      throw Error(ErrorCode::CorruptModel, "{}: output_shape {} is smaller than the unpooled shape {}", nodeLabel(node),
                  toString(out), toString(unpooled));
    }
    if (out[d] == unpooled[d]) continue;
    y = hwsim::concat({y, constantBand(ctx, y, d, static_cast<std::size_t>(out[d] - unpooled[d]), 0.0, node.output(0) + "/end")}, d);
    padded = true;
  }
  ctx.setDevice(node.output(0), padded ? m.materialized(y) : y, ctx.value(node.input(0)).type);
}

}  // namespace

void registerMaxUnpoolOps(OpRegistry &registry) { registry.add("MaxUnpool", lowerMaxUnpool); }

}  // namespace mrt::onnx
