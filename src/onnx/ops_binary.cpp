// Elementwise binary operators with NumPy broadcasting (device_ops.hpp),
// Mod, the variadic Sum/Mean/Max/Min, Xor and BitShift built from them, and
// Trilu (x times a triangular mask).
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

// Pow whose run-time exponent has another type than the base (ONNX allows
// it; the result has the base's type): computed in the floating type of the
// two, then cast to the base's type.
void lowerPow(LoweringContext &ctx, const NodeProto &node) {
  const std::int32_t type = ctx.value(node.input(0)).type;
  if (ctx.value(node.input(1)).type == type || ctx.isHost(node.input(1))) return binaryOp("Pow")(ctx, node);
  const std::string &out = node.output(0);
  const hwsim::Tensor base = ctx.device(node.input(0)), exponent = ctx.device(node.input(1));
  const hwsim::Type work = hwsim::isFloatingPoint(base.elementType()) || !hwsim::isFloatingPoint(exponent.elementType())
                               ? base.elementType()
                               : exponent.elementType();
  auto as = [&](const hwsim::Tensor &t, hwsim::Type to, const std::string &name) {
    return t.elementType() == to ? t : hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", t, name, to);
  };
  const hwsim::Tensor power =
      broadcastBinary(ctx, "Pow", as(base, work, out + "/base"), as(exponent, work, out + "/exponent"), out + "/pow");
  ctx.setDevice(out, as(power, base.elementType(), out), type);
}

// Mod: fmod 0 takes the divisor's sign (Python's %), fmod 1 the dividend's
// (C's fmod, which ONNX requires for floats).
void lowerMod(LoweringContext &ctx, const NodeProto &node) {
  const std::int64_t fmod = attrInt(node, "fmod", 0);
  if (fmod != 0 && fmod != 1) throw UnsupportedNode("Mod with fmod " + std::to_string(fmod));
  binaryOp(fmod == 1 ? "Fmod" : "Mod")(ctx, node);
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

// Xor of booleans: a != b, with Equal's broadcasting.
void lowerXor(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor equal = broadcastBinary(ctx, "Equal", node.input(0), node.input(1), out + "/equal");
  ctx.setDevice(out, hwsim::ops::unary(ctx.graph(), ctx.main(), "Not", equal, out), TP::BOOL);
}

// Trilu keeps the elements on and above (upper) or below (lower) the k-th
// diagonal of the last two dimensions: x times the mask (j - i) - k >= 0
// (upper) or <= 0 (lower), with j - i a host constant and k a constant or
// a run-time scalar.
void lowerTrilu(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  if (x.rank() < 2) throw UnsupportedNode("Trilu of a tensor of rank < 2");
  const auto rows = static_cast<std::int64_t>(x.dim(static_cast<unsigned>(x.rank() - 2)));
  const auto cols = static_cast<std::int64_t>(x.dim(static_cast<unsigned>(x.rank() - 1)));
  HostTensor offset{TP::INT64, {rows, cols}, {}};
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) offset.values.push_back(static_cast<double>(j - i));
  }
  const std::string offsetName = ctx.uniqueName(out + "/offset");
  ctx.setHost(offsetName, std::move(offset));
  std::string k = inputName(node, 1);
  if (k.empty()) {
    k = ctx.uniqueName(out + "/k");
    ctx.setHost(k, HostTensor{TP::INT64, {}, {0.0}});
  }
  const hwsim::Tensor fromDiagonal = broadcastBinary(ctx, "Sub", offsetName, k, out + "/from_diagonal");
  const bool upper = attrInt(node, "upper", 1) != 0;
  const hwsim::Tensor keep =
      mask(ctx, upper ? "GreaterEqual" : "LessEqual", fromDiagonal, 0.0, out + "/mask", x.elementType());
  ctx.setDevice(out, broadcastBinary(ctx, "Mul", x, keep, out), ctx.value(node.input(0)).type);
}

// BitShift of unsigned integers: x * 2^y (LEFT, wrapping to the type) or
// x / 2^y (RIGHT, the integer division truncating), 2^y by the Pow codelet;
// shift amounts must stay below the type's width.
void lowerBitShift(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const std::int32_t type = ctx.value(node.input(0)).type;
  if (type != TP::UINT8 && type != TP::UINT16 && type != TP::UINT32 && type != TP::UINT64) {
    throw Error(ErrorCode::CorruptModel, "{}: BitShift of {}", nodeLabel(node), typeName(type));
  }
  const std::string direction = attrString(node, "direction", "");
  if (direction != "LEFT" && direction != "RIGHT") {
    throw Error(ErrorCode::CorruptModel, "{}: direction '{}' (LEFT or RIGHT)", nodeLabel(node), direction);
  }
  const std::string two = ctx.uniqueName(out + "/two"), power = ctx.uniqueName(out + "/power");
  ctx.setHost(two, HostTensor{type, {}, {2.0}});
  ctx.setDevice(power, broadcastBinary(ctx, "Pow", two, node.input(1), power), type);
  ctx.setDevice(out, broadcastBinary(ctx, direction == "LEFT" ? "Mul" : "Div", node.input(0), power, out), type);
}

}  // namespace

void registerBinaryOps(OpRegistry &registry) {
  for (const char *op : {"Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "And", "Or"}) {
    registry.add(op, binaryOp(op));
  }
  registry.add("LessOrEqual", binaryOp("LessEqual"));
  registry.add("GreaterOrEqual", binaryOp("GreaterEqual"));
  registry.add("Sum", variadicOp("Add", false));
  registry.add("Mean", variadicOp("Add", true));
  registry.add("Max", variadicOp("Max", false));
  registry.add("Min", variadicOp("Min", false));
  registry.add("Pow", lowerPow);
  registry.add("Mod", lowerMod);
  registry.add("PRelu", lowerPRelu);
  registry.add("Trilu", lowerTrilu);
  registry.add("Xor", lowerXor);
  registry.add("BitShift", lowerBitShift);
}

}  // namespace mrt::onnx
