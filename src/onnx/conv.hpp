// Convolution pieces Conv (ops_conv.cpp) and ConvTranspose
// (ops_conv_transpose.cpp) share.
#pragma once

#include <hwsim/ops.hpp>

#include "onnx/context.hpp"

namespace mrt::onnx {

// `values` of the attribute `attr` as sizes; throws CorruptModel for a negative one.
std::vector<std::size_t> nonNegative(const std::vector<std::int64_t> &values, const ::onnx::NodeProto &node,
                                     const char *attr);
// The spatial dimensions of x [N, C, *spatial]; UnsupportedNode unless 1-D, 2-D or 3-D.
hwsim::Shape spatialOf(const hwsim::Tensor &x, const ::onnx::NodeProto &node);
// x [N, C, *spatial] (of ONNX type `type`) convolved with the weights named
// `weights` (a constant is loaded laid out for this convolution), plus the
// per-channel vector named `bias` unless it is "". F16/F32 only.
hwsim::Tensor convolve(LoweringContext &ctx, const hwsim::Tensor &x, std::int32_t type, const std::string &weights,
                       const hwsim::ops::ConvParams &params, const std::string &bias, const std::string &name);
// The 3-D cases (x [N, C, D, H, W]; conv3d.cpp): a convolution as the sum
// over kernel depths of 2-D convolutions (`convolve`), a pool as a 2-D pool
// over (H, W) then a 1-D pool along D. Params hold 3 spatial entries.
hwsim::Tensor convolve3d(LoweringContext &ctx, const hwsim::Tensor &x, std::int32_t type, const std::string &weights,
                         const hwsim::ops::ConvParams &params, const std::string &name);
// MaxPool's Indices output (pool_indices.cpp; 1-D and 2-D): for x and its pooled
// maxima y, each maximum's flat index into x (S32), row-major or, with
// columnMajor (storage_order 1), H and W swapped.
hwsim::Tensor maxPoolIndices(LoweringContext &ctx, const hwsim::Tensor &x, const hwsim::Tensor &y,
                             const hwsim::ops::PoolParams &params, bool columnMajor, const std::string &name);
hwsim::Tensor pool3d(LoweringContext &ctx, const std::string &codelet, const hwsim::Tensor &x,
                     const hwsim::ops::PoolParams &params, const std::string &name);

}  // namespace mrt::onnx
