// Compress and NonZero: which elements they keep, and so how many, depends
// on the values. Their output shape is the declared one (or counted on the
// host from a constant condition), and the kept positions are found on the
// device: each kept element's place among them is a prefix sum, and a
// scatter of positions by place gives the list (DeviceMath::keptPositions).
#include "onnx/device_math.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// How many elements the node keeps along the output's dimension `dim`: the
// nonzero values of input i when it is a constant, else the declared shape.
std::size_t keptCount(const LoweringContext &ctx, const NodeProto &node, int i, std::size_t dim, const std::string &what) {
  std::size_t count = 0;
  if (ctx.isHost(node.input(i))) {
    for (const double v : ctx.host(node.input(i)).values) count += v != 0 ? 1 : 0;
  } else {
    const Dims out = declaredOutputDims(ctx, node, 0, what);
    if (dim >= out.size()) throw Error(ErrorCode::CorruptModel, "{}: declared output shape {}", nodeLabel(node), toString(out));
    count = static_cast<std::size_t>(out[dim]);
  }
  if (count == 0) throw UnsupportedNode("a " + node.op_type() + " keeping nothing (tensors with no elements)");
  return count;
}

// 1 where t is nonzero, else 0, as F32.
hwsim::Tensor nonzero(DeviceMath &m, const hwsim::Tensor &t) {
  return t.elementType() == hwsim::Type::BOOL ? m.cast(t, hwsim::Type::F32) : m.test("NotEqual", t, 0.0, hwsim::Type::F32);
}

// Compress: the slices along axis (the flattened input without one) whose condition is true.
void lowerCompress(LoweringContext &ctx, const NodeProto &node) {
  hwsim::Tensor x = ctx.device(node.input(0));
  std::size_t axis = 0;
  if (findAttribute(node, "axis")) axis = normalizeAxis(attrInt(node, "axis", 0), x.rank(), nodeLabel(node));
  else x = x.reshape({x.numElements()});
  DeviceMath m(ctx, node.output(0));
  const hwsim::Tensor condition = ctx.device(node.input(1));
  const std::size_t length = x.dim(static_cast<unsigned>(axis));
  if (condition.rank() != 1 || condition.numElements() > length) {
    throw Error(ErrorCode::CorruptModel, "{}: condition {} for a dimension of {}", nodeLabel(node),
                toString(toDims(condition.shape())), length);
  }
  const std::size_t kept = keptCount(ctx, node, 1, findAttribute(node, "axis") ? axis : 0, "the number of elements Compress keeps");
  ctx.setDevice(node.output(0), m.take(x, m.keptPositions(nonzero(m, condition), kept), axis), ctx.value(node.input(0)).type);
}

// NonZero: [rank, K] coordinates of the nonzero elements in row-major order.
void lowerNonZero(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  if (x.rank() == 0) throw UnsupportedNode("NonZero of a scalar (a [0, K] result: tensors with no elements)");
  const std::size_t kept = keptCount(ctx, node, 0, 1, "the number of nonzero elements");
  DeviceMath m(ctx, node.output(0));
  const hwsim::Tensor flat = m.keptPositions(nonzero(m, x.reshape({x.numElements()})), kept);
  std::vector<hwsim::Tensor> rows;
  std::size_t stride = x.numElements();
  for (std::size_t d = 0; d < x.rank(); ++d) {
    const std::size_t dim = x.dim(static_cast<unsigned>(d));
    stride /= dim;
    rows.push_back(m.op("Mod", m.op("Div", flat, static_cast<double>(stride)), static_cast<double>(dim)).reshape({1, kept}));
  }
  ctx.setDevice(node.output(0), m.materialized(hwsim::concat(rows, 0)), ::onnx::TensorProto::INT64);
}

}  // namespace

void registerSelectOps(OpRegistry &registry) {
  registry.add("Compress", lowerCompress);
  registry.add("NonZero", lowerNonZero);
}

}  // namespace mrt::onnx
