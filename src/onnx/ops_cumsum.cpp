// CumSum as a multiply: with the axis moved last, the rows [R, n] times an
// n x n matrix of ones and zeros M[i][j] = 1 where input i counts towards
// output j (i <= j; i < j exclusive; reversed: i >= j, i > j), built on the
// host. A run-time axis computes the sum along every axis and gathers the one
// the axis names on the device.
#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using TP = ::onnx::TensorProto;

// The cumulative sum of x along `axis`, shaped like x.
hwsim::Tensor cumSumAlong(LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &x, std::size_t axis,
                          const std::string &name) {
  const std::size_t n = x.dim(static_cast<unsigned>(axis));
  const bool exclusive = attrInt(node, "exclusive", 0) != 0, reverse = attrInt(node, "reverse", 0) != 0;
  HostTensor counts{ctx.value(node.input(0)).type, {static_cast<std::int64_t>(n), static_cast<std::int64_t>(n)},
                    std::vector<double>(n * n, 0.0)};
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const bool counted = reverse ? (exclusive ? i > j : i >= j) : (exclusive ? i < j : i <= j);
      counts.values[i * n + j] = counted ? 1.0 : 0.0;
    }
  }
  const std::string matrix = ctx.uniqueName(name + "/counts");
  ctx.setHost(matrix, std::move(counts));
  return mixAlong(ctx, x, axis, matrix, name);
}

void lowerCumSum(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const std::int32_t type = ctx.value(node.input(0)).type;
  const hwsim::Tensor x = ctx.device(node.input(0));
  if (type != TP::FLOAT && type != TP::FLOAT16 && type != TP::DOUBLE) throw UnsupportedNode("CumSum of " + typeName(type));
  if (x.rank() == 0 || x.numElements() == 0) throw UnsupportedNode("CumSum of a scalar or an empty tensor");
  if (numElements(ctx.value(node.input(1)).dims()) != 1) {
    throw Error(ErrorCode::CorruptModel, "{}: axis has {} elements, not 1", nodeLabel(node), numElements(ctx.value(node.input(1)).dims()));
  }
  if (ctx.isHost(node.input(1)) || x.rank() == 1) {
    // A 1-D input has one axis, whatever a run-time axis says (0 or -1).
    const std::int64_t axis = ctx.isHost(node.input(1)) ? saturatingInt64(ctx.host(node.input(1)).values[0]) : 0;
    ctx.setDevice(out, cumSumAlong(ctx, node, x, normalizeAxis(axis, x.rank(), nodeLabel(node)), out), type);
    return;
  }
  // Every axis's sum stacked on a new first axis; the run-time axis (a
  // negative one plus the rank) picks one (an out-of-range axis gives zeros).
  std::vector<hwsim::Tensor> candidates;
  hwsim::Shape one = x.shape();
  one.insert(one.begin(), 1);
  for (std::size_t d = 0; d < x.rank(); ++d) {
    candidates.push_back(cumSumAlong(ctx, node, x, d, out + "/axis" + std::to_string(d)).reshape(one));
  }
  const hwsim::Tensor stacked = materialize(ctx, hwsim::concat(candidates, 0), out + "/stacked");
  const hwsim::Tensor index = wrappedIndices(ctx, ctx.device(node.input(1)).reshape({1}), static_cast<std::int64_t>(x.rank()),
                                            out + "/axis");
  const hwsim::Tensor y = hwsim::ops::gather(ctx.graph(), ctx.main(), stacked, index, 0, out);
  ctx.setDevice(out, y.reshape(x.shape()), type);
}

}  // namespace

void registerCumSumOps(OpRegistry &registry) { registry.add("CumSum", lowerCumSum); }

}  // namespace mrt::onnx
