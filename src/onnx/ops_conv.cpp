// Convolution, pooling and normalization: Conv, MaxPool, AveragePool
// (hwsim::ops::conv / pool), GlobalAveragePool/GlobalMaxPool (reductions over
// the spatial dimensions) and BatchNormalization as one per-channel scale
// and shift (computed on the host when its parameters are constants).
#include <cmath>

#include <hwsim/ops.hpp>

#include "onnx/conv.hpp"
#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// Window geometry common to Conv and the pools.
struct Window {
  std::vector<std::size_t> strides, padsBegin, padsEnd, dilations;
};

// strides/dilations/pads/auto_pad of `node` for `spatial` input dimensions and
// the (dilation-free) kernel sizes.
Window windowOf(const NodeProto &node, const hwsim::Shape &spatial, const std::vector<std::size_t> &kernel) {
  const std::size_t s = spatial.size();
  Window w;
  w.strides = nonNegative(attrInts(node, "strides").value_or(std::vector<std::int64_t>(s, 1)), node, "strides");
  w.dilations = nonNegative(attrInts(node, "dilations").value_or(std::vector<std::int64_t>(s, 1)), node, "dilations");
  const auto pads = nonNegative(attrInts(node, "pads").value_or(std::vector<std::int64_t>(2 * s, 0)), node, "pads");
  if (w.strides.size() != s || w.dilations.size() != s || pads.size() != 2 * s || kernel.size() != s) {
    throw Error(ErrorCode::CorruptModel, "{}: strides, dilations, pads or kernel do not match {} spatial dimensions",
                nodeLabel(node), s);
  }
  w.padsBegin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(s));
  w.padsEnd.assign(pads.begin() + static_cast<std::ptrdiff_t>(s), pads.end());
  const std::string autoPad = attrString(node, "auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.padsBegin.assign(s, 0);
    w.padsEnd.assign(s, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    // Output size ceil(in / stride); the odd pad goes at the end (UPPER) or the start (LOWER).
    for (std::size_t i = 0; i < s; ++i) {
      const std::size_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
      const std::size_t span = (out - 1) * w.strides[i] + (kernel[i] - 1) * w.dilations[i] + 1;
      const std::size_t total = span > spatial[i] ? span - spatial[i] : 0;
      w.padsBegin[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.padsEnd[i] = total - w.padsBegin[i];
    }
  } else if (autoPad != "NOTSET") {
    throw Error(ErrorCode::CorruptModel, "{}: unknown auto_pad '{}'", nodeLabel(node), autoPad);
  }
  return w;
}

// Adds a per-channel vector (constant or not) of shape [C] to/into y [N, C, *spatial].
hwsim::Tensor perChannel(LoweringContext &ctx, const char *codelet, const hwsim::Tensor &y, std::int32_t type,
                         const std::string &vector, const std::string &name) {
  const std::string yName = ctx.uniqueName(name + "/in");
  ctx.setDevice(yName, y, type);
  std::string v = vector;
  if (ctx.isHost(vector)) {
    // [C] -> [C, 1, ...] so it broadcasts over the spatial dimensions.
    HostTensor t = ctx.host(vector);
    t.dims.resize(y.rank() - 1, 1);
    v = ctx.uniqueName(vector + "/channels");
    ctx.setHost(v, std::move(t));
  } else {
    hwsim::Shape shape(y.rank() - 1, 1);
    shape[0] = y.dim(1);
    v = ctx.uniqueName(vector + "/channels");
    ctx.setDevice(v, ctx.device(vector).reshape(shape), type);
  }
  return broadcastBinary(ctx, codelet, yName, v, name);
}

void lowerConv(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const hwsim::Shape spatial = spatialOf(x, node);
  const Dims wDims = ctx.value(node.input(1)).dims();
  if (wDims.size() != x.rank()) throw Error(ErrorCode::CorruptModel, "{}: weights {} for input of rank {}", nodeLabel(node), toString(wDims), x.rank());
  const hwsim::Shape wShape = toShape(wDims);
  const std::vector<std::size_t> kernel(wShape.begin() + 2, wShape.end());
  if (auto k = attrInts(node, "kernel_shape"); k && nonNegative(*k, node, "kernel_shape") != kernel) {
    throw Error(ErrorCode::CorruptModel, "{}: kernel_shape {} differs from the weights {}", nodeLabel(node), toString(*k), toString(wDims));
  }
  const Window w = windowOf(node, spatial, kernel);
  const hwsim::ops::ConvParams params{w.strides, w.padsBegin, w.padsEnd, w.dilations,
                                      static_cast<std::size_t>(attrInt(node, "group", 1))};
  const std::int32_t type = ctx.value(node.input(0)).type;
  ctx.setDevice(out, convolve(ctx, x, type, node.input(1), params, inputName(node, 2), out), type);
}

LowerFn poolOp(std::string codelet) {
  return [codelet](LoweringContext &ctx, const NodeProto &node) {
    const bool indices = node.output_size() > 1 && !node.output(1).empty();
    const hwsim::Tensor x = ctx.device(node.input(0));
    const hwsim::Shape spatial = spatialOf(x, node);
    const auto kernel = nonNegative(attrInts(node, "kernel_shape").value_or(std::vector<std::int64_t>{}), node, "kernel_shape");
    const Window w = windowOf(node, spatial, kernel);
    hwsim::ops::PoolParams params{kernel, w.strides, w.padsBegin, w.padsEnd, w.dilations,
                                  attrInt(node, "count_include_pad", 0) != 0, attrInt(node, "ceil_mode", 0) != 0};
    // MaxPool of 8- and 16-bit integers (opset 12) pools them as F32, which
    // holds each exactly, and casts the maxima back.
    const hwsim::Type type = x.elementType();
    const bool narrowInteger = codelet == "MaxPool" && (type == hwsim::Type::U8 || type == hwsim::Type::S8 ||
                                                        type == hwsim::Type::U16 || type == hwsim::Type::S16);
    const std::string &out = node.output(0);
    const hwsim::Tensor in = narrowInteger ? hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", x, out + "/f32", hwsim::Type::F32) : x;
    const std::string pooledName = narrowInteger ? out + "/pooled" : out;
    hwsim::Tensor y = in.rank() == 5 ? pool3d(ctx, codelet, in, params, pooledName)
                                     : hwsim::ops::pool(ctx.graph(), ctx.main(), codelet, in, params, pooledName);
    if (indices) {
      const bool columnMajor = attrInt(node, "storage_order", 0) != 0;
      ctx.setDevice(node.output(1), maxPoolIndices(ctx, in, y, params, columnMajor, node.output(1)),
                    ::onnx::TensorProto::INT64);
    }
    if (narrowInteger) y = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", y, out, type);
    ctx.setDevice(out, y, ctx.value(node.input(0)).type);
  };
}

// GlobalAveragePool / GlobalMaxPool: a reduction over every spatial dimension, kept as 1s.
LowerFn globalPoolOp(std::string codelet) {
  return [codelet](LoweringContext &ctx, const NodeProto &node) {
    const hwsim::Tensor x = ctx.device(node.input(0));
    if (x.rank() < 3) throw Error(ErrorCode::CorruptModel, "{}: input of rank {} has no spatial dimensions", nodeLabel(node), x.rank());
    std::vector<std::size_t> axes;
    hwsim::Shape shape{x.dim(0), x.dim(1)};
    for (std::size_t d = 2; d < x.rank(); ++d) {
      axes.push_back(d);
      shape.push_back(1);
    }
    const hwsim::Tensor y = hwsim::ops::reduce(ctx.graph(), ctx.main(), codelet, x, axes, node.output(0));
    ctx.setDevice(node.output(0), y.reshape(shape), ctx.value(node.input(0)).type);
  };
}

// The per-channel s = scale / sqrt(var + eps) and t = bias - mean * s,
// named sName and tName: on the host when all four are constants, else on
// the device.
void scaleAndShift(LoweringContext &ctx, const std::string &scale, const std::string &bias, const std::string &mean,
                   const std::string &var, double eps, const std::string &sName, const std::string &tName,
                   const std::string &name) {
  const std::size_t c = numElements(ctx.value(scale).dims());
  for (const std::string *v : {&bias, &mean, &var}) {
    if (numElements(ctx.value(*v).dims()) != c) {
      throw Error(ErrorCode::CorruptModel, "{}: scale, B, mean and var differ in size", name);
    }
  }
  const std::int32_t type = ctx.value(scale).type;
  if (ctx.isHost(scale) && ctx.isHost(bias) && ctx.isHost(mean) && ctx.isHost(var)) {
    HostTensor s{type, {static_cast<std::int64_t>(c)}, std::vector<double>(c)};
    HostTensor t = s;
    for (std::size_t i = 0; i < c; ++i) {
      s.values[i] = ctx.host(scale).values[i] / std::sqrt(ctx.host(var).values[i] + eps);
      t.values[i] = ctx.host(bias).values[i] - ctx.host(mean).values[i] * s.values[i];
    }
    convertValues(s.values, s.type);
    convertValues(t.values, t.type);
    ctx.setHost(sName, std::move(s));
    ctx.setHost(tName, std::move(t));
    return;
  }
  const std::string root = ctx.uniqueName(name + "/root"), shifted = ctx.uniqueName(name + "/mean_s");
  const hwsim::Tensor varEps = scalarBinary(ctx, "Add", ctx.device(var).reshape({c}), eps, name + "/var_eps");
  ctx.setDevice(root, hwsim::ops::unary(ctx.graph(), ctx.main(), "Sqrt", varEps, root), type);
  ctx.setDevice(sName, broadcastBinary(ctx, "Div", ctx.device(scale).reshape({c}), ctx.device(root), sName), type);
  ctx.setDevice(shifted, broadcastBinary(ctx, "Mul", ctx.device(mean).reshape({c}), ctx.device(sName), shifted), type);
  ctx.setDevice(tName, broadcastBinary(ctx, "Sub", ctx.device(bias).reshape({c}), ctx.device(shifted), tName), type);
}

// Training mode: the batch's mean and (population) variance over every axis
// but the channels, and running_mean/var = input * momentum + batch * (1 - momentum).
void batchStatistics(LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x, const std::string &mean,
                     const std::string &var) {
  const std::string &out = node.output(0);
  const std::int32_t type = ctx.value(node.input(0)).type;
  std::vector<std::size_t> axes;
  hwsim::Shape kept(x.rank(), 1);
  kept[1] = x.dim(1);
  for (std::size_t d = 0; d < x.rank(); ++d) if (d != 1) axes.push_back(d);
  const hwsim::Tensor m = hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceMean", x, axes, mean).reshape({x.dim(1)});
  ctx.setDevice(mean, m, type);
  const hwsim::Tensor centred = broadcastBinary(ctx, "Sub", x, m.reshape(kept), out + "/centred");
  const hwsim::Tensor square = broadcastBinary(ctx, "Mul", centred, centred, out + "/square");
  ctx.setDevice(var, hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceMean", square, axes, var).reshape({x.dim(1)}), type);
  const double momentum = attrFloat(node, "momentum", 0.9f);
  for (int i = 1; i <= 2 && i < node.output_size(); ++i) {
    if (node.output(i).empty()) continue;
    const hwsim::Tensor old = scalarBinary(ctx, "Mul", ctx.device(node.input(2 + i)).reshape({x.dim(1)}), momentum,
                                           node.output(i) + "/old");
    const hwsim::Tensor batch = scalarBinary(ctx, "Mul", ctx.device(i == 1 ? mean : var), 1 - momentum,
                                             node.output(i) + "/batch");
    ctx.setDevice(node.output(i), broadcastBinary(ctx, "Add", old, batch, node.output(i)), type);
  }
}

// y = (x - mean) / sqrt(var + eps) * scale + bias = x * s + t per channel,
// mean and var the inputs (inference) or the batch's (training_mode 1).
void lowerBatchNorm(LoweringContext &ctx, const NodeProto &node) {
  const bool training = attrInt(node, "training_mode", 0) != 0;
  if (!training && node.output_size() > 1) throw UnsupportedNode("BatchNormalization's statistics outputs before opset 14");
  const std::string &out = node.output(0);
  const std::int32_t type = ctx.value(node.input(0)).type;
  const hwsim::Tensor x = ctx.device(node.input(0));
  if (x.rank() < 2) throw Error(ErrorCode::CorruptModel, "{}: input of rank {} has no channel dimension", nodeLabel(node), x.rank());
  std::string mean = node.input(3), var = node.input(4);
  if (training) {
    mean = ctx.uniqueName(out + "/batch_mean");
    var = ctx.uniqueName(out + "/batch_var");
    batchStatistics(ctx, node, x, mean, var);
  }
  const std::string sName = ctx.uniqueName(out + "/scale"), tName = ctx.uniqueName(out + "/shift");
  scaleAndShift(ctx, node.input(1), node.input(2), mean, var, attrFloat(node, "epsilon", 1e-5f), sName, tName,
                nodeLabel(node));
  const hwsim::Tensor scaled = perChannel(ctx, "Mul", x, type, sName, out + "/mul");
  ctx.setDevice(out, perChannel(ctx, "Add", scaled, type, tName, out), type);
}

}  // namespace

std::vector<std::size_t> nonNegative(const std::vector<std::int64_t> &values, const NodeProto &node, const char *attr) {
  std::vector<std::size_t> out;
  for (const auto v : values) {
    if (v < 0) throw Error(ErrorCode::CorruptModel, "{}: {} has the negative value {}", nodeLabel(node), attr, v);
    out.push_back(static_cast<std::size_t>(v));
  }
  return out;
}

hwsim::Shape spatialOf(const hwsim::Tensor &x, const NodeProto &node) {
  if (x.rank() < 3 || x.rank() > 5) {
    throw UnsupportedNode(node.op_type() + " of rank " + std::to_string(x.rank()) + " (1-D, 2-D and 3-D only)");
  }
  return hwsim::Shape(x.shape().begin() + 2, x.shape().end());
}

hwsim::Tensor convolve(LoweringContext &ctx, const hwsim::Tensor &x, std::int32_t type, const std::string &weights,
                       const hwsim::ops::ConvParams &params, const std::string &bias, const std::string &name) {
  if (!hwsim::isFloatingPoint(x.elementType())) throw UnsupportedNode("a convolution of " + typeName(type));
  hwsim::Tensor y;
  if (x.rank() == 5) {
    // Weights are sliced per kernel depth there, each slice convolved here.
    y = convolve3d(ctx, x, type, weights, params, name);
  } else {
    // Constant weights are preloaded: their copies are made by Load.
    const bool constant = ctx.isHost(weights);
    const hwsim::Tensor w = ctx.device(weights, [&](hwsim::Type t, const hwsim::Shape &shape, const std::string &n) {
      return hwsim::ops::createConvWeights(ctx.graph(), t, x.shape(), shape, params, n, {}, constant);
    });
    if (w.elementType() != x.elementType()) throw UnsupportedNode("a convolution of two element types");
    y = hwsim::ops::conv(ctx.graph(), ctx.main(), x, w, params, name, {}, x.elementType(),
                         constant ? &ctx.load() : nullptr);
  }
  return bias.empty() ? y : perChannel(ctx, "Add", y, type, bias, name + "/bias");
}

void registerConvOps(OpRegistry &registry) {
  registry.add("Conv", lowerConv);
  registry.add("MaxPool", poolOp("MaxPool"));
  registry.add("AveragePool", poolOp("AveragePool"));
  registry.add("GlobalAveragePool", globalPoolOp("ReduceMean"));
  registry.add("GlobalMaxPool", globalPoolOp("ReduceMax"));
  registry.add("BatchNormalization", lowerBatchNorm);
}

}  // namespace mrt::onnx
