// MaxPool's Indices output (1-D and 2-D): for each output, the flat index into x
// (row-major over [N, C, H, W], or with H and W swapped for storage_order
// 1, as ONNX Runtime counts them) of the first element of its window, in
// scan order, that equals the pooled maximum. Every kernel offset's view of
// x (padded with -inf, which never equals a maximum) is compared with the
// maxima; the offsets are visited last to first, each hit replacing the
// index so far, so the first hit in scan order is the one left.
#include <limits>

#include <hwsim/ops.hpp>

#include "onnx/conv.hpp"
#include "onnx/device_ops.hpp"

namespace mrt::onnx {
namespace {

// x with `begin` and `end` -inf rows around it along `axis`.
hwsim::Tensor lowestPadded(LoweringContext &ctx, const hwsim::Tensor &x, unsigned axis, std::size_t begin,
                           std::size_t end, const std::string &name) {
  const double lowest = -std::numeric_limits<double>::infinity();
  std::vector<hwsim::Tensor> parts;
  if (begin > 0) parts.push_back(constantBand(ctx, x, axis, begin, lowest, name + "/pad_begin"));
  parts.push_back(x);
  if (end > 0) parts.push_back(constantBand(ctx, x, axis, end, lowest, name + "/pad_end"));
  return parts.size() == 1 ? x : hwsim::concat(parts, axis);
}

// The padded positions output positions 0..out-1 read at kernel offset k.
std::vector<std::int64_t> readAt(std::size_t out, std::size_t stride, std::size_t dilation, std::size_t k) {
  std::vector<std::int64_t> at(out);
  for (std::size_t i = 0; i < out; ++i) at[i] = static_cast<std::int64_t>(i * stride + k * dilation);
  return at;
}

}  // namespace

hwsim::Tensor maxPoolIndices(LoweringContext &ctx, const hwsim::Tensor &x, const hwsim::Tensor &y,
                             const hwsim::ops::PoolParams &params, bool columnMajor, const std::string &name) {
  if (x.rank() == 3) {
    // A 1-D pool is the 2-D pool of [N, C, 1, L] with a 1-high window, and
    // its flat indices are the same.
    const hwsim::ops::PoolParams flat{{1, params.kernelShape.at(0)}, {1, params.strides.at(0)}, {0, params.padsBegin.at(0)},
                                      {0, params.padsEnd.at(0)},     {1, params.dilations.at(0)}, params.countIncludePad,
                                      params.ceilMode};
    return maxPoolIndices(ctx, x.reshape({x.dim(0), x.dim(1), 1, x.dim(2)}), y.reshape({y.dim(0), y.dim(1), 1, y.dim(2)}),
                          flat, columnMajor, name)
        .reshape(y.shape());
  }
  if (x.rank() != 4) throw UnsupportedNode("MaxPool's Indices output of a pool over " + std::to_string(x.rank() - 2) + " dimensions (1-D and 2-D only)");
  const std::size_t h = x.dim(2), w = x.dim(3), oh = y.dim(2), ow = y.dim(3), planes = x.dim(0) * x.dim(1);
  const std::size_t kh = params.kernelShape.at(0), kw = params.kernelShape.at(1);
  // The last window (ceil_mode) may reach past the end padding: pad to it.
  const auto endPad = [&](std::size_t in, std::size_t out, std::size_t d) {
    const std::size_t reach = (out - 1) * params.strides.at(d) + (params.kernelShape.at(d) - 1) * params.dilations.at(d) + 1;
    return reach > in + params.padsBegin.at(d) ? reach - in - params.padsBegin.at(d) : 0;
  };
  const hwsim::Tensor rowsPadded = lowestPadded(ctx, x, 2, params.padsBegin.at(0), endPad(h, oh, 0), name + "/rows");
  const hwsim::Tensor padded = lowestPadded(ctx, rowsPadded, 3, params.padsBegin.at(1), endPad(w, ow, 1), name + "/cols");
  hwsim::Tensor result;
  for (std::size_t k = kh * kw; k-- > 0;) {
    const std::string at = name + "/offset" + std::to_string(k);
    const auto rows = readAt(oh, params.strides.at(0), params.dilations.at(0), k / kw);
    const auto cols = readAt(ow, params.strides.at(1), params.dilations.at(1), k % kw);
    const hwsim::Tensor window = materialize(ctx, takeView(takeView(padded, 2, rows), 3, cols), at + "/window");
    const hwsim::Tensor equal = broadcastBinary(ctx, "Equal", window, y, at + "/equal");
    const hwsim::Tensor hit = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", equal, at + "/hit", hwsim::Type::S32);
    // The flat index each output reads at this offset (0 in the padding,
    // never a hit).
    HostTensor index{::onnx::TensorProto::INT32, toDims(y.shape()), std::vector<double>(y.numElements(), 0.0)};
    for (std::size_t p = 0; p < planes; ++p) {
      for (std::size_t i = 0; i < oh; ++i) {
        for (std::size_t j = 0; j < ow; ++j) {
          const auto r = rows[i] - static_cast<std::int64_t>(params.padsBegin[0]);
          const auto c = cols[j] - static_cast<std::int64_t>(params.padsBegin[1]);
          if (r < 0 || c < 0 || r >= static_cast<std::int64_t>(h) || c >= static_cast<std::int64_t>(w)) continue;
          const auto inPlane = columnMajor ? r + c * static_cast<std::int64_t>(h) : r * static_cast<std::int64_t>(w) + c;
          index.values[(p * oh + i) * ow + j] = static_cast<double>(static_cast<std::int64_t>(p * h * w) + inPlane);
        }
      }
    }
    const std::string indexName = ctx.uniqueName(at + "/index");
    ctx.setHost(indexName, std::move(index));
    const hwsim::Tensor candidate = ctx.device(indexName);
    if (!result.valid()) {
      result = broadcastBinary(ctx, "Mul", hit, candidate, at + "/pick");
    } else {
      // result + hit * (candidate - result): the candidate where it hits.
      const hwsim::Tensor change = broadcastBinary(ctx, "Sub", candidate, result, at + "/change");
      result = broadcastBinary(ctx, "Add", result, broadcastBinary(ctx, "Mul", hit, change, at + "/hit_change"), at + "/pick");
    }
  }
  return result;
}

}  // namespace mrt::onnx
