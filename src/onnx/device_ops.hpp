// Device building blocks the operator families share: views that broadcast
// or permute, materializing a view into a variable, NumPy-broadcasting
// binary operations and softmax along any axis.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <hwsim/graph.hpp>

#include "onnx/context.hpp"

namespace mrt::onnx {

// A view of t repeated along its dimensions of size 1 (and new leading ones)
// to `to`. Free only as a copy source: materialize() it before vertices use it.
hwsim::Tensor broadcastView(const hwsim::Tensor &t, const hwsim::Shape &to);
// out[i0..] = t[i_perm[0]..]: the transposition as a view (rank 2 by hwsim's
// transpose; other ranks as slices joined by concat).
hwsim::Tensor permuteView(const hwsim::Tensor &t, const std::vector<std::size_t> &perm);
// The elements of t at `indices` along `axis`, in order, as a view.
hwsim::Tensor takeView(const hwsim::Tensor &t, std::size_t axis, const std::vector<std::int64_t> &indices);
// A graph constant (on tile 0) shaped like t but `size` long along `axis`,
// every element `value`: padding to concatenate with views of t.
hwsim::Tensor constantBand(LoweringContext &ctx, const hwsim::Tensor &t, unsigned axis, std::size_t size,
                           double value, const std::string &name);
// A new variable over all tiles holding a copy of `view`.
hwsim::Tensor materialize(LoweringContext &ctx, const hwsim::Tensor &view, const std::string &name);

// ONNX-style binary op with NumPy broadcasting on the values named a and b
// (either may be a constant; constants that need broadcasting are broadcast
// on the host). Comparisons give BOOL.
hwsim::Tensor broadcastBinary(LoweringContext &ctx, const std::string &codelet, const std::string &a,
                              const std::string &b, const std::string &name);
// The same on device tensors (commutative codelets may swap operands to
// avoid a copy).
hwsim::Tensor broadcastBinary(LoweringContext &ctx, const std::string &codelet, const hwsim::Tensor &a,
                              const hwsim::Tensor &b, const std::string &name);
// t <codelet> scalar, the scalar a graph constant of t's type.
hwsim::Tensor scalarBinary(LoweringContext &ctx, const std::string &codelet, const hwsim::Tensor &t, double scalar,
                           const std::string &name);
// Softmax of t along `axis`: moved last by a view for hwsim's row-wise Softmax, and back.
hwsim::Tensor softmaxAlong(LoweringContext &ctx, const hwsim::Tensor &t, std::size_t axis, const std::string &name);
// Run-time integer indices as S32 (the device's INT64), negative ones plus
// `dim`: i + dim * (i < 0).
hwsim::Tensor wrappedIndices(LoweringContext &ctx, hwsim::Tensor indices, std::int64_t dim, const std::string &name);
// y[.., j, ..] = sum_i t[.., i, ..] * matrix[i][j] along `axis`, matrix the
// n x n (or n x m) value named `matrix`: the axis moved last by a view, one
// multiply, moved back by a view. F16/F32.
hwsim::Tensor mixAlong(LoweringContext &ctx, const hwsim::Tensor &t, std::size_t axis, const std::string &matrix,
                       const std::string &name);
// 1 where `t <codelet> scalar` holds, else 0, as `type` (t's type when
// absent): comparisons give BOOL, arithmetic wants numbers.
hwsim::Tensor mask(LoweringContext &ctx, const char *codelet, const hwsim::Tensor &t, double scalar,
                   const std::string &name, std::optional<hwsim::Type> type = std::nullopt);

}  // namespace mrt::onnx
