// Elementwise binary operators with NumPy broadcasting (device_ops.hpp),
// and the variadic Sum/Mean/Max/Min built from them.
#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using TP = ::onnx::TensorProto;

// The ONNX type of a binary result: BOOL for comparisons, else the operands'.
std::int32_t resultType(const hwsim::Tensor &r, std::int32_t operandType) {
  return r.elementType() == hwsim::Type::BOOL ? static_cast<std::int32_t>(TP::BOOL) : operandType;
}

// Pow may take an exponent of another type; a constant one is converted to
// the base's type (the device codelet takes one type).
std::string coerced(LoweringContext &ctx, const std::string &name, std::int32_t type) {
  const Value &v = ctx.value(name);
  if (v.type == type || !v.host) return name;
  HostTensor t = *v.host;
  t.type = type;
  convertValues(t.values, type);
  const std::string converted = ctx.uniqueName(name + "/as_" + typeName(type));
  ctx.setHost(converted, std::move(t));
  return converted;
}

LowerFn binaryOp(std::string codelet) {
  return [codelet](LoweringContext &ctx, const NodeProto &node) {
    const std::int32_t type = ctx.value(node.input(0)).type;
    const std::string b = coerced(ctx, node.input(1), type);
    if (ctx.value(b).type != type) {
      throw UnsupportedNode(node.op_type() + " of " + typeName(type) + " and " + typeName(ctx.value(b).type) +
                            " computed at run time");
    }
    const hwsim::Tensor r = broadcastBinary(ctx, codelet, node.input(0), b, node.output(0));
    ctx.setDevice(node.output(0), r, resultType(r, type));
  };
}

// Sum/Mean/Max/Min over any number of inputs, folded left to right.
LowerFn variadicOp(std::string codelet, bool mean) {
  return [codelet, mean](LoweringContext &ctx, const NodeProto &node) {
    const std::int32_t type = ctx.value(node.input(0)).type;
    hwsim::Tensor acc = ctx.device(node.input(0));
    for (int i = 1; i < node.input_size(); ++i) {
      acc = broadcastBinary(ctx, codelet, acc, ctx.device(node.input(i)), node.output(0) + "/" + std::to_string(i));
    }
    if (mean) acc = scalarBinary(ctx, "Div", acc, node.input_size(), node.output(0) + "/mean");
    if (node.input_size() == 1) acc = materialize(ctx, acc, node.output(0));
    ctx.setDevice(node.output(0), acc, type);
  };
}

// PRelu: x < 0 ? slope * x : x = max(x, 0) + slope * min(x, 0).
void lowerPRelu(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const hwsim::Tensor pos = scalarBinary(ctx, "Max", x, 0.0, out + "/pos");
  const hwsim::Tensor neg = scalarBinary(ctx, "Min", x, 0.0, out + "/neg");
  const std::string negName = ctx.uniqueName(out + "/neg");
  ctx.setDevice(negName, neg, ctx.value(node.input(0)).type);
  const hwsim::Tensor scaled = broadcastBinary(ctx, "Mul", negName, node.input(1), out + "/scaled");
  ctx.setDevice(out, broadcastBinary(ctx, "Add", pos, scaled, out), ctx.value(node.input(0)).type);
}

}  // namespace

void registerBinaryOps(OpRegistry &registry) {
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Pow", "Equal", "Less", "Greater", "And", "Or"}) {
    registry.add(op, binaryOp(op));
  }
  registry.add("LessOrEqual", binaryOp("LessEqual"));
  registry.add("GreaterOrEqual", binaryOp("GreaterEqual"));
  registry.add("Sum", variadicOp("Add", false));
  registry.add("Mean", variadicOp("Add", true));
  registry.add("Max", variadicOp("Max", false));
  registry.add("Min", variadicOp("Min", false));
  registry.add("PRelu", lowerPRelu);
}

}  // namespace mrt::onnx
