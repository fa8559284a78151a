// Gather (constant indices as a view, run-time indices with hwsim's Gather
// codelet), GatherElements (run-time or constant indices, on the device),
// Where, a GatherElements between its two operands, and GatherND and OneHot,
// run-time Gathers by indices computed on the device.
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

// Run-time integer indices as S32 (the device's INT64), negative ones plus
// `dim`: i + dim * (i < 0).
hwsim::Tensor wrappedIndices(LoweringContext &ctx, hwsim::Tensor indices, std::int64_t dim, const std::string &name) {
  if (indices.elementType() != hwsim::Type::S32) {
    indices = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", indices, name + "/s32", hwsim::Type::S32);
  }
  const hwsim::Tensor negative = mask(ctx, "Less", indices, 0.0, name + "/negative", hwsim::Type::S32);
  return broadcastBinary(ctx, "Add", indices, scalarBinary(ctx, "Mul", negative, static_cast<double>(dim), name + "/wrap"),
                         name);
}

// GatherND: data viewed as [B * P, rest...] (B the batch_dims' elements, P
// those of the k indexed dimensions), each index tuple turned into one row
// number on the device (sum of index * stride, plus its batch's offset), then
// one run-time Gather of rows (an out-of-range tuple gives zeros).
void lowerGatherND(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor data = ctx.device(node.input(0));
  const hwsim::Tensor indices = ctx.device(node.input(1));
  const auto b = static_cast<std::size_t>(attrInt(node, "batch_dims", 0));
  const std::size_t q = indices.rank(), r = data.rank();
  const std::size_t k = q == 0 ? 0 : indices.dim(static_cast<unsigned>(q - 1));
  if (q < 1 || b >= q || b + k > r || k == 0) {
    throw Error(ErrorCode::CorruptModel, "{}: indices {} with batch_dims {} for data {}", nodeLabel(node),
                toString(toDims(indices.shape())), b, toString(toDims(data.shape())));
  }
  const hwsim::Shape &dd = data.shape();
  std::size_t batches = 1, indexed = 1, rest = 1;
  for (std::size_t d = 0; d < r; ++d) (d < b ? batches : d < b + k ? indexed : rest) *= dd[d];
  const std::size_t tuples = indices.numElements() / k;  // B * M
  const hwsim::Tensor tupleList = indices.reshape({tuples, k});
  hwsim::Tensor row;
  std::size_t stride = indexed;
  for (std::size_t j = 0; j < k; ++j) {
    const std::size_t dim = dd[b + j];
    stride /= dim;
    const std::string part = out + "/index" + std::to_string(j);
    hwsim::Tensor term = wrappedIndices(ctx, tupleList.slice(j, j + 1, 1).reshape({tuples}), static_cast<std::int64_t>(dim), part);
    if (stride != 1) term = scalarBinary(ctx, "Mul", term, static_cast<double>(stride), part + "/scaled");
    row = j == 0 ? term : broadcastBinary(ctx, "Add", row, term, part + "/sum");
  }
  if (batches > 1) {
    HostTensor offsets{::onnx::TensorProto::INT64, {static_cast<std::int64_t>(batches), 1}, {}};
    for (std::size_t i = 0; i < batches; ++i) offsets.values.push_back(static_cast<double>(i * indexed));
    const std::string offsetName = ctx.uniqueName(out + "/batch_offsets"), rowName = ctx.uniqueName(out + "/rows");
    ctx.setHost(offsetName, std::move(offsets));
    ctx.setDevice(rowName, row.reshape({batches, tuples / batches}), ::onnx::TensorProto::INT64);
    row = broadcastBinary(ctx, "Add", rowName, offsetName, out + "/row");
  }
  const hwsim::Tensor y = hwsim::ops::gather(ctx.graph(), ctx.main(), data.reshape({batches * indexed, rest}),
                                             row.reshape({tuples}), 0, out);
  hwsim::Shape shape(indices.shape().begin(), indices.shape().end() - 1);
  shape.insert(shape.end(), dd.begin() + static_cast<std::ptrdiff_t>(b + k), dd.end());
  ctx.setDevice(out, y.reshape(shape), ctx.value(node.input(0)).type);
}

// OneHot: values[1] where the (wrapped) index equals the position along the
// new axis, values[0] elsewhere, as a run-time Gather of values by the
// comparison. A depth computed at run time is the declared output's.
void lowerOneHot(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor indices = ctx.device(node.input(0));
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", -1), indices.rank() + 1, nodeLabel(node));
  std::int64_t depth = 0;
  if (ctx.isHost(node.input(1))) {
    depth = static_cast<std::int64_t>(ctx.host(node.input(1)).values.at(0));
  } else {
    const Dims declared = declaredOutputDims(ctx, node, 0, "OneHot's depth");
    if (declared.size() != indices.rank() + 1) throw Error(ErrorCode::CorruptModel, "{}: output of rank {}", nodeLabel(node), declared.size());
    depth = declared[axis];
  }
  if (depth <= 0) throw UnsupportedNode("OneHot with depth " + std::to_string(depth));
  if (ctx.value(node.input(2)).dims() != Dims{2}) throw Error(ErrorCode::CorruptModel, "{}: values must have 2 elements", nodeLabel(node));
  hwsim::Shape shape = indices.shape(), at(indices.rank() + 1, 1);
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(axis), static_cast<std::size_t>(depth));
  at[axis] = static_cast<std::size_t>(depth);
  hwsim::Shape spread = indices.shape();
  spread.insert(spread.begin() + static_cast<std::ptrdiff_t>(axis), 1);
  const std::string index = ctx.uniqueName(out + "/index"), positions = ctx.uniqueName(out + "/positions");
  ctx.setDevice(index, wrappedIndices(ctx, indices, depth, index).reshape(spread), ::onnx::TensorProto::INT64);
  HostTensor iota{::onnx::TensorProto::INT64, toDims(at), {}};
  for (std::int64_t i = 0; i < depth; ++i) iota.values.push_back(static_cast<double>(i));
  ctx.setHost(positions, std::move(iota));
  const hwsim::Tensor hit = broadcastBinary(ctx, "Equal", index, positions, out + "/hit");
  const hwsim::Tensor pick = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", hit, out + "/pick", hwsim::Type::S32);
  const hwsim::Tensor y = hwsim::ops::gather(ctx.graph(), ctx.main(), ctx.device(node.input(2)), pick, 0, out);
  ctx.setDevice(out, y.reshape(shape), ctx.value(node.input(2)).type);
}

}  // namespace

void registerGatherOps(OpRegistry &registry) {
  registry.add("Gather", lowerGather);
  registry.add("GatherElements", lowerGatherElements);
  registry.add("Where", lowerWhere);
  registry.add("GatherND", lowerGatherND);
  registry.add("OneHot", lowerOneHot);
}

}  // namespace mrt::onnx
