// 3-D convolution and pooling (inputs [N, C, D, H, W]) on hwsim's 2-D ops.
// A convolution is the sum over the kernel's depth of 2-D convolutions: for
// each kernel depth kd, the input planes every output depth reads at kd
// (a strided view along D, with zero planes for the depth pads) become a
// batch of 2-D inputs, convolved with the weights' slice kd. A pool over a
// box is separable: the max (or average) over the box is the max (average)
// along D of the 2-D pools over (H, W), since the valid part of a window is
// itself a box (so counts of non-pad elements multiply).
#include <hwsim/ops.hpp>

#include "onnx/conv.hpp"
#include "onnx/device_ops.hpp"

namespace mrt::onnx {
namespace {

// Entries 1 and 2 (H, W) of a per-spatial-dimension list.
std::vector<std::size_t> planar(const std::vector<std::size_t> &v) { return {v.at(1), v.at(2)}; }

// The weights' slice at kernel depth kd, [M, C/group, KH, KW], as a new
// value: a host constant for constant weights, else a view copied out.
std::string depthSlice(LoweringContext &ctx, const std::string &weights, std::size_t kd, const std::string &name) {
  const std::string slice = ctx.uniqueName(name);
  if (ctx.isHost(weights)) {
    const HostTensor &w = ctx.host(weights);
    const auto outer = static_cast<std::size_t>(w.dims[0] * w.dims[1]), depth = static_cast<std::size_t>(w.dims[2]);
    const auto plane = static_cast<std::size_t>(w.dims[3] * w.dims[4]);
    HostTensor s{w.type, {w.dims[0], w.dims[1], w.dims[3], w.dims[4]}, {}};
    s.values.reserve(outer * plane);
    for (std::size_t o = 0; o < outer; ++o) {
      const auto begin = w.values.begin() + static_cast<std::ptrdiff_t>((o * depth + kd) * plane);
      s.values.insert(s.values.end(), begin, begin + static_cast<std::ptrdiff_t>(plane));
    }
    ctx.setHost(slice, std::move(s));
  } else {
    const hwsim::Tensor w = ctx.device(weights);
    const hwsim::Tensor view = w.slice(kd, kd + 1, 2).reshape({w.dim(0), w.dim(1), w.dim(3), w.dim(4)});
    ctx.setDevice(slice, materialize(ctx, view, slice), ctx.value(weights).type);
  }
  return slice;
}

// x along D with the pads as zero planes, then the planes output depth od
// reads at kernel depth kd (od * stride + kd * dilation), for every od.
std::vector<std::int64_t> planesAt(std::size_t kd, std::size_t outDepth, std::size_t stride, std::size_t dilation) {
  std::vector<std::int64_t> indices(outDepth);
  for (std::size_t od = 0; od < outDepth; ++od) indices[od] = static_cast<std::int64_t>(od * stride + kd * dilation);
  return indices;
}

hwsim::Tensor depthPadded(LoweringContext &ctx, const hwsim::Tensor &x, std::size_t begin, std::size_t end,
                          const std::string &name) {
  std::vector<hwsim::Tensor> parts;
  if (begin > 0) parts.push_back(constantBand(ctx, x, 2, begin, 0.0, name + "/pad_begin"));
  parts.push_back(x);
  if (end > 0) parts.push_back(constantBand(ctx, x, 2, end, 0.0, name + "/pad_end"));
  return parts.size() == 1 ? x : hwsim::concat(parts, 2);
}

// [N, C, D', H, W] -> [N * D', C, H, W] (or back with the roles of C and D'
// swapped), copied into a variable.
hwsim::Tensor depthIntoBatch(LoweringContext &ctx, const hwsim::Tensor &t, const std::string &name) {
  const hwsim::Tensor moved = permuteView(t, {0, 2, 1, 3, 4});
  return materialize(ctx, moved, name).reshape({t.dim(0) * t.dim(2), t.dim(1), t.dim(3), t.dim(4)});
}

}  // namespace

hwsim::Tensor convolve3d(LoweringContext &ctx, const hwsim::Tensor &x, std::int32_t type, const std::string &weights,
                         const hwsim::ops::ConvParams &params, const std::string &name) {
  const Dims w = ctx.value(weights).dims();
  if (w.size() != 5) throw Error(ErrorCode::CorruptModel, "{}: weights {} for a 3-D convolution", name, toString(w));
  const auto kernelDepth = static_cast<std::size_t>(w[2]);
  const std::size_t stride = params.strides.at(0), dilation = params.dilations.at(0);
  const hwsim::Tensor padded = depthPadded(ctx, x, params.padsBegin.at(0), params.padsEnd.at(0), name);
  const std::size_t span = (kernelDepth - 1) * dilation + 1;
  if (kernelDepth == 0 || stride == 0 || padded.dim(2) < span) {
    throw Error(ErrorCode::CorruptModel, "{}: depth {} (padded) is smaller than the kernel's {}", name, padded.dim(2), span);
  }
  const std::size_t outDepth = (padded.dim(2) - span) / stride + 1;
  const hwsim::ops::ConvParams plane{planar(params.strides), planar(params.padsBegin), planar(params.padsEnd),
                                     planar(params.dilations), params.group};
  hwsim::Tensor sum;
  for (std::size_t kd = 0; kd < kernelDepth; ++kd) {
    const std::string at = name + "/depth" + std::to_string(kd);
    const hwsim::Tensor planes = depthIntoBatch(ctx, takeView(padded, 2, planesAt(kd, outDepth, stride, dilation)), at + "/planes");
    const hwsim::Tensor y = convolve(ctx, planes, type, depthSlice(ctx, weights, kd, weights + "/depth"), plane, "", at);
    sum = kd == 0 ? y : broadcastBinary(ctx, "Add", sum, y, at + "/sum");
  }
  // [N * D', M, H', W'] -> [N, M, D', H', W']
  const hwsim::Tensor batched = sum.reshape({x.dim(0), outDepth, sum.dim(1), sum.dim(2), sum.dim(3)});
  return materialize(ctx, permuteView(batched, {0, 2, 1, 3, 4}), name);
}

hwsim::Tensor pool3d(LoweringContext &ctx, const std::string &codelet, const hwsim::Tensor &x,
                     const hwsim::ops::PoolParams &params, const std::string &name) {
  const std::size_t n = x.dim(0), c = x.dim(1), d = x.dim(2);
  const hwsim::ops::PoolParams plane{planar(params.kernelShape), planar(params.strides), planar(params.padsBegin),
                                     planar(params.padsEnd), planar(params.dilations), params.countIncludePad,
                                     params.ceilMode};
  const hwsim::Tensor planes = hwsim::ops::pool(ctx.graph(), ctx.main(), codelet, x.reshape({n, c * d, x.dim(3), x.dim(4)}),
                                                plane, name + "/planes");
  const std::size_t h = planes.dim(2), w = planes.dim(3);
  // [N * C, D, H' * W'] with D last, so a 1-D pool runs along it.
  const hwsim::Tensor depthLast = materialize(ctx, permuteView(planes.reshape({n * c, d, h * w}), {0, 2, 1}), name + "/depth_last");
  const hwsim::ops::PoolParams depth{{params.kernelShape.at(0)}, {params.strides.at(0)}, {params.padsBegin.at(0)},
                                     {params.padsEnd.at(0)}, {params.dilations.at(0)}, params.countIncludePad,
                                     params.ceilMode};
  const hwsim::Tensor pooled = hwsim::ops::pool(ctx.graph(), ctx.main(), codelet, depthLast, depth, name + "/depth");
  const std::size_t outDepth = pooled.dim(2);
  return materialize(ctx, permuteView(pooled, {0, 2, 1}), name).reshape({n, c, outDepth, h, w});
}

}  // namespace mrt::onnx
