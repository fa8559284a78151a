// Elementwise unary operators: the codelets hwsim has, the activations
// composed from them (LeakyRelu, Elu, Selu, Celu, Clip, Softplus, Softsign,
// HardSigmoid, HardSwish, ThresholdedRelu, Shrink, Reciprocal), and the
// IsNaN/IsInf tests as comparisons.
#include <limits>

#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

LowerFn codeletOp(std::string codelet) {
  return [codelet](LoweringContext &ctx, const NodeProto &node) {
    const hwsim::Tensor x = ctx.device(node.input(0));
    ctx.setDevice(node.output(0), hwsim::ops::unary(ctx.graph(), ctx.main(), codelet, x, node.output(0)),
                  ctx.value(node.input(0)).type);
  };
}

// Lowers node.output(0) = f(x) for a composition f of device ops.
using Compose = std::function<hwsim::Tensor(LoweringContext &, const NodeProto &, const hwsim::Tensor &x,
                                            const std::string &out)>;
LowerFn composedOp(Compose f) {
  return [f](LoweringContext &ctx, const NodeProto &node) {
    const hwsim::Tensor x = ctx.device(node.input(0));
    ctx.setDevice(node.output(0), f(ctx, node, x, node.output(0)), ctx.value(node.input(0)).type);
  };
}

hwsim::Tensor unary(LoweringContext &ctx, const char *codelet, const hwsim::Tensor &x, const std::string &name) {
  return hwsim::ops::unary(ctx.graph(), ctx.main(), codelet, x, name);
}

// alpha * x + beta, skipping the identity parts.
hwsim::Tensor affine(LoweringContext &ctx, const hwsim::Tensor &x, double alpha, double beta, const std::string &name) {
  hwsim::Tensor r = x;
  if (alpha != 1.0) r = scalarBinary(ctx, "Mul", r, alpha, name + "/scale");
  if (beta != 0.0) r = scalarBinary(ctx, "Add", r, beta, name + "/shift");
  return r;
}

// max(0, min(1, alpha * x + beta)).
hwsim::Tensor hardSigmoid(LoweringContext &ctx, const hwsim::Tensor &x, double alpha, double beta,
                          const std::string &name) {
  const hwsim::Tensor y = affine(ctx, x, alpha, beta, name + "/affine");
  return scalarBinary(ctx, "Min", scalarBinary(ctx, "Max", y, 0.0, name + "/lo"), 1.0, name);
}

// alpha * (exp(min(x, 0) / scale) - 1): the negative part of Elu, Selu, Celu.
hwsim::Tensor expNegativePart(LoweringContext &ctx, const hwsim::Tensor &x, double alpha, double scale,
                              const std::string &name) {
  const hwsim::Tensor negative = affine(ctx, scalarBinary(ctx, "Min", x, 0.0, name + "/neg"), 1.0 / scale, 0.0,
                                        name + "/over_alpha");
  return affine(ctx, unary(ctx, "Exp", negative, name + "/exp"), alpha, -alpha, name + "/expm1");
}

// relu(x) + alpha * (exp(min(x, 0) / scale) - 1), times gamma.
hwsim::Tensor exponentialLinear(LoweringContext &ctx, const hwsim::Tensor &x, double alpha, double scale, double gamma,
                                const std::string &name) {
  const hwsim::Tensor sum = broadcastBinary(ctx, "Add", unary(ctx, "Relu", x, name + "/relu"),
                                            expNegativePart(ctx, x, alpha, scale, name), name + "/sum");
  return affine(ctx, sum, gamma, 0.0, name);
}

// x bounded by one of Clip's bounds (codelet Max for min, Min for max): an
// attribute before opset 11, an optional input after, constant or computed
// at run time; x itself when the bound is absent.
hwsim::Tensor clipBound(LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x, int input,
                        const char *attr, const char *codelet, const std::string &out) {
  const std::string name = out + "/" + attr;
  if (findAttribute(node, attr)) return scalarBinary(ctx, codelet, x, attrFloat(node, attr, 0.0f), name);
  const std::string &bound = inputName(node, input);
  if (bound.empty()) return x;
  if (numElements(ctx.value(bound).dims()) != 1) throw UnsupportedNode(std::string("Clip ") + attr + " must be one element");
  if (ctx.isHost(bound)) return scalarBinary(ctx, codelet, x, ctx.host(bound).values[0], name);
  return broadcastBinary(ctx, codelet, x, ctx.device(bound).reshape({}), name);
}

// Cast (to the attribute's type) and CastLike (to the type of input 1).
void castTo(LoweringContext &ctx, const NodeProto &node, std::int32_t to) {
  const auto type = deviceType(to);
  if (!type) throw UnsupportedNode(node.op_type() + " to " + typeName(to) + ", which the device has no type for");
  const hwsim::Tensor x = ctx.device(node.input(0));
  const hwsim::Tensor r = x.elementType() == *type
                              ? x
                              : hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", x, node.output(0), *type);
  ctx.setDevice(node.output(0), r, to);
}

// IsNaN: NaN is the one value not equal to itself.
void lowerIsNaN(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  ctx.setDevice(node.output(0), broadcastBinary(ctx, "NotEqual", x, x, node.output(0)), ::onnx::TensorProto::BOOL);
}

// IsInf: x == +inf, x == -inf, or |x| == inf for both; nothing detected
// compares with NaN, which nothing equals.
void lowerIsInf(LoweringContext &ctx, const NodeProto &node) {
  const bool positive = attrInt(node, "detect_positive", 1) != 0, negative = attrInt(node, "detect_negative", 1) != 0;
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const hwsim::Tensor r =
      positive && negative ? scalarBinary(ctx, "Equal", unary(ctx, "Abs", x, out + "/abs"), kInf, out)
      : positive           ? scalarBinary(ctx, "Equal", x, kInf, out)
      : negative           ? scalarBinary(ctx, "Equal", x, -kInf, out)
                           : scalarBinary(ctx, "Equal", x, std::numeric_limits<double>::quiet_NaN(), out);
  ctx.setDevice(out, r, ::onnx::TensorProto::BOOL);
}

}  // namespace

void registerUnaryOps(OpRegistry &registry) {
  for (const char *op : {"Relu", "Neg", "Abs", "Exp", "Log", "Sqrt", "Sigmoid", "Tanh", "Not", "Erf", "Floor", "Ceil",
                         "Round", "Sign", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
                         "Atanh"}) {
    registry.add(op, codeletOp(op));
  }
  registry.add("IsNaN", lowerIsNaN);
  registry.add("IsInf", lowerIsInf);
  registry.add("Cast", [](LoweringContext &ctx, const NodeProto &node) {
    castTo(ctx, node, static_cast<std::int32_t>(attrInt(node, "to", ::onnx::TensorProto::FLOAT)));
  });
  registry.add("CastLike", [](LoweringContext &ctx, const NodeProto &node) {
    castTo(ctx, node, ctx.value(node.input(1)).type);
  });
  registry.add("Reciprocal", composedOp([](LoweringContext &ctx, const NodeProto &, const hwsim::Tensor &x,
                                           const std::string &out) { return scalarBinary(ctx, "Pow", x, -1.0, out); }));
  // LeakyRelu = relu(x) * (1 - alpha) + alpha * x, right for any alpha.
  registry.add("LeakyRelu", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                          const std::string &out) {
    const double alpha = attrFloat(node, "alpha", 0.01f);
    const hwsim::Tensor relu = affine(ctx, unary(ctx, "Relu", x, out + "/relu"), 1.0 - alpha, 0.0, out + "/pos");
    return broadcastBinary(ctx, "Add", relu, affine(ctx, x, alpha, 0.0, out + "/neg"), out);
  }));
  registry.add("Clip", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                     const std::string &out) {
    const hwsim::Tensor r = clipBound(ctx, node, clipBound(ctx, node, x, 1, "min", "Max", out), 2, "max", "Min", out);
    // Without bounds Clip is a copy of x.
    return r.regions() == x.regions() ? materialize(ctx, x, out) : r;
  }));
  // Softplus = log(exp(x) + 1).
  registry.add("Softplus", composedOp([](LoweringContext &ctx, const NodeProto &, const hwsim::Tensor &x,
                                         const std::string &out) {
    return unary(ctx, "Log", scalarBinary(ctx, "Add", unary(ctx, "Exp", x, out + "/exp"), 1.0, out + "/plus1"), out);
  }));
  registry.add("Elu", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                    const std::string &out) {
    return exponentialLinear(ctx, x, attrFloat(node, "alpha", 1.0f), 1.0, 1.0, out);
  }));
  registry.add("Selu", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                     const std::string &out) {
    return exponentialLinear(ctx, x, attrFloat(node, "alpha", 1.67326319217681884765625f), 1.0,
                             attrFloat(node, "gamma", 1.05070102214813232421875f), out);
  }));
  // Celu = max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
  registry.add("Celu", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                     const std::string &out) {
    const double alpha = attrFloat(node, "alpha", 1.0f);
    if (alpha <= 0) throw UnsupportedNode("Celu with alpha <= 0");
    return exponentialLinear(ctx, x, alpha, alpha, 1.0, out);
  }));
  // Softsign = x / (1 + |x|).
  registry.add("Softsign", composedOp([](LoweringContext &ctx, const NodeProto &, const hwsim::Tensor &x,
                                         const std::string &out) {
    return broadcastBinary(ctx, "Div", x, affine(ctx, unary(ctx, "Abs", x, out + "/abs"), 1.0, 1.0, out + "/plus1"),
                           out);
  }));
  // ThresholdedRelu = x where x > alpha, else 0.
  registry.add("ThresholdedRelu", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                                const std::string &out) {
    return broadcastBinary(ctx, "Mul", x, mask(ctx, "Greater", x, attrFloat(node, "alpha", 1.0f), out + "/above"),
                           out);
  }));
  // Shrink = x - bias where x > lambd, x + bias where x < -lambd, else 0.
  registry.add("Shrink", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                       const std::string &out) {
    const double lambd = attrFloat(node, "lambd", 0.5f), bias = attrFloat(node, "bias", 0.0f);
    const hwsim::Tensor above = broadcastBinary(ctx, "Mul", affine(ctx, x, 1.0, -bias, out + "/minus_bias"),
                                                mask(ctx, "Greater", x, lambd, out + "/above"), out + "/high");
    const hwsim::Tensor below = broadcastBinary(ctx, "Mul", affine(ctx, x, 1.0, bias, out + "/plus_bias"),
                                                mask(ctx, "Less", x, -lambd, out + "/below"), out + "/low");
    return broadcastBinary(ctx, "Add", above, below, out);
  }));
  registry.add("HardSigmoid", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                            const std::string &out) {
    return hardSigmoid(ctx, x, attrFloat(node, "alpha", 0.2f), attrFloat(node, "beta", 0.5f), out);
  }));
  // HardSwish = x * HardSigmoid(x) with alpha 1/6, beta 0.5.
  registry.add("HardSwish", composedOp([](LoweringContext &ctx, const NodeProto &, const hwsim::Tensor &x,
                                          const std::string &out) {
    return broadcastBinary(ctx, "Mul", x, hardSigmoid(ctx, x, 1.0 / 6.0, 0.5, out + "/gate"), out);
  }));
}

}  // namespace mrt::onnx
