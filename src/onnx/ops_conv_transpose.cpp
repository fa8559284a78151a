// ConvTranspose lowered as the convolution it is the transpose of: the input
// with stride - 1 zeros inserted between its elements, padded by
// dilation * (kernel - 1) - pad at each end (plus output_padding at the end;
// a negative amount crops), convolved at stride 1 with the kernel flipped
// spatially and its input and output channels swapped within each group.
#include <numeric>

#include "onnx/conv.hpp"
#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// An attribute of `count` values (one or two per spatial dimension; `fallback` each when absent).
std::vector<std::size_t> perSpatial(const NodeProto &node, const char *attr, std::size_t count, std::int64_t fallback) {
  auto values = nonNegative(attrInts(node, attr).value_or(std::vector<std::int64_t>(count, fallback)), node, attr);
  if (values.size() != count) {
    throw Error(ErrorCode::CorruptModel, "{}: {} has {} values, not {}", nodeLabel(node), attr, values.size(), count);
  }
  return values;
}

// The padding of the equivalent stride-1 convolution at the two ends of each
// spatial dimension (negative: crop the zero-inserted input).
struct EquivalentPads {
  std::vector<std::int64_t> begin, end;
};

EquivalentPads equivalentPads(const NodeProto &node, const hwsim::Shape &spatial, const std::vector<std::size_t> &kernel,
                              const std::vector<std::size_t> &strides, const std::vector<std::size_t> &dilations) {
  const std::size_t s = spatial.size();
  const auto outputPadding = perSpatial(node, "output_padding", s, 0);
  const std::string autoPad = attrString(node, "auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    throw Error(ErrorCode::CorruptModel, "{}: unknown auto_pad '{}'", nodeLabel(node), autoPad);
  }
  auto outputShape = attrInts(node, "output_shape");
  if (outputShape && outputShape->size() == s + 2) outputShape->erase(outputShape->begin(), outputShape->begin() + 2);
  if (outputShape && outputShape->size() != s) {
    throw Error(ErrorCode::CorruptModel, "{}: output_shape {} for {} spatial dimensions", nodeLabel(node),
                toString(*outputShape), s);
  }
  const bool derived = outputShape || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER";
  std::vector<std::int64_t> pads(2 * s, 0);
  if (!derived && autoPad == "NOTSET") {
    const auto given = perSpatial(node, "pads", 2 * s, 0);
    pads.assign(given.begin(), given.end());
  }
  EquivalentPads e;
  for (std::size_t i = 0; i < s; ++i) {
    const auto in = static_cast<std::int64_t>(spatial[i]), stride = static_cast<std::int64_t>(strides[i]);
    const auto reach = static_cast<std::int64_t>(dilations[i] * (kernel[i] - 1));  // the dilated kernel's extent - 1
    const auto extra = static_cast<std::int64_t>(outputPadding[i]);
    if (derived) {
      // The pads that give output_shape (in * stride for SAME): ONNX's
      // reference splits their total with floor division, the odd one at
      // the end for SAME_UPPER and at the start otherwise.
      const std::int64_t target = outputShape ? (*outputShape)[i] : in * stride;
      const std::int64_t total = stride * (in - 1) + extra + reach + 1 - target;
      const std::int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
      pads[i] = autoPad == "SAME_UPPER" ? half : total - half;
      pads[i + s] = total - pads[i];
    }
    e.begin.push_back(reach - pads[i]);
    e.end.push_back(reach - pads[i + s] + extra);
  }
  return e;
}

// x [N, C, *spatial] with stride - 1 zeros between neighbours along each
// spatial dimension: views of x and one zero band per dimension, materialized.
hwsim::Tensor zeroInserted(LoweringContext &ctx, const hwsim::Tensor &x, const std::vector<std::size_t> &strides,
                           const std::string &name) {
  hwsim::Tensor y = x;
  for (std::size_t i = 0; i < strides.size(); ++i) {
    const auto d = static_cast<unsigned>(i + 2);
    if (strides[i] == 1 || y.dim(d) == 1) continue;
    const hwsim::Tensor zeros = constantBand(ctx, y, d, strides[i] - 1, 0.0, name + "/zeros");
    std::vector<hwsim::Tensor> parts;
    for (std::size_t k = 0; k < y.dim(d); ++k) {
      if (k > 0) parts.push_back(zeros);
      parts.push_back(y.slice(k, k + 1, d));
    }
    y = hwsim::concat(parts, d);
  }
  return y.numElements() == x.numElements() ? y : materialize(ctx, y, name);
}

// Weights [C, M/group, *kernel] as a convolution's [M, C/group, *kernel]: channels
// swapped within each group and the kernel flipped (its flat order reversed).
HostTensor convWeightsOnHost(const HostTensor &w, std::size_t group) {
  const auto c = static_cast<std::size_t>(w.dims[0]), mg = static_cast<std::size_t>(w.dims[1]);
  const std::size_t cg = c / group, k = w.numElements() / (c * mg);
  HostTensor out{w.type, w.dims, std::vector<double>(w.numElements())};
  out.dims[0] = static_cast<std::int64_t>(mg * group);
  out.dims[1] = static_cast<std::int64_t>(cg);
  for (std::size_t g = 0; g < group; ++g)
    for (std::size_t m = 0; m < mg; ++m)
      for (std::size_t ci = 0; ci < cg; ++ci)
        for (std::size_t j = 0; j < k; ++j)
          out.values[((g * mg + m) * cg + ci) * k + j] = w.values[((g * cg + ci) * mg + m) * k + (k - 1 - j)];
  return out;
}

// The same rearrangement of run-time weights, as views copied into a variable.
hwsim::Tensor convWeightsOnDevice(LoweringContext &ctx, const hwsim::Tensor &w, std::size_t group, const std::string &name) {
  const std::size_t c = w.dim(0), mg = w.dim(1), cg = c / group, k = w.numElements() / (c * mg);
  const hwsim::Tensor swapped = permuteView(w.reshape({group, cg, mg, k}), {0, 2, 1, 3}).reshape({group * mg, cg, k});
  std::vector<std::int64_t> reversed(k);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  hwsim::Shape shape = w.shape();
  shape[0] = group * mg;
  shape[1] = cg;
  return materialize(ctx, takeView(swapped, 2, reversed).reshape(shape), name);
}

void lowerConvTranspose(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const hwsim::Shape spatial = spatialOf(x, node);
  const std::size_t s = spatial.size();
  const Dims wDims = ctx.value(node.input(1)).dims();
  const auto group = static_cast<std::size_t>(attrInt(node, "group", 1));
  if (wDims.size() != x.rank() || static_cast<std::size_t>(wDims[0]) != x.dim(1) || group == 0 || x.dim(1) % group != 0) {
    throw Error(ErrorCode::CorruptModel, "{}: weights {} for input {} in {} groups", nodeLabel(node), toString(wDims),
                toString(toDims(x.shape())), group);
  }
  const std::vector<std::size_t> kernel(wDims.begin() + 2, wDims.end());
  if (auto k = attrInts(node, "kernel_shape"); k && nonNegative(*k, node, "kernel_shape") != kernel) {
    throw Error(ErrorCode::CorruptModel, "{}: kernel_shape {} differs from the weights {}", nodeLabel(node), toString(*k), toString(wDims));
  }
  const auto strides = perSpatial(node, "strides", s, 1);
  const auto dilations = perSpatial(node, "dilations", s, 1);
  const EquivalentPads pads = equivalentPads(node, spatial, kernel, strides, dilations);

  hwsim::Tensor input = zeroInserted(ctx, x, strides, out + "/zero_inserted");
  hwsim::ops::ConvParams params{std::vector<std::size_t>(s, 1), {}, {}, dilations, group};
  for (std::size_t i = 0; i < s; ++i) {
    const auto d = static_cast<unsigned>(i + 2);
    const std::int64_t cropBegin = std::max<std::int64_t>(0, -pads.begin[i]), cropEnd = std::max<std::int64_t>(0, -pads.end[i]);
    if (cropBegin + cropEnd >= static_cast<std::int64_t>(input.dim(d))) {
      throw Error(ErrorCode::CorruptModel, "{}: pads leave no output along spatial dimension {}", nodeLabel(node), i);
    }
    input = input.slice(static_cast<std::size_t>(cropBegin), input.dim(d) - static_cast<std::size_t>(cropEnd), d);
    params.padsBegin.push_back(static_cast<std::size_t>(std::max<std::int64_t>(0, pads.begin[i])));
    params.padsEnd.push_back(static_cast<std::size_t>(std::max<std::int64_t>(0, pads.end[i])));
  }

  const std::string weights = ctx.uniqueName(node.input(1) + "/as_conv");
  const std::int32_t type = ctx.value(node.input(0)).type;
  if (ctx.isHost(node.input(1))) {
    ctx.setHost(weights, convWeightsOnHost(ctx.host(node.input(1)), group));
  } else {
    ctx.setDevice(weights, convWeightsOnDevice(ctx, ctx.device(node.input(1)), group, weights), ctx.value(node.input(1)).type);
  }
  ctx.setDevice(out, convolve(ctx, input, type, weights, params, inputName(node, 2), out), type);
}

}  // namespace

void registerConvTransposeOps(OpRegistry &registry) { registry.add("ConvTranspose", lowerConvTranspose); }

}  // namespace mrt::onnx
