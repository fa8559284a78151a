// Normalizations: LayerNormalization (trailing axes), InstanceNormalization
// (the spatial axes of each image and channel), MeanVarianceNormalization
// (any axes) and LRN (across channels). Mean and variance are reductions
// over the normalized axes kept as 1s, the rest broadcasting elementwise
// work; LRN's sum over a window of channels is a multiply by a band matrix.
#include <numeric>

#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// x - mean and the (population) variance over `axes`, mean and variance
// shaped like x with 1s along the axes.
struct Moments {
  hwsim::Tensor mean, centred, variance;
};

Moments momentsOver(LoweringContext &ctx, const hwsim::Tensor &x, const std::vector<std::size_t> &axes,
                    const std::string &name) {
  hwsim::Shape kept = x.shape();
  for (const auto a : axes) kept[a] = 1;
  auto mean = [&](const hwsim::Tensor &t, const std::string &n) {
    return hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceMean", t, axes, n).reshape(kept);
  };
  Moments m;
  m.mean = mean(x, name + "/mean");
  m.centred = broadcastBinary(ctx, "Sub", x, m.mean, name + "/centred");
  m.variance = mean(broadcastBinary(ctx, "Mul", m.centred, m.centred, name + "/square"), name + "/variance");
  return m;
}

// (variance + epsilon)^-1/2.
hwsim::Tensor inverseStdDev(LoweringContext &ctx, const Moments &m, double epsilon, const std::string &name) {
  return scalarBinary(ctx, "Pow", scalarBinary(ctx, "Add", m.variance, epsilon, name + "/plus_epsilon"), -0.5,
                      name + "/inv_std_dev");
}

void lowerLayerNormalization(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", -1), x.rank(), nodeLabel(node));
  std::vector<std::size_t> axes(x.rank() - axis);
  std::iota(axes.begin(), axes.end(), axis);
  const Moments m = momentsOver(ctx, x, axes, out);
  const hwsim::Tensor invStdDev = inverseStdDev(ctx, m, attrFloat(node, "epsilon", 1e-5f), out);
  hwsim::Tensor y = broadcastBinary(ctx, "Mul", m.centred, invStdDev, out + "/normalized");
  y = broadcastBinary(ctx, "Mul", y, ctx.device(node.input(1)), out + "/scaled");
  if (!inputName(node, 2).empty()) y = broadcastBinary(ctx, "Add", y, ctx.device(node.input(2)), out);
  ctx.setDevice(out, y, type);
  // The optional Mean and InvStdDev outputs keep x's rank, 1 along the normalized axes.
  if (node.output_size() > 1 && !node.output(1).empty()) ctx.setDevice(node.output(1), m.mean, type);
  if (node.output_size() > 2 && !node.output(2).empty()) ctx.setDevice(node.output(2), invStdDev, type);
}

// y = scale * (x - mean) / sqrt(variance + epsilon) + B, mean and variance
// per image and channel, scale and B per channel.
void lowerInstanceNormalization(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  if (x.rank() < 3) throw Error(ErrorCode::CorruptModel, "{}: input of rank {} has no spatial dimensions", nodeLabel(node), x.rank());
  std::vector<std::size_t> axes(x.rank() - 2);
  std::iota(axes.begin(), axes.end(), 2);
  const Moments m = momentsOver(ctx, x, axes, out);
  hwsim::Shape channels(x.rank() - 1, 1);
  channels[0] = x.dim(1);
  const hwsim::Tensor y = broadcastBinary(ctx, "Mul", m.centred, inverseStdDev(ctx, m, attrFloat(node, "epsilon", 1e-5f), out),
                                          out + "/normalized");
  const hwsim::Tensor scaled = broadcastBinary(ctx, "Mul", y, ctx.device(node.input(1)).reshape(channels), out + "/scaled");
  ctx.setDevice(out, broadcastBinary(ctx, "Add", scaled, ctx.device(node.input(2)).reshape(channels), out), type);
}

// (x - mean) / (sqrt(variance) + 1e-9) over axes (default 0, 2, 3), as the
// spec's function body computes it.
void lowerMeanVarianceNormalization(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  std::vector<std::size_t> axes;
  for (const auto a : attrInts(node, "axes").value_or(std::vector<std::int64_t>{0, 2, 3})) {
    axes.push_back(normalizeAxis(a, x.rank(), nodeLabel(node)));
  }
  const Moments m = momentsOver(ctx, x, axes, out);
  const hwsim::Tensor stdDev = hwsim::ops::unary(ctx.graph(), ctx.main(), "Sqrt", m.variance, out + "/std_dev");
  const hwsim::Tensor divisor = scalarBinary(ctx, "Add", stdDev, 1e-9, out + "/divisor");
  ctx.setDevice(out, broadcastBinary(ctx, "Div", m.centred, divisor, out), ctx.value(node.input(0)).type);
}

// LRN: y = x / (bias + alpha / size * sum of x^2 over the channels
// [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)])^beta.
void lowerLRN(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  const std::int64_t size = attrInt(node, "size", 0);
  if (x.rank() < 3 || size <= 0) {
    throw Error(ErrorCode::CorruptModel, "{}: size {} for an input of rank {}", nodeLabel(node), size, x.rank());
  }
  const auto c = static_cast<std::int64_t>(x.dim(1));
  const std::int64_t before = (size - 1) / 2, after = size - 1 - before;
  HostTensor band{type, {c, c}, std::vector<double>(static_cast<std::size_t>(c * c), 0.0)};
  for (std::int64_t i = 0; i < c; ++i) {  // input channel i counts towards outputs i - after .. i + before
    for (std::int64_t j = std::max<std::int64_t>(0, i - after); j <= std::min(c - 1, i + before); ++j) {
      band.values[static_cast<std::size_t>(i * c + j)] = 1.0;
    }
  }
  const std::string bandName = ctx.uniqueName(out + "/band");
  ctx.setHost(bandName, std::move(band));
  const hwsim::Tensor square = broadcastBinary(ctx, "Mul", x, x, out + "/square");
  const hwsim::Tensor sum = mixAlong(ctx, square, 1, bandName, out + "/window_sum");
  const double alpha = attrFloat(node, "alpha", 1e-4f), beta = attrFloat(node, "beta", 0.75f);
  const hwsim::Tensor base = scalarBinary(ctx, "Add", scalarBinary(ctx, "Mul", sum, alpha / static_cast<double>(size), out + "/scaled"),
                                          attrFloat(node, "bias", 1.0f), out + "/base");
  const hwsim::Tensor divisor = scalarBinary(ctx, "Pow", base, beta, out + "/divisor");
  ctx.setDevice(out, broadcastBinary(ctx, "Div", x, divisor, out), type);
}

}  // namespace

void registerNormOps(OpRegistry &registry) {
  registry.add("LayerNormalization", lowerLayerNormalization);
  registry.add("InstanceNormalization", lowerInstanceNormalization);
  registry.add("MeanVarianceNormalization", lowerMeanVarianceNormalization);
  registry.add("LRN", lowerLRN);
}

}  // namespace mrt::onnx
