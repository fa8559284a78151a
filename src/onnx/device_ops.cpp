#include "onnx/device_ops.hpp"

#include <set>

#include <hwsim/ops.hpp>
#include <hwsim/program.hpp>

#include "common/error.hpp"

namespace mrt::onnx {

namespace {

const std::set<std::string> kCommutative = {"Add", "Mul", "Max", "Min", "Equal", "NotEqual", "And", "Or"};

hwsim::Shape broadcastShape(const hwsim::Shape &a, const hwsim::Shape &b, const std::string &name) {
  const auto dims = broadcastDims(toDims(a), toDims(b));
  if (!dims) {
    throw Error(ErrorCode::CorruptModel, "{}: shapes {} and {} do not broadcast", name, toString(toDims(a)),
                toString(toDims(b)));
  }
  return toShape(*dims);
}

// b as hwsim's binary takes it next to an `out`-shaped a: a's shape, one
// element, or a's last dimension; invalid if b needs real broadcasting.
hwsim::Tensor directOperand(const hwsim::Tensor &b, const hwsim::Shape &out) {
  if (b.numElements() == 1) return b.reshape({1});
  if (b.numElements() == hwsim::numElementsOf(out)) return b.reshape(out);
  if (!out.empty() && b.numElements() == out.back() && !b.shape().empty() && b.shape().back() == out.back()) {
    return b.reshape({out.back()});
  }
  return {};
}

}  // namespace

hwsim::Tensor broadcastView(const hwsim::Tensor &t, const hwsim::Shape &to) {
  hwsim::Shape padded(to.size() - t.rank(), 1);
  padded.insert(padded.end(), t.shape().begin(), t.shape().end());
  hwsim::Tensor v = t.reshape(padded);
  for (unsigned d = 0; d < to.size(); ++d) {
    if (v.dim(d) == 1 && to[d] != 1) v = hwsim::concat(std::vector<hwsim::Tensor>(to[d], v), d);
  }
  return v;
}

hwsim::Tensor permuteView(const hwsim::Tensor &t, const std::vector<std::size_t> &perm) {
  bool identity = true;
  for (std::size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == i;
  if (identity) return t;
  if (t.rank() == 2) return t.transpose();
  // Output dimension 0 is input dimension perm[0]: permute each of its
  // slices by the remaining order and stack them.
  const std::size_t first = perm[0];
  std::vector<std::size_t> rest;
  for (std::size_t i = 1; i < perm.size(); ++i) rest.push_back(perm[i] > first ? perm[i] - 1 : perm[i]);
  hwsim::Shape sliceShape = t.shape();
  sliceShape.erase(sliceShape.begin() + static_cast<std::ptrdiff_t>(first));
  std::vector<hwsim::Tensor> parts;
  for (std::size_t k = 0; k < t.dim(static_cast<unsigned>(first)); ++k) {
    const hwsim::Tensor part = permuteView(t.slice(k, k + 1, static_cast<unsigned>(first)).reshape(sliceShape), rest);
    hwsim::Shape stacked = part.shape();
    stacked.insert(stacked.begin(), 1);
    parts.push_back(part.reshape(stacked));
  }
  return hwsim::concat(parts, 0);
}

hwsim::Tensor takeView(const hwsim::Tensor &t, std::size_t axis, const std::vector<std::int64_t> &indices) {
  const auto d = static_cast<unsigned>(axis);
  std::vector<hwsim::Tensor> parts;
  // Runs of consecutive indices become one slice each.
  for (std::size_t i = 0; i < indices.size();) {
    std::size_t j = i + 1;
    while (j < indices.size() && indices[j] == indices[j - 1] + 1) ++j;
    parts.push_back(t.slice(static_cast<std::size_t>(indices[i]), static_cast<std::size_t>(indices[j - 1]) + 1, d));
    i = j;
  }
  if (parts.empty()) throw UnsupportedNode("an empty result (no index taken) is not supported");
  return parts.size() == 1 ? parts[0] : hwsim::concat(parts, d);
}

hwsim::Tensor constantBand(LoweringContext &ctx, const hwsim::Tensor &t, unsigned axis, std::size_t size,
                           double value, const std::string &name) {
  hwsim::Shape shape = t.shape();
  shape[axis] = size;
  hwsim::Tensor band = ctx.graph().addConstant(t.elementType(), shape, value, ctx.uniqueName(name));
  ctx.graph().setTileMapping(band, ctx.firstTile());
  return band;
}

hwsim::Tensor materialize(LoweringContext &ctx, const hwsim::Tensor &view, const std::string &name) {
  hwsim::Tensor out = ctx.newTensor(view.elementType(), view.shape(), name);
  ctx.main().add(hwsim::program::Copy(view, out, name));
  return out;
}

hwsim::Tensor broadcastBinary(LoweringContext &ctx, const std::string &codelet, const hwsim::Tensor &a,
                              const hwsim::Tensor &b, const std::string &name) {
  const hwsim::Shape out = broadcastShape(a.shape(), b.shape(), name);
  auto run = [&](const hwsim::Tensor &x, const hwsim::Tensor &y) {
    hwsim::Tensor r = hwsim::ops::binary(ctx.graph(), ctx.main(), codelet, x.reshape(out.empty() ? hwsim::Shape{1} : out),
                                         y, name);
    return r.reshape(out);
  };
  if (a.shape() == out) {
    if (const auto y = directOperand(b, out); y.valid()) return run(a, y);
  }
  if (b.shape() == out && kCommutative.count(codelet)) {
    if (const auto y = directOperand(a, out); y.valid()) return run(b, y);
  }
  const hwsim::Tensor x = a.shape() == out ? a : materialize(ctx, broadcastView(a, out), name + "/broadcast_a");
  hwsim::Tensor y = directOperand(b, out);
  if (!y.valid()) y = materialize(ctx, broadcastView(b, out), name + "/broadcast_b").reshape(out);
  return run(x, y);
}

hwsim::Tensor broadcastBinary(LoweringContext &ctx, const std::string &codelet, const std::string &a,
                              const std::string &b, const std::string &name) {
  const Dims out = *[&] {
    auto d = broadcastDims(ctx.value(a).dims(), ctx.value(b).dims());
    if (!d) {
      throw Error(ErrorCode::CorruptModel, "{}: shapes {} and {} do not broadcast", name,
                  toString(ctx.value(a).dims()), toString(ctx.value(b).dims()));
    }
    return d;
  }();
  // A constant operand that needs real broadcasting is broadcast on the host
  // (only as far as the other operand needs: its full shape), so the device
  // never copies it per run.
  auto operand = [&](const std::string &n) {
    const Value &v = ctx.value(n);
    const Dims dims = v.dims();
    const bool direct = dims == out || numElements(dims) == 1 ||
                        (!out.empty() && !dims.empty() && dims.back() == out.back() &&
                         numElements(dims) == static_cast<std::size_t>(out.back()));
    if (v.host && !direct) return ctx.deviceConstant(broadcastTo(*v.host, out), ctx.uniqueName(n + "/broadcast"));
    return ctx.device(n);
  };
  return broadcastBinary(ctx, codelet, operand(a), operand(b), name);
}

hwsim::Tensor scalarBinary(LoweringContext &ctx, const std::string &codelet, const hwsim::Tensor &t, double scalar,
                           const std::string &name) {
  hwsim::Tensor c = ctx.graph().addConstant(t.elementType(), {1}, scalar, name + "/scalar");
  ctx.graph().setTileMapping(c, ctx.firstTile());
  // A rank-0 t stays rank 0: the scalar must not broadcast it to [1].
  return broadcastBinary(ctx, codelet, t, t.rank() == 0 ? c.reshape({}) : c, name);
}

hwsim::Tensor mask(LoweringContext &ctx, const char *codelet, const hwsim::Tensor &t, double scalar,
                   const std::string &name, std::optional<hwsim::Type> type) {
  const hwsim::Tensor holds = scalarBinary(ctx, codelet, t, scalar, name + "/test");
  return hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", holds, name, type.value_or(t.elementType()));
}

hwsim::Tensor wrappedIndices(LoweringContext &ctx, hwsim::Tensor indices, std::int64_t dim, const std::string &name) {
  if (indices.elementType() != hwsim::Type::S32) {
    indices = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", indices, name + "/s32", hwsim::Type::S32);
  }
  const hwsim::Tensor negative = mask(ctx, "Less", indices, 0.0, name + "/negative", hwsim::Type::S32);
  return broadcastBinary(ctx, "Add", indices, scalarBinary(ctx, "Mul", negative, static_cast<double>(dim), name + "/wrap"),
                         name);
}

hwsim::Tensor mixAlong(LoweringContext &ctx, const hwsim::Tensor &t, std::size_t axis, const std::string &matrix,
                       const std::string &name) {
  const std::size_t rank = t.rank(), n = t.dim(static_cast<unsigned>(axis));
  std::vector<std::size_t> perm, inverse(rank);
  for (std::size_t d = 0; d < rank; ++d) if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  for (std::size_t d = 0; d < rank; ++d) inverse[perm[d]] = d;
  const hwsim::Tensor moved = permuteView(t, perm);
  const hwsim::Tensor m = ctx.device(matrix);
  const hwsim::Tensor rows = moved.reshape({t.numElements() / n, n});
  hwsim::Shape mixedShape = moved.shape();
  mixedShape.back() = m.dim(1);
  const hwsim::Tensor mixed = hwsim::ops::matMul(ctx.graph(), ctx.main(), rows, m, name, {}, t.elementType());
  return permuteView(mixed.reshape(mixedShape), inverse);
}

hwsim::Tensor softmaxAlong(LoweringContext &ctx, const hwsim::Tensor &t, std::size_t axis, const std::string &name) {
  // The dimensions before and after the axis are merged first, so moving the
  // axis last is a rank-3 view (transposes of [n, inner] blocks) at any rank.
  const hwsim::Shape &shape = t.shape();
  const std::size_t outer = hwsim::numElementsOf(hwsim::Shape(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(axis)));
  const std::size_t n = shape[axis];
  const std::size_t inner = hwsim::numElementsOf(hwsim::Shape(shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape.end()));
  if (inner == 1) return hwsim::ops::softmax(ctx.graph(), ctx.main(), t.reshape({outer, n}), name).reshape(shape);
  const hwsim::Tensor moved = permuteView(t.reshape({outer, n, inner}), {0, 2, 1});
  const hwsim::Tensor y = hwsim::ops::softmax(ctx.graph(), ctx.main(), moved, name);
  return materialize(ctx, permuteView(y, {0, 2, 1}), name + "/moved_back").reshape(shape);
}

}  // namespace mrt::onnx
