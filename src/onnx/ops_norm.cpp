// Normalizations over trailing axes: LayerNormalization. The trailing axes
// are flattened into one row per outer index; mean and variance are row
// reductions, the rest is broadcasting elementwise work.
#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

void lowerLayerNormalization(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", -1), x.rank(), nodeLabel(node));
  const double epsilon = attrFloat(node, "epsilon", 1e-5f);
  const hwsim::Shape outer(x.shape().begin(), x.shape().begin() + static_cast<std::ptrdiff_t>(axis));
  const hwsim::Shape inner(x.shape().begin() + static_cast<std::ptrdiff_t>(axis), x.shape().end());
  const std::size_t rows = hwsim::numElementsOf(outer), width = hwsim::numElementsOf(inner);
  const hwsim::Tensor x2 = materialize(ctx, x, out + "/x").reshape({rows, width});

  auto rowMean = [&](const hwsim::Tensor &t, const std::string &name) {
    return hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceMean", t, {1}, name).reshape({rows, 1});
  };
  const hwsim::Tensor mean = rowMean(x2, out + "/mean");
  const hwsim::Tensor centred = broadcastBinary(ctx, "Sub", x2, mean, out + "/centred");
  const hwsim::Tensor variance =
      rowMean(broadcastBinary(ctx, "Mul", centred, centred, out + "/square"), out + "/variance");
  const hwsim::Tensor invStdDev =
      scalarBinary(ctx, "Pow", scalarBinary(ctx, "Add", variance, epsilon, out + "/plus_epsilon"), -0.5,
                   out + "/inv_std_dev");
  hwsim::Tensor y = broadcastBinary(ctx, "Mul", centred, invStdDev, out + "/normalized").reshape(x.shape());
  y = broadcastBinary(ctx, "Mul", y, ctx.device(node.input(1)), out + "/scaled");
  if (!inputName(node, 2).empty()) y = broadcastBinary(ctx, "Add", y, ctx.device(node.input(2)), out);
  ctx.setDevice(out, y, type);

  // The optional Mean and InvStdDev outputs keep x's rank, 1 along the
  // normalized axes.
  hwsim::Shape statsShape = outer;
  statsShape.resize(x.rank(), 1);
  if (node.output_size() > 1 && !node.output(1).empty()) ctx.setDevice(node.output(1), mean.reshape(statsShape), type);
  if (node.output_size() > 2 && !node.output(2).empty()) {
    ctx.setDevice(node.output(2), invStdDev.reshape(statsShape), type);
  }
}

}  // namespace

void registerNormOps(OpRegistry &registry) { registry.add("LayerNormalization", lowerLayerNormalization); }

}  // namespace mrt::onnx
