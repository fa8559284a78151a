// Gather (constant indices as a view, run-time indices with hwsim's Gather
// codelet) and GatherElements (run-time or constant indices, on the device).
#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// Constant indices, checked and made non-negative, pick a view of x.
hwsim::Tensor gatherConstant(LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x, std::size_t axis) {
  std::vector<std::int64_t> indices = constantInts(ctx, node, 1, "Gather's indices");
  const auto dim = static_cast<std::int64_t>(x.dim(static_cast<unsigned>(axis)));
  for (auto &i : indices) {
    if (i < -dim || i >= dim) throw Error(ErrorCode::CorruptModel, "{}: index {} is out of range for dimension {}", nodeLabel(node), i, dim);
    if (i < 0) i += dim;
  }
  return takeView(x, axis, indices);
}

void lowerGather(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", 0), x.rank(), nodeLabel(node));
  const Dims indexDims = ctx.value(node.input(1)).dims();
  Dims out = toDims(x.shape());
  out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), indexDims.begin(), indexDims.end());
  // Out-of-range run-time indices give zeros (the device cannot fail a node).
  const hwsim::Tensor y =
      ctx.isHost(node.input(1))
          ? gatherConstant(ctx, node, x, axis)
          : hwsim::ops::gather(ctx.graph(), ctx.main(), x, ctx.device(node.input(1)), axis, node.output(0));
  ctx.setDevice(node.output(0), y.reshape(toShape(out)), ctx.value(node.input(0)).type);
}

void lowerGatherElements(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", 0), x.rank(), nodeLabel(node));
  const hwsim::Tensor indices = ctx.device(node.input(1));
  if (indices.rank() != x.rank()) {
    throw Error(ErrorCode::CorruptModel, "{}: indices of rank {} for data of rank {}", nodeLabel(node), indices.rank(), x.rank());
  }
  ctx.setDevice(node.output(0), hwsim::ops::gatherElements(ctx.graph(), ctx.main(), x, indices, axis, node.output(0)),
                ctx.value(node.input(0)).type);
}

}  // namespace

void registerGatherOps(OpRegistry &registry) {
  registry.add("Gather", lowerGather);
  registry.add("GatherElements", lowerGatherElements);
}

}  // namespace mrt::onnx
