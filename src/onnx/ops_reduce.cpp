// Softmax/LogSoftmax on any axis, reductions over any axes (ReduceLogSumExp
// shifted by the maximum), ArgMax, ArgMin, Hardmax and TopK. hwsim's Softmax and ArgMax
// work on the last dimension: other axes are moved there by a permuting view
// and back.
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using TP = ::onnx::TensorProto;

// The permutation moving `axis` last, and its inverse.
std::pair<std::vector<std::size_t>, std::vector<std::size_t>> axisLast(std::size_t axis, std::size_t rank) {
  std::vector<std::size_t> perm;
  for (std::size_t i = 0; i < rank; ++i) if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  std::vector<std::size_t> inverse(rank);
  for (std::size_t i = 0; i < rank; ++i) inverse[perm[i]] = i;
  return {perm, inverse};
}

LowerFn softmaxOp(bool logarithm) {
  return [logarithm](LoweringContext &ctx, const NodeProto &node) {
    const std::string &out = node.output(0);
    const hwsim::Tensor x = ctx.device(node.input(0));
    const std::size_t rank = std::max<std::size_t>(x.rank(), 1);
    const hwsim::Tensor xr = x.rank() == 0 ? x.reshape({1}) : x;
    hwsim::Tensor y;
    if (ctx.opset() < 13) {
      // Before opset 13 softmax normalizes over all dimensions from `axis` on.
      const std::size_t axis = normalizeAxis(attrInt(node, "axis", 1), rank, nodeLabel(node));
      const std::size_t rows = hwsim::numElementsOf(hwsim::Shape(xr.shape().begin(), xr.shape().begin() + static_cast<std::ptrdiff_t>(axis)));
      y = hwsim::ops::softmax(ctx.graph(), ctx.main(), xr.reshape({rows, xr.numElements() / rows}), out).reshape(xr.shape());
    } else {
      y = softmaxAlong(ctx, xr, normalizeAxis(attrInt(node, "axis", -1), rank, nodeLabel(node)), out);
    }
    if (logarithm) y = hwsim::ops::unary(ctx.graph(), ctx.main(), "Log", y, out + "/log");
    ctx.setDevice(out, y.reshape(x.shape()), ctx.value(node.input(0)).type);
  };
}

// The axes a reduction node reduces (sorted, unique; all when none are
// given) and the shape of its result.
struct Reduction {
  std::vector<std::size_t> axes;
  hwsim::Shape shape;      // the result's shape, honouring keepdims
  hwsim::Shape keptShape;  // the result's shape with keepdims (for broadcasting back)
};

// The axes a reduction from `in` to the declared `out` reduced, when `out`
// tells them apart: with keepdims those where the dimension became 1 (size-1
// dimensions reduce to themselves); without, the one way to delete
// dimensions of `in` leaving `out` (counted by dynamic programming over
// suffixes, capped at 2). nullopt when several reductions give `out`.
std::optional<std::vector<std::int64_t>> axesFromShapes(const Dims &in, const Dims &out, bool keep) {
  std::vector<std::int64_t> axes;
  if (keep) {
    if (out.size() != in.size()) return std::nullopt;
    for (std::size_t d = 0; d < in.size(); ++d) {
      if (out[d] != in[d]) {
        if (out[d] != 1) return std::nullopt;
        axes.push_back(static_cast<std::int64_t>(d));
      }
    }
    return axes;
  }
  const std::size_t n = in.size(), m = out.size();
  if (m > n) return std::nullopt;
  // ways[i][j]: the ways (0, 1 or 2 for "several") in[i:] reduces to out[j:].
  std::vector<std::vector<int>> ways(n + 1, std::vector<int>(m + 1, 0));
  ways[n][m] = 1;
  for (std::size_t i = n; i-- > 0;) {
    for (std::size_t j = m + 1; j-- > 0;) {
      const int kept = j < m && in[i] == out[j] ? ways[i + 1][j + 1] : 0;
      ways[i][j] = std::min(2, kept + ways[i + 1][j]);
    }
  }
  if (ways[0][0] != 1) return std::nullopt;
  for (std::size_t i = 0, j = 0; i < n; ++i) {
    if (j < m && in[i] == out[j] && ways[i + 1][j + 1] == 1) ++j;
    else axes.push_back(static_cast<std::int64_t>(i));
  }
  return axes;
}

// The axes input when it is computed at run time: read off the declared output shape.
std::vector<std::int64_t> runTimeAxes(const LoweringContext &ctx, const NodeProto &node, const Dims &in) {
  const Dims out = declaredOutputDims(ctx, node, 0, "the reduction's axes");
  const auto axes = axesFromShapes(in, out, attrInt(node, "keepdims", 1) != 0);
  if (!axes) {
    throw UnsupportedNode("the reduction's axes are computed at run time and the output shape " + toString(out) +
                          " does not tell which axes of " + toString(in) + " are reduced");
  }
  return *axes;
}

// nullopt when noop_with_empty_axes makes the node the identity.
std::optional<Reduction> reductionOf(LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x) {
  std::vector<std::int64_t> given;
  bool runTime = false;
  if (auto a = attrInts(node, "axes")) {
    given = *a;
  } else if (!inputName(node, 1).empty() && !isConstantInput(ctx, node, 1)) {
    given = runTimeAxes(ctx, node, toDims(x.shape()));
    runTime = true;
  } else if (!inputName(node, 1).empty()) {
    given = constantInts(ctx, node, 1, "the reduction's axes");
  }
  // Axes read off the shapes are empty when nothing changes: the identity.
  if (given.empty() && (runTime || attrInt(node, "noop_with_empty_axes", 0) != 0)) return std::nullopt;
  Reduction r;
  for (const auto a : given) r.axes.push_back(normalizeAxis(a, x.rank(), nodeLabel(node)));
  if (r.axes.empty()) {
    r.axes.resize(x.rank());
    std::iota(r.axes.begin(), r.axes.end(), 0);
  }
  std::sort(r.axes.begin(), r.axes.end());
  r.axes.erase(std::unique(r.axes.begin(), r.axes.end()), r.axes.end());
  const bool keep = attrInt(node, "keepdims", 1) != 0;
  for (std::size_t d = 0; d < x.rank(); ++d) {
    const bool reduced = std::binary_search(r.axes.begin(), r.axes.end(), d);
    if (!reduced || keep) r.shape.push_back(reduced ? 1 : x.dim(static_cast<unsigned>(d)));
    r.keptShape.push_back(reduced ? 1 : x.dim(static_cast<unsigned>(d)));
  }
  return r;
}

hwsim::Tensor reduceOver(LoweringContext &ctx, const char *codelet, const hwsim::Tensor &x, const Reduction &r,
                         const std::string &name) {
  return hwsim::ops::reduce(ctx.graph(), ctx.main(), codelet, x, r.axes, name);
}

hwsim::Tensor unary(LoweringContext &ctx, const std::string &codelet, const hwsim::Tensor &x, const std::string &name) {
  return hwsim::ops::unary(ctx.graph(), ctx.main(), codelet, x, name);
}

// A reduction: `pre` (optional) maps x elementwise first, `codelet` reduces,
// `post` (optional) maps the result.
LowerFn reduceOp(std::string pre, std::string codelet, std::string post) {
  return [=](LoweringContext &ctx, const NodeProto &node) {
    const std::string &out = node.output(0);
    hwsim::Tensor x = ctx.device(node.input(0));
    const std::optional<Reduction> r = reductionOf(ctx, node, x);
    if (!r) {
      ctx.setDevice(out, x, ctx.value(node.input(0)).type);
      return;
    }
    if (pre == "Square") x = broadcastBinary(ctx, "Mul", x, x, out + "/square");
    else if (!pre.empty()) x = unary(ctx, pre, x, out + "/" + pre);
    hwsim::Tensor y = reduceOver(ctx, codelet.c_str(), x, *r, out);
    if (!post.empty()) y = unary(ctx, post, y, out + "/" + post);
    ctx.setDevice(out, y.reshape(r->shape), ctx.value(node.input(0)).type);
  };
}

// ReduceLogSumExp = log(sum(exp(x - m))) + m with m the maximum, so large
// inputs do not overflow exp.
void lowerReduceLogSumExp(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::optional<Reduction> r = reductionOf(ctx, node, x);
  if (!r) {
    ctx.setDevice(out, x, ctx.value(node.input(0)).type);
    return;
  }
  const hwsim::Tensor maximum = reduceOver(ctx, "ReduceMax", x, *r, out + "/max").reshape(r->keptShape);
  const hwsim::Tensor shifted = broadcastBinary(ctx, "Sub", x, maximum, out + "/shifted");
  const hwsim::Tensor sum = reduceOver(ctx, "ReduceSum", unary(ctx, "Exp", shifted, out + "/exp"), *r, out + "/sum");
  const hwsim::Tensor y = broadcastBinary(ctx, "Add", unary(ctx, "Log", sum, out + "/log").reshape(r->keptShape),
                                          maximum, out);
  ctx.setDevice(out, y.reshape(r->shape), ctx.value(node.input(0)).type);
}

// ArgMax, and ArgMin as the ArgMax of -x (the first minimum is the first
// maximum of the negation). select_last_index reads the axis reversed and
// maps the index found back: n - 1 - i.
LowerFn argExtremumOp(bool smallest) {
  return [smallest](LoweringContext &ctx, const NodeProto &node) {
    hwsim::Tensor x = ctx.device(node.input(0));
    const std::size_t axis = normalizeAxis(attrInt(node, "axis", 0), x.rank(), nodeLabel(node));
    const std::string &out = node.output(0);
    const bool last = attrInt(node, "select_last_index", 0) != 0;
    const auto n = static_cast<std::int64_t>(x.dim(static_cast<unsigned>(axis)));
    if (last) {
      std::vector<std::int64_t> reversed(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) reversed[static_cast<std::size_t>(i)] = n - 1 - i;
      x = takeView(x, axis, reversed);
    }
    if (smallest) x = hwsim::ops::unary(ctx.graph(), ctx.main(), "Neg", materialize(ctx, x, out + "/x"), out + "/neg");
    const auto [perm, inverse] = axisLast(axis, x.rank());
    // The device's ArgMax reads rows: bring a moved or reversed view into one variable.
    const hwsim::Tensor rows = axis + 1 == x.rank() && (smallest || !last)
                                   ? x
                                   : materialize(ctx, permuteView(x, perm), out + "/moved");
    hwsim::Tensor y = hwsim::ops::argMax(ctx.graph(), ctx.main(), rows, out);
    if (last) y = scalarBinary(ctx, "Add", scalarBinary(ctx, "Mul", y, -1.0, out + "/negate"), static_cast<double>(n - 1), out + "/from_end");
    hwsim::Shape shape = x.shape();
    if (attrInt(node, "keepdims", 1) != 0) shape[axis] = 1;
    else shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
    ctx.setDevice(out, y.reshape(shape), TP::INT64);
  };
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere, as ArgMax
// compared with 0..n-1. Before opset 13 the input is coerced to 2-D at axis
// (default 1); from 13 the axis (default -1) is moved last and back.
void lowerHardmax(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  const std::size_t rank = std::max<std::size_t>(x.rank(), 1);
  hwsim::Tensor rows;
  std::vector<std::size_t> inverse;
  if (ctx.opset() < 13) {
    const std::size_t axis = normalizeAxis(attrInt(node, "axis", 1), rank, nodeLabel(node));
    const std::size_t n = hwsim::numElementsOf(hwsim::Shape(x.shape().begin() + static_cast<std::ptrdiff_t>(axis), x.shape().end()));
    rows = x.reshape({x.numElements() / n, n});
  } else {
    const std::size_t axis = normalizeAxis(attrInt(node, "axis", -1), rank, nodeLabel(node));
    auto moves = axisLast(axis, rank);
    inverse = moves.second;
    rows = axis + 1 == rank ? x : materialize(ctx, permuteView(x, moves.first), out + "/moved");
  }
  const std::size_t n = rows.dim(static_cast<unsigned>(rows.rank() - 1));
  hwsim::Shape indexShape = rows.shape();
  indexShape.back() = 1;
  const std::string index = ctx.uniqueName(out + "/argmax"), iota = ctx.uniqueName(out + "/iota");
  ctx.setDevice(index, hwsim::ops::argMax(ctx.graph(), ctx.main(), rows, index).reshape(indexShape), TP::INT64);
  HostTensor positions{TP::INT64, {static_cast<std::int64_t>(n)}, {}};
  for (std::size_t i = 0; i < n; ++i) positions.values.push_back(static_cast<double>(i));
  ctx.setHost(iota, std::move(positions));
  const hwsim::Tensor hit = broadcastBinary(ctx, "Equal", index, iota, out + "/hit");
  hwsim::Tensor y = hwsim::ops::unary(ctx.graph(), ctx.main(), "Cast", hit, out, x.elementType());
  if (!inverse.empty()) y = permuteView(y, inverse);
  ctx.setDevice(out, y.reshape(x.shape()), type);
}

// TopK: k rounds of ArgMax over the axis moved last, each taking the
// maximum's value (GatherElements) and then replacing it with -inf
// (ScatterElements), so the values come out sorted and ties keep the lower
// index first. largest 0 works on -x. A k computed at run time is the
// declared output's size along the axis.
void lowerTopK(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::int32_t type = ctx.value(node.input(0)).type;
  if (!hwsim::isFloatingPoint(x.elementType())) throw UnsupportedNode("TopK of " + typeName(type));
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", -1), x.rank(), nodeLabel(node));
  std::int64_t k = 0;
  if (ctx.opset() < 10) {
    k = attrInt(node, "k", 0);
  } else if (ctx.isHost(node.input(1))) {
    k = static_cast<std::int64_t>(ctx.host(node.input(1)).values.at(0));
  } else {
    const Dims declared = declaredOutputDims(ctx, node, 0, "TopK's k");
    if (declared.size() != x.rank()) throw Error(ErrorCode::CorruptModel, "{}: output of rank {}", nodeLabel(node), declared.size());
    k = declared[axis];
  }
  const std::size_t n = x.dim(static_cast<unsigned>(axis));
  if (k <= 0 || static_cast<std::size_t>(k) > n) throw Error(ErrorCode::CorruptModel, "{}: k {} for an axis of {}", nodeLabel(node), k, n);
  const bool largest = attrInt(node, "largest", 1) != 0;
  const auto [perm, inverse] = axisLast(axis, x.rank());
  const std::size_t rows = x.numElements() / n;
  hwsim::Tensor current = materialize(ctx, permuteView(x, perm), out + "/moved").reshape({rows, n});
  if (!largest) current = scalarBinary(ctx, "Mul", current, -1.0, out + "/negated");
  const std::string lowest = ctx.uniqueName(out + "/lowest");
  ctx.setHost(lowest, HostTensor{type, {static_cast<std::int64_t>(rows), 1},
                                 std::vector<double>(rows, -std::numeric_limits<double>::infinity())});
  std::vector<hwsim::Tensor> values, indices;
  for (std::int64_t i = 0; i < k; ++i) {
    const std::string round = out + "/round" + std::to_string(i);
    const hwsim::Tensor index = hwsim::ops::argMax(ctx.graph(), ctx.main(), current, round + "/index").reshape({rows, 1});
    values.push_back(hwsim::ops::gatherElements(ctx.graph(), ctx.main(), current, index, 1, round + "/value"));
    indices.push_back(index);
    if (i + 1 < k) {
      current = hwsim::ops::scatterElements(ctx.graph(), ctx.main(), current, index, ctx.device(lowest), 1,
                                            hwsim::ops::ScatterReduction::None, round + "/rest");
    }
  }
  hwsim::Shape moved = permuteView(x, perm).shape();
  moved.back() = static_cast<std::size_t>(k);
  hwsim::Tensor v = materialize(ctx, hwsim::concat(values, 1), out + "/values");
  if (!largest) v = scalarBinary(ctx, "Mul", v, -1.0, out);
  ctx.setDevice(out, permuteView(v.reshape(moved), inverse), type);
  if (node.output_size() > 1 && !node.output(1).empty()) {
    const hwsim::Tensor idx = materialize(ctx, hwsim::concat(indices, 1), node.output(1) + "/indices");
    ctx.setDevice(node.output(1), permuteView(idx.reshape(moved), inverse), TP::INT64);
  }
}

}  // namespace

void registerReduceOps(OpRegistry &registry) {
  registry.add("Softmax", softmaxOp(false));
  registry.add("LogSoftmax", softmaxOp(true));
  for (const char *op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"}) {
    registry.add(op, reduceOp("", op, ""));
  }
  registry.add("ReduceLogSum", reduceOp("", "ReduceSum", "Log"));
  registry.add("ReduceLogSumExp", lowerReduceLogSumExp);
  registry.add("ReduceL1", reduceOp("Abs", "ReduceSum", ""));
  registry.add("ReduceL2", reduceOp("Square", "ReduceSum", "Sqrt"));
  registry.add("ReduceSumSquare", reduceOp("Square", "ReduceSum", ""));
  registry.add("ArgMax", argExtremumOp(false));
  registry.add("ArgMin", argExtremumOp(true));
  registry.add("Hardmax", lowerHardmax);
  registry.add("TopK", lowerTopK);
}

}  // namespace mrt::onnx
