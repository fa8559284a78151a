// Operators that only rearrange elements, lowered to hwsim views (no device
// work): Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout, Transpose,
// Concat, Split, Slice (Gather is in ops_gather.cpp). Expand materializes its
// broadcast (a Copy) because vertices must not read repeated regions.
#include <numeric>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"
#include "onnx/shapes.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

void setView(LoweringContext &ctx, const NodeProto &node, const hwsim::Tensor &view, int output = 0) {
  ctx.setDevice(node.output(output), view, ctx.value(node.input(0)).type);
}

// Axes from the attribute (older opsets) or the optional constant input i.
std::vector<std::int64_t> axesOf(const LoweringContext &ctx, const NodeProto &node, int i) {
  if (auto axes = attrInts(node, "axes")) return *axes;
  return inputName(node, i).empty() ? std::vector<std::int64_t>{} : constantInts(ctx, node, i, "axes");
}

void lowerReshape(LoweringContext &ctx, const NodeProto &node) {
  const Dims in = ctx.value(node.input(0)).dims();
  const Dims out = reshapeDims(in, constantInts(ctx, node, 1, "Reshape's shape"), attrInt(node, "allowzero", 0) != 0,
                               nodeLabel(node));
  setView(ctx, node, ctx.device(node.input(0)).reshape(toShape(out)));
}

void lowerFlatten(LoweringContext &ctx, const NodeProto &node) {
  const Dims out = flattenDims(ctx.value(node.input(0)).dims(), attrInt(node, "axis", 1), nodeLabel(node));
  setView(ctx, node, ctx.device(node.input(0)).reshape(toShape(out)));
}

void lowerSqueeze(LoweringContext &ctx, const NodeProto &node) {
  const Dims out = squeezeDims(ctx.value(node.input(0)).dims(), axesOf(ctx, node, 1), nodeLabel(node));
  setView(ctx, node, ctx.device(node.input(0)).reshape(toShape(out)));
}

void lowerUnsqueeze(LoweringContext &ctx, const NodeProto &node) {
  const Dims out = unsqueezeDims(ctx.value(node.input(0)).dims(), axesOf(ctx, node, 1), nodeLabel(node));
  setView(ctx, node, ctx.device(node.input(0)).reshape(toShape(out)));
}

// Identity and Dropout in inference: the input itself (Dropout's optional
// mask output is all true: nothing is dropped).
void lowerIdentity(LoweringContext &ctx, const NodeProto &node) {
  // Dropout in training mode drops at random: not inference, refused unless
  // training_mode is a constant false.
  if (const std::string &training = inputName(node, 2); !training.empty()) {
    const std::vector<std::int64_t> mode = constantInts(ctx, node, 2, "Dropout's training_mode");
    if (mode.empty() || mode[0] != 0) throw UnsupportedNode("Dropout with training_mode true (inference only)");
  }
  setView(ctx, node, ctx.device(node.input(0)));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    const Dims dims = ctx.value(node.input(0)).dims();
    ctx.setHost(node.output(1), HostTensor{::onnx::TensorProto::BOOL, dims, std::vector<double>(numElements(dims), 1.0)});
  }
}

std::vector<std::size_t> permutation(const NodeProto &node, std::size_t rank) {
  std::vector<std::size_t> perm(rank);
  std::iota(perm.rbegin(), perm.rend(), 0);  // the default reverses the dimensions
  if (auto given = attrInts(node, "perm")) {
    if (given->size() != rank) throw Error(ErrorCode::CorruptModel, "{}: perm has {} entries for rank {}", nodeLabel(node), given->size(), rank);
    std::vector<bool> seen(rank, false);
    for (std::size_t i = 0; i < rank; ++i) {
      perm[i] = normalizeAxis((*given)[i], rank, nodeLabel(node));
      if (seen[perm[i]]) throw Error(ErrorCode::CorruptModel, "{}: perm repeats axis {}", nodeLabel(node), perm[i]);
      seen[perm[i]] = true;
    }
  }
  return perm;
}

void lowerTranspose(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  setView(ctx, node, permuteView(x, permutation(node, x.rank())));
}

void lowerConcat(LoweringContext &ctx, const NodeProto &node) {
  std::vector<hwsim::Tensor> parts;
  for (const auto &name : node.input()) {
    if (numElements(ctx.value(name).dims()) > 0) parts.push_back(ctx.device(name));
  }
  if (parts.empty()) throw UnsupportedNode("Concat of empty tensors only");
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", 0), parts[0].rank(), nodeLabel(node));
  setView(ctx, node, hwsim::concat(parts, static_cast<unsigned>(axis)));
}

void lowerSplit(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::size_t axis = normalizeAxis(attrInt(node, "axis", 0), x.rank(), nodeLabel(node));
  std::vector<std::int64_t> sizes;
  if (auto split = attrInts(node, "split")) sizes = *split;
  else if (!inputName(node, 1).empty()) sizes = constantInts(ctx, node, 1, "Split's split");
  const auto dim = static_cast<std::int64_t>(x.dim(static_cast<unsigned>(axis)));
  if (sizes.empty()) {
    const auto parts = static_cast<std::int64_t>(node.output_size());
    const std::int64_t each = (dim + parts - 1) / parts;  // the last part may be smaller
    for (std::int64_t begin = 0; begin < dim; begin += each) sizes.push_back(std::min(each, dim - begin));
  }
  if (sizes.size() != static_cast<std::size_t>(node.output_size()) || std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}) != dim) {
    throw Error(ErrorCode::CorruptModel, "{}: split sizes {} do not cover dimension {} with {} outputs", nodeLabel(node), toString(sizes), dim, node.output_size());
  }
  std::size_t begin = 0;
  for (int i = 0; i < node.output_size(); ++i) {
    const auto size = static_cast<std::size_t>(sizes[static_cast<std::size_t>(i)]);
    if (size == 0) throw UnsupportedNode("an empty Split output");
    setView(ctx, node, x.slice(begin, begin + size, static_cast<unsigned>(axis)), i);
    begin += size;
  }
}

void lowerSlice(LoweringContext &ctx, const NodeProto &node) {
  hwsim::Tensor x = ctx.device(node.input(0));
  std::vector<std::int64_t> starts, ends, axes, steps;
  if (auto s = attrInts(node, "starts")) {  // opset < 10
    starts = *s;
    ends = attrInts(node, "ends").value_or(std::vector<std::int64_t>{});
    axes = attrInts(node, "axes").value_or(std::vector<std::int64_t>{});
  } else {
    starts = constantInts(ctx, node, 1, "Slice's starts");
    ends = constantInts(ctx, node, 2, "Slice's ends");
    if (!inputName(node, 3).empty()) axes = constantInts(ctx, node, 3, "Slice's axes");
    if (!inputName(node, 4).empty()) steps = constantInts(ctx, node, 4, "Slice's steps");
  }
  for (const AxisTake &take : sliceTakes(toDims(x.shape()), starts, ends, axes, steps, nodeLabel(node))) {
    x = takeView(x, take.axis, take.indices);
  }
  setView(ctx, node, x);
}

void lowerExpand(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const auto to = broadcastDims(toDims(x.shape()), constantInts(ctx, node, 1, "Expand's shape"));
  if (!to) throw Error(ErrorCode::CorruptModel, "{}: cannot expand {}", nodeLabel(node), toString(toDims(x.shape())));
  setView(ctx, node, materialize(ctx, broadcastView(x, toShape(*to)), node.output(0)));
}

}  // namespace

void registerShapeOps(OpRegistry &registry) {
  registry.add("Reshape", lowerReshape);
  registry.add("Flatten", lowerFlatten);
  registry.add("Squeeze", lowerSqueeze);
  registry.add("Unsqueeze", lowerUnsqueeze);
  registry.add("Identity", lowerIdentity);
  registry.add("Dropout", lowerIdentity);
  registry.add("Transpose", lowerTranspose);
  registry.add("Concat", lowerConcat);
  registry.add("Split", lowerSplit);
  registry.add("Slice", lowerSlice);
  registry.add("Expand", lowerExpand);
}

}  // namespace mrt::onnx
