// Gather (constant indices as a view, run-time indices with hwsim's Gather
// codelet), GatherElements (run-time or constant indices, on the device),
// Where, a GatherElements between its two operands, GatherND and OneHot,
// run-time Gathers by indices computed on the device, ReverseSequence, a
// GatherElements by computed indices, and ScatterElements, Scatter and
// ScatterND on hwsim's ScatterElements codelet.
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

// The row of data viewed as [B * P, rest...] (B the elements of the first
// b dimensions, P those of the k indexed ones) that each index tuple of
// indices [..., k] names, computed on the device: the sum of index * stride
// (negative indices wrapped) plus the tuple's batch offset.
struct IndexTuples {
  std::size_t b = 0, k = 0, batches = 1, indexed = 1, rest = 1, tuples = 0;
};

IndexTuples indexTuples(const NodeProto &node, const hwsim::Shape &dataShape, const hwsim::Tensor &indices, std::size_t b) {
  IndexTuples t;
  const std::size_t q = indices.rank(), r = dataShape.size();
  t.b = b;
  t.k = q == 0 ? 0 : indices.dim(static_cast<unsigned>(q - 1));
  if (q < 1 || b >= q || b + t.k > r || t.k == 0) {
    throw Error(ErrorCode::CorruptModel, "{}: indices {} with batch_dims {} for data {}", nodeLabel(node),
                toString(toDims(indices.shape())), b, toString(toDims(dataShape)));
  }
  for (std::size_t d = 0; d < r; ++d) (d < b ? t.batches : d < b + t.k ? t.indexed : t.rest) *= dataShape[d];
  t.tuples = indices.numElements() / t.k;
  return t;
}

hwsim::Tensor tupleRows(LoweringContext &ctx, const IndexTuples &t, const hwsim::Shape &dataShape,
                        const hwsim::Tensor &indices, const std::string &name) {
  const hwsim::Tensor tupleList = indices.reshape({t.tuples, t.k});
  hwsim::Tensor row;
  std::size_t stride = t.indexed;
  for (std::size_t j = 0; j < t.k; ++j) {
    const std::size_t dim = dataShape[t.b + j];
    stride /= dim;
    const std::string part = name + "/index" + std::to_string(j);
    hwsim::Tensor term = wrappedIndices(ctx, tupleList.slice(j, j + 1, 1).reshape({t.tuples}), static_cast<std::int64_t>(dim), part);
    if (stride != 1) term = scalarBinary(ctx, "Mul", term, static_cast<double>(stride), part + "/scaled");
    row = j == 0 ? term : broadcastBinary(ctx, "Add", row, term, part + "/sum");
  }
  if (t.batches == 1) return row;
  HostTensor offsets{::onnx::TensorProto::INT64, {static_cast<std::int64_t>(t.batches), 1}, {}};
  for (std::size_t i = 0; i < t.batches; ++i) offsets.values.push_back(static_cast<double>(i * t.indexed));
  const std::string offsetName = ctx.uniqueName(name + "/batch_offsets"), rowName = ctx.uniqueName(name + "/rows");
  ctx.setHost(offsetName, std::move(offsets));
  ctx.setDevice(rowName, row.reshape({t.batches, t.tuples / t.batches}), ::onnx::TensorProto::INT64);
  return broadcastBinary(ctx, "Add", rowName, offsetName, name + "/row").reshape({t.tuples});
}

// GatherND: one run-time Gather of the rows the index tuples name (an
// out-of-range tuple gives zeros).
void lowerGatherND(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor data = ctx.device(node.input(0));
  const hwsim::Tensor indices = ctx.device(node.input(1));
  const IndexTuples t = indexTuples(node, data.shape(), indices, static_cast<std::size_t>(attrInt(node, "batch_dims", 0)));
  const hwsim::Tensor row = tupleRows(ctx, t, data.shape(), indices, out);
  const hwsim::Tensor y = hwsim::ops::gather(ctx.graph(), ctx.main(), data.reshape({t.batches * t.indexed, t.rest}), row, 0, out);
  hwsim::Shape shape(indices.shape().begin(), indices.shape().end() - 1);
  shape.insert(shape.end(), data.shape().begin() + static_cast<std::ptrdiff_t>(t.b + t.k), data.shape().end());
  ctx.setDevice(out, y.reshape(shape), ctx.value(node.input(0)).type);
}

hwsim::ops::ScatterReduction scatterReduction(const NodeProto &node) {
  const std::string r = attrString(node, "reduction", "none");
  if (r == "none") return hwsim::ops::ScatterReduction::None;
  if (r == "add") return hwsim::ops::ScatterReduction::Add;
  if (r == "mul") return hwsim::ops::ScatterReduction::Mul;
  throw UnsupportedNode(node.op_type() + " with reduction '" + r + "' (none, add, mul)");
}

// ScatterElements (and Scatter, its opset-9 name): hwsim's ScatterElements
// codelet on one tile (an out-of-range index drops its update).
void lowerScatterElements(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor data = ctx.device(node.input(0));
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", 0), data.rank(), nodeLabel(node));
  const hwsim::Tensor y = hwsim::ops::scatterElements(ctx.graph(), ctx.main(), data, ctx.device(node.input(1)),
                                                      ctx.device(node.input(2)), axis, scatterReduction(node),
                                                      node.output(0));
  ctx.setDevice(node.output(0), y.reshape(data.shape()), ctx.value(node.input(0)).type);
}

// ScatterND: data viewed as rows [P, rest...]; each index tuple's row number
// (as GatherND's) repeated over the row's elements is a ScatterElements along
// axis 0 of the updates viewed as [tuples, rest].
void lowerScatterND(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor data = ctx.device(node.input(0));
  const hwsim::Tensor indices = ctx.device(node.input(1));
  const IndexTuples t = indexTuples(node, data.shape(), indices, 0);
  const hwsim::Tensor updates = ctx.device(node.input(2));
  if (updates.numElements() != t.tuples * t.rest) {
    throw Error(ErrorCode::CorruptModel, "{}: updates {} for indices {} and data {}", nodeLabel(node),
                toString(toDims(updates.shape())), toString(toDims(indices.shape())), toString(toDims(data.shape())));
  }
  const hwsim::Tensor row = tupleRows(ctx, t, data.shape(), indices, out).reshape({t.tuples, 1});
  const hwsim::Tensor rowPerElement = materialize(ctx, broadcastView(row, {t.tuples, t.rest}), out + "/row_per_element");
  const hwsim::Tensor y = hwsim::ops::scatterElements(ctx.graph(), ctx.main(), data.reshape({t.indexed, t.rest}),
                                                      rowPerElement, updates.reshape({t.tuples, t.rest}), 0,
                                                      scatterReduction(node), out);
  ctx.setDevice(out, y.reshape(data.shape()), ctx.value(node.input(0)).type);
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
    depth = saturatingInt64(ctx.host(node.input(1)).values.at(0));
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

// ReverseSequence: along time_axis, y[t, b] = x[len_b - 1 - t, b] for
// t < len_b and x[t, b] after, as a GatherElements whose time indices
// t + (t < len_b) * (len_b - 1 - 2t) are computed on the device from the
// run-time sequence_lens.
void lowerReverseSequence(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::size_t timeAxis = normalizeAxis(attrInt(node, "time_axis", 0), x.rank(), nodeLabel(node));
  const std::size_t batchAxis = normalizeAxis(attrInt(node, "batch_axis", 1), x.rank(), nodeLabel(node));
  if (x.rank() < 2 || timeAxis == batchAxis || timeAxis > 1 || batchAxis > 1) {
    throw Error(ErrorCode::CorruptModel, "{}: time_axis {} and batch_axis {}", nodeLabel(node), timeAxis, batchAxis);
  }
  const std::size_t steps = x.dim(static_cast<unsigned>(timeAxis)), batch = x.dim(static_cast<unsigned>(batchAxis));
  hwsim::Shape timeShape(x.rank(), 1), batchShape(x.rank(), 1);
  timeShape[timeAxis] = steps;
  batchShape[batchAxis] = batch;
  HostTensor iota{::onnx::TensorProto::INT64, toDims(timeShape), {}};
  for (std::size_t t = 0; t < steps; ++t) iota.values.push_back(static_cast<double>(t));
  const std::string time = ctx.uniqueName(out + "/time"), lengths = ctx.uniqueName(out + "/lengths");
  ctx.setHost(time, std::move(iota));
  hwsim::Tensor lens = ctx.device(node.input(1));
  if (lens.elementType() != hwsim::Type::S32) lens = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", lens, lengths + "/s32", hwsim::Type::S32);
  ctx.setDevice(lengths, lens.reshape(batchShape), ::onnx::TensorProto::INT64);
  const hwsim::Tensor t = ctx.device(time), len = ctx.device(lengths);
  const hwsim::Tensor inside = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", broadcastBinary(ctx, "Less", t, len, out + "/inside"),
                                                 out + "/inside_s32", hwsim::Type::S32);
  // len - 1 - 2t: the distance from t to its mirror position.
  const hwsim::Tensor shift = broadcastBinary(ctx, "Sub", scalarBinary(ctx, "Add", len, -1.0, out + "/last"),
                                              scalarBinary(ctx, "Mul", t, 2.0, out + "/twice"), out + "/shift");
  const hwsim::Tensor index = broadcastBinary(ctx, "Add", t, broadcastBinary(ctx, "Mul", inside, shift, out + "/masked"),
                                              out + "/index");
  const hwsim::Tensor full = materialize(ctx, broadcastView(index, x.shape()), out + "/indices");
  ctx.setDevice(out, hwsim::ops::gatherElements(ctx.graph(), ctx.main(), x, full, timeAxis, out), ctx.value(node.input(0)).type);
}

}  // namespace

void registerGatherOps(OpRegistry &registry) {
  registry.add("Gather", lowerGather);
  registry.add("GatherElements", lowerGatherElements);
  registry.add("Where", lowerWhere);
  registry.add("GatherND", lowerGatherND);
  registry.add("OneHot", lowerOneHot);
  registry.add("ScatterElements", lowerScatterElements);
  registry.add("Scatter", lowerScatterElements);
  registry.add("ScatterND", lowerScatterND);
  registry.add("ReverseSequence", lowerReverseSequence);
}

}  // namespace mrt::onnx
