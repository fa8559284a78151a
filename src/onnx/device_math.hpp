// DeviceMath: elementwise arithmetic on small device tensors (positions,
// coordinates, weights and one-element scalars) for operators whose indices
// are computed at run time, each step a uniquely named op after the node.
#pragma once

#include <array>
#include <optional>
#include <string>

#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"

namespace mrt::onnx {

class DeviceMath {
 public:
  DeviceMath(LoweringContext &ctx, std::string base) : ctx_(ctx), base_(std::move(base)) {}

  hwsim::Tensor op(const char *codelet, const hwsim::Tensor &a, const hwsim::Tensor &b) {
    return broadcastBinary(ctx_, codelet, a, b, next());
  }
  hwsim::Tensor op(const char *codelet, const hwsim::Tensor &a, double b) { return scalarBinary(ctx_, codelet, a, b, next()); }
  // 1 where `a <codelet> b` holds, else 0, as `type`.
  hwsim::Tensor test(const char *codelet, const hwsim::Tensor &a, double b, hwsim::Type type = hwsim::Type::S32) {
    return mask(ctx_, codelet, a, b, next(), type);
  }
  hwsim::Tensor test(const char *codelet, const hwsim::Tensor &a, const hwsim::Tensor &b,
                     hwsim::Type type = hwsim::Type::S32) {
    return cast(op(codelet, a, b), type);
  }
  hwsim::Tensor unary(const char *codelet, const hwsim::Tensor &a) {
    return hwsim::ops::unary(ctx_.graph(), ctx_.main(), codelet, a, next());
  }
  hwsim::Tensor clamp(const hwsim::Tensor &a, double lo, double hi) { return op("Min", op("Max", a, lo), hi); }
  hwsim::Tensor cast(const hwsim::Tensor &t, hwsim::Type type) {
    return t.elementType() == type ? t : hwsim::ops::unary(ctx_.graph(), ctx_.main(), "Cast", t, next(), type);
  }
  hwsim::Tensor s32(const hwsim::Tensor &t) { return cast(t, hwsim::Type::S32); }
  // Element k of the 1-D run-time vector v, as S32 [1].
  hwsim::Tensor element(const hwsim::Tensor &v, std::size_t k) { return s32(v.reshape({v.numElements()}).slice(k, k + 1, 0)); }
  // A graph constant of `shape`, every element `value`.
  hwsim::Tensor constant(const hwsim::Shape &shape, double value, hwsim::Type type) {
    hwsim::Tensor c = ctx_.graph().addConstant(type, shape, value, next());
    ctx_.graph().setTileMapping(c, ctx_.firstTile());
    return c;
  }
  // 0, 1, ..., n - 1.
  hwsim::Tensor iota(std::size_t n) {
    HostTensor t{::onnx::TensorProto::INT32, {static_cast<std::int64_t>(n)}, {}};
    for (std::size_t i = 0; i < n; ++i) t.values.push_back(static_cast<double>(i));
    return ctx_.deviceConstant(t, next());
  }
  // The sum of t's elements, as [1].
  hwsim::Tensor sum(const hwsim::Tensor &t) { return hwsim::ops::reduce(ctx_.graph(), ctx_.main(), "ReduceSum", t, {}, next()); }
  // x's elements at the run-time positions `indices` along `axis`.
  hwsim::Tensor take(const hwsim::Tensor &x, const hwsim::Tensor &indices, std::size_t axis) {
    return hwsim::ops::gather(ctx_.graph(), ctx_.main(), x, indices, axis, next());
  }
  // GatherElements of x along `axis` by run-time `indices` of x's rank.
  hwsim::Tensor takeElements(const hwsim::Tensor &x, const hwsim::Tensor &indices, std::size_t axis) {
    return hwsim::ops::gatherElements(ctx_.graph(), ctx_.main(), x, indices, axis, next());
  }
  // Each row's exclusive prefix sums: out[r][j] = sum of v[r][i] for i < j,
  // v an F16/F32 [rows, m] matrix, as one multiply by an m x m triangular
  // matrix of ones (so for small m).
  hwsim::Tensor prefixBefore(const hwsim::Tensor &v) {
    const std::size_t n = v.dim(1);
    HostTensor upper{::onnx::TensorProto::FLOAT, {static_cast<std::int64_t>(n), static_cast<std::int64_t>(n)}, {}};
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) upper.values.push_back(i < j ? 1.0 : 0.0);
    }
    return hwsim::ops::matMul(ctx_.graph(), ctx_.main(), cast(v, hwsim::Type::F32), ctx_.deviceConstant(upper, next()), next());
  }
  // The positions (S32 [k]) of the first k ones of the F32 0/1 vector
  // `keep`, in order: each kept position's place among them (a prefix sum)
  // gets the position by a scatter; places k and beyond are dropped.
  hwsim::Tensor keptPositions(const hwsim::Tensor &keep, std::size_t k) {
    const std::size_t n = keep.numElements();
    const hwsim::Tensor flag = keep.reshape({1, n});
    const hwsim::Tensor place = prefixBefore(flag);
    // keep ? place : k, as (place - k) * keep + k.
    const hwsim::Tensor target = s32(op("Add", op("Mul", op("Sub", place, static_cast<double>(k)), flag), static_cast<double>(k)));
    return hwsim::ops::scatterElements(ctx_.graph(), ctx_.main(), constant({k}, 0.0, hwsim::Type::S32), target.reshape({n}),
                                       iota(n), 0, hwsim::ops::ScatterReduction::None, next());
  }
  // A new variable holding the view (a broadcast, a concat...).
  hwsim::Tensor materialized(const hwsim::Tensor &view) { return materialize(ctx_, view, next()); }

 private:
  std::string next() { return ctx_.uniqueName(base_ + "/step" + std::to_string(count_++)); }

  LoweringContext &ctx_;
  std::string base_;
  int count_ = 0;
};

// Cubic convolution weights (Keys, coefficient a) of the taps at -1, 0, 1, 2
// from floor(p), for t = p - floor(p) in [0, 1].
inline std::array<hwsim::Tensor, 4> cubicWeights(DeviceMath &m, const hwsim::Tensor &t, double a) {
  // Near taps, |d| <= 1: ((a + 2) d - (a + 3)) d^2 + 1; far ones, 1 < |d| < 2: ((a d - 5a) d + 8a) d - 4a.
  auto near = [&](const hwsim::Tensor &d) {
    return m.op("Add", m.op("Mul", m.op("Mul", m.op("Sub", m.op("Mul", d, a + 2), a + 3), d), d), 1.0);
  };
  auto far = [&](const hwsim::Tensor &d) {
    return m.op("Sub", m.op("Mul", m.op("Add", m.op("Mul", m.op("Sub", m.op("Mul", d, a), 5 * a), d), 8 * a), d), 4 * a);
  };
  const hwsim::Tensor oneLess = m.op("Add", m.op("Mul", t, -1.0), 1.0);  // 1 - t
  return {far(m.op("Add", t, 1.0)), near(t), near(oneLess), far(m.op("Add", oneLess, 1.0))};
}

}  // namespace mrt::onnx
