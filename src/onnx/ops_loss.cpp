// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the NLL of
// LogSoftmax along the class axis). Picking the input at each target class is
// a multiplication by a one-hot mask (the targets compared with the class
// indices), which also carries the class weights and ignore_index:
//   W[n, c, d..] = weight[c] if target[n, d..] == c != ignore_index else 0
//   loss[n, d..] = -sum_c input[n, c, d..] * W[n, c, d..]
// reduced by none, sum, or mean (the sum divided by the sum of W).
#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using TP = ::onnx::TensorProto;

enum class LossReduction { None, Sum, Mean };

LossReduction lossReductionOf(const NodeProto &node) {
  const std::string r = attrString(node, "reduction", "mean");
  if (r == "none") return LossReduction::None;
  if (r == "sum") return LossReduction::Sum;
  if (r == "mean") return LossReduction::Mean;
  throw UnsupportedNode(node.op_type() + " with reduction '" + r + "'");
}

// W above, in the input's element type, of the input's shape [N, C, d..].
hwsim::Tensor targetWeights(LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x,
                            const std::string &name) {
  if (x.rank() < 2) throw Error(ErrorCode::CorruptModel, "{}: input of rank {} has no class axis", nodeLabel(node), x.rank());
  const auto classes = static_cast<std::int64_t>(x.dim(1));
  Dims classDims(x.rank(), 1);
  classDims[1] = classes;
  HostTensor classIndex{TP::INT64, classDims, {}};
  for (std::int64_t c = 0; c < classes; ++c) classIndex.values.push_back(static_cast<double>(c));
  const std::string classIndexName = ctx.uniqueName(name + "/class_index");
  ctx.setHost(classIndexName, std::move(classIndex));

  hwsim::Tensor target = ctx.device(node.input(1));
  hwsim::Shape withClassAxis = target.shape();
  withClassAxis.insert(withClassAxis.begin() + 1, 1);
  target = target.reshape(withClassAxis);
  const std::string targetName = ctx.uniqueName(name + "/target");
  ctx.setDevice(targetName, target, ctx.value(node.input(1)).type);

  const hwsim::Tensor isTarget = broadcastBinary(ctx, "Equal", targetName, classIndexName, name + "/one_hot");
  hwsim::Tensor w = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", isTarget, name + "/one_hot_cast", x.elementType());
  if (findAttribute(node, "ignore_index")) {
    const double ignored = static_cast<double>(attrInt(node, "ignore_index", 0));
    w = broadcastBinary(ctx, "Mul", w, mask(ctx, "NotEqual", target, ignored, name + "/kept", x.elementType()),
                        name + "/not_ignored");
  }
  const std::string &weight = inputName(node, 2);
  if (!weight.empty()) {
    const hwsim::Tensor perClass = ctx.device(weight).reshape(toShape(classDims));
    w = broadcastBinary(ctx, "Mul", w, perClass, name + "/weighted");
  }
  return w;
}

std::vector<std::size_t> allAxes(std::size_t rank) {
  std::vector<std::size_t> axes(rank);
  for (std::size_t d = 0; d < rank; ++d) axes[d] = d;
  return axes;
}

// The loss of log-probabilities `logProb` [N, C, d..] against node's targets.
hwsim::Tensor nllLoss(LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &logProb, const std::string &out) {
  const LossReduction reduction = lossReductionOf(node);
  const hwsim::Tensor w = targetWeights(ctx, node, logProb, out);
  const hwsim::Tensor picked = broadcastBinary(ctx, "Mul", logProb, w, out + "/picked");
  const hwsim::Tensor negated = hwsim::ops::unary(ctx.graph(), ctx.main(), "Neg", picked, out + "/neg");
  if (reduction == LossReduction::None) {
    hwsim::Shape shape = negated.shape();
    shape.erase(shape.begin() + 1);
    return hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceSum", negated, {1}, out).reshape(shape);
  }
  const std::vector<std::size_t> all = allAxes(negated.rank());
  const hwsim::Tensor sum = hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceSum", negated, all, out + "/sum");
  if (reduction == LossReduction::Sum) return sum.reshape({});
  const hwsim::Tensor weightSum = hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceSum", w, all, out + "/weight_sum");
  return broadcastBinary(ctx, "Div", sum, weightSum, out).reshape({});
}

void lowerNegativeLogLikelihoodLoss(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  ctx.setDevice(out, nllLoss(ctx, node, ctx.device(node.input(0)), out), ctx.value(node.input(0)).type);
}

// Outputs: the loss and, optionally, the log-probabilities.
void lowerSoftmaxCrossEntropyLoss(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor scores = ctx.device(node.input(0));
  if (scores.rank() < 2) throw Error(ErrorCode::CorruptModel, "{}: scores of rank {} have no class axis", nodeLabel(node), scores.rank());
  const hwsim::Tensor logProb = hwsim::ops::unary(ctx.graph(), ctx.main(), "Log",
                                                  softmaxAlong(ctx, scores, 1, out + "/softmax"), out + "/log_prob");
  const std::int32_t type = ctx.value(node.input(0)).type;
  ctx.setDevice(out, nllLoss(ctx, node, logProb, out), type);
  if (node.output_size() > 1 && !node.output(1).empty()) ctx.setDevice(node.output(1), logProb, type);
}

}  // namespace

void registerLossOps(OpRegistry &registry) {
  registry.add("NegativeLogLikelihoodLoss", lowerNegativeLogLikelihoodLoss);
  registry.add("SoftmaxCrossEntropyLoss", lowerSoftmaxCrossEntropyLoss);
}

}  // namespace mrt::onnx
