// Gather (constant indices as a view, run-time indices with hwsim's Gather
// codelet), GatherElements (run-time or constant indices, on the device) and
// Where, a GatherElements between its two operands.
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

// Where(c, x, y) of run-time values (all constants fold on the host): the
// elements of [y, x], stacked on a new leading axis, that c (0 or 1) picks.
// Selecting, not blending (c * x + (1 - c) * y), passes infinities and NaNs
// of the operand not chosen untouched.
void lowerWhere(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const auto dims = broadcastDims(ctx.value(node.input(0)).dims(), ctx.value(node.input(1)).dims());
  const auto outDims = dims ? broadcastDims(*dims, ctx.value(node.input(2)).dims()) : std::nullopt;
  if (!outDims) throw Error(ErrorCode::CorruptModel, "{}: Where's inputs do not broadcast", nodeLabel(node));
  const hwsim::Shape shape = toShape(*outDims);
  hwsim::Shape stacked = shape;
  stacked.insert(stacked.begin(), 1);
  auto operand = [&](int input) { return broadcastView(ctx.device(node.input(input)), shape).reshape(stacked); };
  const hwsim::Tensor choices =
      materialize(ctx, hwsim::concat({operand(2), operand(1)}, 0), out + "/choices");
  const hwsim::Tensor picks =
      hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", ctx.device(node.input(0)), out + "/picks", hwsim::Type::S32);
  const hwsim::Tensor index = materialize(ctx, broadcastView(picks, shape).reshape(stacked), out + "/index");
  const hwsim::Tensor y = hwsim::ops::gatherElements(ctx.graph(), ctx.main(), choices, index, 0, out);
  ctx.setDevice(out, y.reshape(shape), ctx.value(node.input(1)).type);
}

}  // namespace

void registerGatherOps(OpRegistry &registry) {
  registry.add("Gather", lowerGather);
  registry.add("GatherElements", lowerGatherElements);
  registry.add("Where", lowerWhere);
}

}  // namespace mrt::onnx
