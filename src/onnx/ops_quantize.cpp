// Linear quantization: QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear, composed of elementwise codelets (Round halves to
// even, as the spec's saturate(round(x / scale) + zero_point) does).
// Per-axis scales and zero points (opset 13's axis) broadcast along that axis.
#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using TP = ::onnx::TensorProto;

// The value `name` (a scalar, or 1-D along `axis` of a rank-`rank` tensor)
// as a device tensor that broadcasts against that tensor.
hwsim::Tensor alongAxis(LoweringContext &ctx, const NodeProto &node, const std::string &name, std::size_t rank) {
  const hwsim::Tensor t = ctx.device(name);
  if (t.numElements() == 1) return t.reshape({});
  if (t.rank() != 1) throw Error(ErrorCode::CorruptModel, "{}: '{}' is neither a scalar nor 1-D", nodeLabel(node), name);
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", 1), rank, nodeLabel(node));
  hwsim::Shape shape(rank - axis, 1);
  shape[0] = t.dim(0);
  return t.reshape(shape);
}

// The [lowest, highest] of a quantized type.
std::pair<double, double> quantizedRange(std::int32_t type, const NodeProto &node) {
  if (type == TP::UINT8) return {0, 255};
  if (type == TP::INT8) return {-128, 127};
  throw UnsupportedNode(node.op_type() + " to " + typeName(type) + " (UINT8 and INT8 only)");
}

// saturate(round(x / scale) + zeroPoint) as `type` (zeroPoint may be absent).
hwsim::Tensor quantize(LoweringContext &ctx, const hwsim::Tensor &x, const hwsim::Tensor &scale,
                       const std::optional<hwsim::Tensor> &zeroPoint, std::int32_t type, const NodeProto &node,
                       const std::string &name) {
  const auto [lowest, highest] = quantizedRange(type, node);
  hwsim::Tensor y = broadcastBinary(ctx, "Div", x, scale, name + "/scaled");
  y = hwsim::ops::unary(ctx.graph(), ctx.main(), "Round", y, name + "/rounded");
  if (zeroPoint) {
    const hwsim::Tensor zp = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", *zeroPoint, name + "/zero_point",
                                               y.elementType());
    y = broadcastBinary(ctx, "Add", y, zp, name + "/shifted");
  }
  y = scalarBinary(ctx, "Max", scalarBinary(ctx, "Min", y, highest, name + "/high"), lowest, name + "/low");
  return hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", y, name, *deviceType(type));
}

void lowerQuantizeLinear(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::string &zpName = inputName(node, 2);
  const std::int32_t type = zpName.empty() ? TP::UINT8 : ctx.value(zpName).type;
  std::optional<hwsim::Tensor> zeroPoint;
  if (!zpName.empty()) zeroPoint = alongAxis(ctx, node, zpName, x.rank());
  ctx.setDevice(out, quantize(ctx, x, alongAxis(ctx, node, node.input(1), x.rank()), zeroPoint, type, node, out), type);
}

// (x - zero_point) * scale, in the scale's type.
void lowerDequantizeLinear(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const hwsim::Tensor scale = alongAxis(ctx, node, node.input(1), x.rank());
  hwsim::Tensor y = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", x, out + "/x", scale.elementType());
  if (const std::string &zpName = inputName(node, 2); !zpName.empty()) {
    const hwsim::Tensor zp = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", alongAxis(ctx, node, zpName, x.rank()),
                                               out + "/zero_point", scale.elementType());
    y = broadcastBinary(ctx, "Sub", y, zp, out + "/centred");
  }
  ctx.setDevice(out, broadcastBinary(ctx, "Mul", y, scale, out), ctx.value(node.input(1)).type);
}

// scale = (max(0, max x) - min(0, min x)) / 255, zero_point =
// saturate(round(-min(0, min x) / scale)), y = QuantizeLinear(x, scale, zero_point) as UINT8.
void lowerDynamicQuantizeLinear(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  std::vector<std::size_t> all(x.rank());
  for (std::size_t d = 0; d < all.size(); ++d) all[d] = d;
  auto extreme = [&](const char *codelet, const char *clamp, const std::string &name) {
    const hwsim::Tensor r = hwsim::ops::reduce(ctx.graph(), ctx.main(), codelet, x, all, name).reshape({});
    return scalarBinary(ctx, clamp, r, 0.0, name + "/with_zero");
  };
  const hwsim::Tensor high = extreme("ReduceMax", "Max", out + "/max"), low = extreme("ReduceMin", "Min", out + "/min");
  const hwsim::Tensor scale = scalarBinary(ctx, "Div", broadcastBinary(ctx, "Sub", high, low, out + "/span"), 255.0,
                                           out + "/scale");
  const hwsim::Tensor negativeLow = scalarBinary(ctx, "Mul", low, -1.0, out + "/negative_min");
  const hwsim::Tensor zeroPoint = quantize(ctx, negativeLow, scale, std::nullopt, TP::UINT8, node, out + "/zero_point");
  ctx.setDevice(out, quantize(ctx, x, scale, zeroPoint, TP::UINT8, node, out), TP::UINT8);
  if (node.output_size() > 1 && !node.output(1).empty()) ctx.setDevice(node.output(1), scale.reshape({}), TP::FLOAT);
  if (node.output_size() > 2 && !node.output(2).empty()) ctx.setDevice(node.output(2), zeroPoint.reshape({}), TP::UINT8);
}

}  // namespace

void registerQuantizeOps(OpRegistry &registry) {
  registry.add("QuantizeLinear", lowerQuantizeLinear);
  registry.add("DequantizeLinear", lowerDequantizeLinear);
  registry.add("DynamicQuantizeLinear", lowerDynamicQuantizeLinear);
}

}  // namespace mrt::onnx
