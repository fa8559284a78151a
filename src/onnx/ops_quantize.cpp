// Linear quantization: QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear, composed of elementwise codelets (Round halves to
// even, as the spec's saturate(round(x / scale) + zero_point) does).
// Per-axis scales and zero points (opset 13's axis) broadcast along that
// axis. The integer and quantized MatMul and Conv run the float operator on
// operands made F32 (exact while sums stay below 2^24).
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

// The integer tensor `name` as F32 minus its zero point `zeroPoint` (absent:
// 0; one element: a scalar; else reshaped to `zeroPointShape` to broadcast),
// times `scale` likewise when given: the operand of a float multiply or
// convolution that equals the integer one exactly while its sums stay below
// 2^24 (the F32 mantissa).
std::string asFloat(LoweringContext &ctx, const std::string &name, const std::string &zeroPoint,
                    const std::string &scale, const hwsim::Shape &zeroPointShape, const std::string &outName) {
  auto f32 = [&](const hwsim::Tensor &t, const std::string &n) {
    return t.elementType() == hwsim::Type::F32 ? t : hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", t, ctx.uniqueName(n), hwsim::Type::F32);
  };
  auto operand = [&](const std::string &v) {
    const hwsim::Tensor t = ctx.device(v);
    return f32(t.numElements() == 1 ? t.reshape({}) : t.reshape(zeroPointShape), v + "/f32");
  };
  hwsim::Tensor y = f32(ctx.device(name), outName + "/f32");
  if (!zeroPoint.empty()) y = broadcastBinary(ctx, "Sub", y, operand(zeroPoint), outName + "/centred");
  if (!scale.empty()) y = broadcastBinary(ctx, "Mul", y, operand(scale), outName + "/scaled");
  const std::string out = ctx.uniqueName(outName);
  ctx.setDevice(out, y, TP::FLOAT);
  return out;
}

// Lowers the float operator opType of `inputs` into a new value named after
// `output`, with node's attributes (those the integer operator shares with it).
std::string lowerFloatOp(LoweringContext &ctx, const NodeProto &node, const std::string &opType,
                         const std::vector<std::string> &inputs, const std::string &output) {
  NodeProto op;
  op.set_op_type(opType);
  op.set_name(nodeLabel(node));
  for (const auto &i : inputs) op.add_input(i);
  const std::string out = ctx.uniqueName(output);
  op.add_output(out);
  for (const auto &a : node.attribute()) *op.add_attribute() = a;
  (*opRegistry().find(opType))(ctx, op);
  return out;
}

// MatMulInteger: (A - a_zero_point) x (B - b_zero_point) as INT32 (a per-row
// a_zero_point, a per-column b_zero_point), multiplied in F32.
void lowerMatMulInteger(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const Dims a = ctx.value(node.input(0)).dims();
  hwsim::Shape rows = {a.size() < 2 ? 1 : static_cast<std::size_t>(a[a.size() - 2]), 1};
  const std::string af = asFloat(ctx, node.input(0), inputName(node, 2), "", rows, out + "/a");
  const Dims b = ctx.value(node.input(1)).dims();
  const hwsim::Shape columns = {b.empty() ? 1 : static_cast<std::size_t>(b.back())};
  const std::string bf = asFloat(ctx, node.input(1), inputName(node, 3), "", columns, out + "/b");
  const std::string y = lowerFloatOp(ctx, node, "MatMul", {af, bf}, out + "/product");
  ctx.setDevice(out, hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", ctx.device(y), out, hwsim::Type::S32), TP::INT32);
}

// ConvInteger: Conv of (x - x_zero_point) and (w - w_zero_point, per output
// channel) as INT32, convolved in F32.
void lowerConvInteger(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const Dims w = ctx.value(node.input(1)).dims();
  hwsim::Shape channels(w.size(), 1);
  if (!w.empty()) channels[0] = static_cast<std::size_t>(w[0]);
  const std::string xf = asFloat(ctx, node.input(0), inputName(node, 2), "", {}, out + "/x");
  const std::string wf = asFloat(ctx, node.input(1), inputName(node, 3), "", channels, out + "/w");
  const std::string y = lowerFloatOp(ctx, node, "Conv", {xf, wf}, out + "/conv");
  ctx.setDevice(out, hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", ctx.device(y), out, hwsim::Type::S32), TP::INT32);
}

// QLinearMatMul / QLinearConv: the float operator of the dequantized
// operands (plus QLinearConv's INT32 bias times x_scale * w_scale), then
// quantized with y_scale and y_zero_point.
void lowerQLinear(LoweringContext &ctx, const NodeProto &node, const std::string &opType) {
  const std::string &out = node.output(0);
  const Dims a = ctx.value(node.input(0)).dims(), b = ctx.value(node.input(3)).dims();
  const bool conv = opType == "Conv";
  hwsim::Shape aShape = conv ? hwsim::Shape{} : hwsim::Shape{a.size() < 2 ? 1 : static_cast<std::size_t>(a[a.size() - 2]), 1};
  hwsim::Shape bShape(conv ? b.size() : 1, 1);
  if (!b.empty()) bShape[0] = static_cast<std::size_t>(conv ? b[0] : b.back());
  std::vector<std::string> inputs = {asFloat(ctx, node.input(0), node.input(2), node.input(1), aShape, out + "/a"),
                                     asFloat(ctx, node.input(3), node.input(5), node.input(4), bShape, out + "/b")};
  if (conv && !inputName(node, 8).empty()) {
    // B * x_scale * w_scale, per output channel.
    const std::string bias = asFloat(ctx, node.input(8), "", node.input(1), {}, out + "/bias_x");
    inputs.push_back(asFloat(ctx, bias, "", node.input(4), {bShape[0]}, out + "/bias"));
  }
  const std::string y = lowerFloatOp(ctx, node, opType, inputs, out + "/real");
  const std::int32_t type = ctx.value(node.input(7)).type;
  const hwsim::Tensor yScale = ctx.device(node.input(6)).reshape({});
  ctx.setDevice(out, quantize(ctx, ctx.device(y), yScale, ctx.device(node.input(7)).reshape({}), type, node, out), type);
}

}  // namespace

void registerQuantizeOps(OpRegistry &registry) {
  registry.add("MatMulInteger", lowerMatMulInteger);
  registry.add("ConvInteger", lowerConvInteger);
  registry.add("QLinearMatMul", [](LoweringContext &ctx, const NodeProto &node) { lowerQLinear(ctx, node, "MatMul"); });
  registry.add("QLinearConv", [](LoweringContext &ctx, const NodeProto &node) { lowerQLinear(ctx, node, "Conv"); });
  registry.add("QuantizeLinear", lowerQuantizeLinear);
  registry.add("DequantizeLinear", lowerDequantizeLinear);
  registry.add("DynamicQuantizeLinear", lowerDynamicQuantizeLinear);
}

}  // namespace mrt::onnx
