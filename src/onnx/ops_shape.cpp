// Operators that only rearrange elements, lowered to hwsim views (no device
// work): Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout, Transpose,
// Concat, Split, Slice, DepthToSpace, SpaceToDepth (Gather is in
// ops_gather.cpp). Expand materializes its broadcast (a Copy) because
// vertices must not read repeated regions.
#include <algorithm>
#include <numeric>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"
#include "onnx/runtime_operands.hpp"
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

// input(0) reshaped to `out`, which must hold as many elements.
void setReshaped(LoweringContext &ctx, const NodeProto &node, const Dims &out) {
  const Dims in = ctx.value(node.input(0)).dims();
  if (numElements(in) != numElements(out)) {
    throw Error(ErrorCode::CorruptModel, "{}: cannot reshape {} to {}", nodeLabel(node), toString(in), toString(out));
  }
  setView(ctx, node, ctx.device(node.input(0)).reshape(toShape(out)));
}

// The output shape of a view op from its constant operand (`rule`), or the
// declared output shape when that operand is computed at run time.
template <typename Rule>
Dims viewDims(const LoweringContext &ctx, const NodeProto &node, int operand, const std::string &what, Rule rule) {
  if (!isConstantInput(ctx, node, operand) && !inputName(node, operand).empty()) {
    return declaredOutputDims(ctx, node, 0, what);
  }
  return rule();
}

void lowerReshape(LoweringContext &ctx, const NodeProto &node) {
  const Dims in = ctx.value(node.input(0)).dims();
  setReshaped(ctx, node, viewDims(ctx, node, 1, "Reshape's shape", [&] {
    return reshapeDims(in, constantInts(ctx, node, 1, "Reshape's shape"), attrInt(node, "allowzero", 0) != 0,
                       nodeLabel(node));
  }));
}

void lowerFlatten(LoweringContext &ctx, const NodeProto &node) {
  const Dims out = flattenDims(ctx.value(node.input(0)).dims(), attrInt(node, "axis", 1), nodeLabel(node));
  setView(ctx, node, ctx.device(node.input(0)).reshape(toShape(out)));
}

void lowerSqueeze(LoweringContext &ctx, const NodeProto &node) {
  setReshaped(ctx, node, viewDims(ctx, node, 1, "Squeeze's axes", [&] {
    return squeezeDims(ctx.value(node.input(0)).dims(), axesOf(ctx, node, 1), nodeLabel(node));
  }));
}

void lowerUnsqueeze(LoweringContext &ctx, const NodeProto &node) {
  setReshaped(ctx, node, viewDims(ctx, node, 1, "Unsqueeze's axes", [&] {
    return unsqueezeDims(ctx.value(node.input(0)).dims(), axesOf(ctx, node, 1), nodeLabel(node));
  }));
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
  if (auto split = attrInts(node, "split")) {
    sizes = *split;
  } else if (!inputName(node, 1).empty() && !isConstantInput(ctx, node, 1)) {
    // Computed at run time: the declared output shapes give the sizes.
    for (int i = 0; i < node.output_size(); ++i) {
      const Dims out = declaredOutputDims(ctx, node, i, "Split's split");
      sizes.push_back(out.size() == x.rank() ? out[axis] : -1);  // -1 fails the check below
    }
  } else if (!inputName(node, 1).empty()) {
    sizes = constantInts(ctx, node, 1, "Split's split");
  }
  const auto dim = static_cast<std::int64_t>(x.dim(static_cast<unsigned>(axis)));
  if (sizes.empty()) {
    const auto parts = static_cast<std::int64_t>(node.output_size());
    const std::int64_t each = (dim + parts - 1) / parts;  // the last part may be smaller
    for (std::int64_t begin = 0; begin < dim; begin += each) sizes.push_back(std::min(each, dim - begin));
  }
  const bool negative = std::any_of(sizes.begin(), sizes.end(), [](std::int64_t v) { return v < 0; });
  if (negative || sizes.size() != static_cast<std::size_t>(node.output_size()) || std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}) != dim) {
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
    for (int i = 1; i <= 4; ++i) {
      if (!inputName(node, i).empty() && !isConstantInput(ctx, node, i)) return lowerRuntimeSlice(ctx, node);
    }
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
  const auto to = broadcastDims(toDims(x.shape()), viewDims(ctx, node, 1, "Expand's shape", [&] {
    return constantInts(ctx, node, 1, "Expand's shape");
  }));
  if (!to) throw Error(ErrorCode::CorruptModel, "{}: cannot expand {}", nodeLabel(node), toString(toDims(x.shape())));
  setView(ctx, node, materialize(ctx, broadcastView(x, toShape(*to)), node.output(0)));
}

// DepthToSpace (DCR or CRD) and SpaceToDepth: the reshape, transpose,
// reshape that ONNX defines them by, as views.
hwsim::Tensor regroup(const hwsim::Tensor &x, const hwsim::Shape &split, const std::vector<std::size_t> &perm,
                      const hwsim::Shape &out) {
  return permuteView(x.reshape(split), perm).reshape(out);
}

void lowerDepthToSpace(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const auto b = static_cast<std::size_t>(attrInt(node, "blocksize", 0));
  if (x.rank() != 4 || b == 0 || x.dim(1) % (b * b) != 0) {
    throw Error(ErrorCode::CorruptModel, "{}: blocksize {} for input {}", nodeLabel(node), b, toString(toDims(x.shape())));
  }
  const std::size_t n = x.dim(0), c = x.dim(1) / (b * b), h = x.dim(2), w = x.dim(3);
  const std::string mode = attrString(node, "mode", "DCR");
  if (mode != "DCR" && mode != "CRD") throw Error(ErrorCode::CorruptModel, "{}: mode '{}'", nodeLabel(node), mode);
  const hwsim::Shape out = {n, c, h * b, w * b};
  setView(ctx, node, mode == "DCR" ? regroup(x, {n, b, b, c, h, w}, {0, 3, 4, 1, 5, 2}, out)
                                   : regroup(x, {n, c, b, b, h, w}, {0, 1, 4, 2, 5, 3}, out));
}

void lowerSpaceToDepth(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const auto b = static_cast<std::size_t>(attrInt(node, "blocksize", 0));
  if (x.rank() != 4 || b == 0 || x.dim(2) % b != 0 || x.dim(3) % b != 0) {
    throw Error(ErrorCode::CorruptModel, "{}: blocksize {} for input {}", nodeLabel(node), b, toString(toDims(x.shape())));
  }
  const std::size_t n = x.dim(0), c = x.dim(1), h = x.dim(2) / b, w = x.dim(3) / b;
  setView(ctx, node, regroup(x, {n, c, h, b, w, b}, {0, 3, 5, 1, 2, 4}, {n, c * b * b, h, w}));
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
  registry.add("DepthToSpace", lowerDepthToSpace);
  registry.add("SpaceToDepth", lowerSpaceToDepth);
}

}  // namespace mrt::onnx
