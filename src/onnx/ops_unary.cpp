// Elementwise unary operators: the codelets hwsim has, and the activations
// composed from them (LeakyRelu, Clip, Softplus, HardSigmoid, Reciprocal).
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

// Clip's bounds: attributes before opset 11, optional constant inputs after.
double clipBound(LoweringContext &ctx, const NodeProto &node, int input, const char *attr, double fallback) {
  if (findAttribute(node, attr)) return attrFloat(node, attr, static_cast<float>(fallback));
  const std::string &name = inputName(node, input);
  if (name.empty()) return fallback;
  const HostTensor &t = ctx.host(name);
  if (t.numElements() != 1) throw UnsupportedNode(std::string("Clip ") + attr + " must be one element");
  return t.values[0];
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

}  // namespace

void registerUnaryOps(OpRegistry &registry) {
  for (const char *op : {"Relu", "Neg", "Abs", "Exp", "Log", "Sqrt", "Sigmoid", "Tanh", "Not"}) {
    registry.add(op, codeletOp(op));
  }
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
    const double lo = clipBound(ctx, node, 1, "min", -std::numeric_limits<double>::infinity());
    const double hi = clipBound(ctx, node, 2, "max", std::numeric_limits<double>::infinity());
    hwsim::Tensor r = x;
    if (lo > -std::numeric_limits<double>::infinity()) r = scalarBinary(ctx, "Max", r, lo, out + "/min");
    if (hi < std::numeric_limits<double>::infinity()) r = scalarBinary(ctx, "Min", r, hi, out + "/max");
    return r.valid() && (lo > -std::numeric_limits<double>::infinity() || hi < std::numeric_limits<double>::infinity())
               ? r
               : materialize(ctx, x, out);
  }));
  // Softplus = log(exp(x) + 1).
  registry.add("Softplus", composedOp([](LoweringContext &ctx, const NodeProto &, const hwsim::Tensor &x,
                                         const std::string &out) {
    return unary(ctx, "Log", scalarBinary(ctx, "Add", unary(ctx, "Exp", x, out + "/exp"), 1.0, out + "/plus1"), out);
  }));
  registry.add("HardSigmoid", composedOp([](LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                                            const std::string &out) {
    const hwsim::Tensor y = affine(ctx, x, attrFloat(node, "alpha", 0.2f), attrFloat(node, "beta", 0.5f), out);
    return scalarBinary(ctx, "Min", scalarBinary(ctx, "Max", y, 0.0, out + "/lo"), 1.0, out + "/hi");
  }));
}

}  // namespace mrt::onnx
