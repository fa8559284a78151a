// Pad and Tile: operators that only repeat or surround the input's elements.
// Both are built as views (slices, takes, concats with constant bands) and
// then materialized by one Copy, because edge/reflect padding and tiling read
// elements more than once and vertices must not read repeated regions.
#include <algorithm>
#include <cstdlib>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"
#include "onnx/runtime_operands.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

PadMode padModeOf(const NodeProto &node) {
  const std::string mode = attrString(node, "mode", "constant");
  if (mode == "constant") return PadMode::Constant;
  if (mode == "edge") return PadMode::Edge;
  if (mode == "reflect") return PadMode::Reflect;
  throw UnsupportedNode("Pad with mode '" + mode + "' (constant, edge and reflect only)");
}

// The input index that padded position i (in [-before, n + after)) reads:
// edge repeats the border element, reflect mirrors around it without
// repeating it (numpy's reflect, folding again when the pad exceeds n - 1).
std::int64_t sourceIndex(std::int64_t i, std::int64_t n, PadMode mode) {
  if (mode == PadMode::Edge || n == 1) return std::clamp<std::int64_t>(i, 0, n - 1);
  const std::int64_t period = 2 * (n - 1);
  const std::int64_t j = std::abs(i) % period;
  return j < n ? j : period - j;
}

// x padded along one axis. Negative pads crop first (as ONNX Runtime does:
// the reference implementation has no negative pads), the rest pads what is left.
hwsim::Tensor padAxis(LoweringContext &ctx, const hwsim::Tensor &x, unsigned axis, std::int64_t before,
                      std::int64_t after, PadMode mode, double value, const std::string &name) {
  const auto n = static_cast<std::int64_t>(x.dim(axis));
  const std::int64_t cropBefore = std::max<std::int64_t>(0, -before), cropAfter = std::max<std::int64_t>(0, -after);
  if (cropBefore + cropAfter >= n) throw UnsupportedNode("a Pad cropping a dimension to nothing");
  const hwsim::Tensor kept = x.slice(static_cast<std::size_t>(cropBefore), static_cast<std::size_t>(n - cropAfter), axis);
  before = std::max<std::int64_t>(0, before);
  after = std::max<std::int64_t>(0, after);
  if (before == 0 && after == 0) return kept;
  if (mode == PadMode::Constant) {
    std::vector<hwsim::Tensor> parts;
    if (before > 0) parts.push_back(constantBand(ctx, kept, axis, static_cast<std::size_t>(before), value, name + "/before"));
    parts.push_back(kept);
    if (after > 0) parts.push_back(constantBand(ctx, kept, axis, static_cast<std::size_t>(after), value, name + "/after"));
    return hwsim::concat(parts, axis);
  }
  const auto m = static_cast<std::int64_t>(kept.dim(axis));
  std::vector<std::int64_t> indices;
  for (std::int64_t i = -before; i < m + after; ++i) indices.push_back(sourceIndex(i, m, mode));
  return takeView(kept, axis, indices);
}

// The padding value: the constant_value input (opset 11+) or the value attribute.
double padValue(const LoweringContext &ctx, const NodeProto &node) {
  const std::string &input = inputName(node, 2);
  if (input.empty()) return attrFloat(node, "value", 0.0f);
  const HostTensor &value = ctx.host(input);
  if (value.numElements() != 1) throw Error(ErrorCode::CorruptModel, "{}: constant_value has {} elements", nodeLabel(node), value.numElements());
  return value.values[0];
}

void lowerPad(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const std::size_t rank = x.rank();
  const PadMode mode = padModeOf(node);
  // opset < 11: pads is an attribute; from 11 an input, with optional axes from 18.
  std::vector<std::int64_t> pads = attrInts(node, "pads").value_or(std::vector<std::int64_t>{});
  const std::string &valueInput = inputName(node, 2);
  if (pads.empty() && (!isConstantInput(ctx, node, 1) || (!valueInput.empty() && !ctx.isHost(valueInput)))) {
    return lowerRuntimePad(ctx, node, mode);
  }
  if (pads.empty()) pads = constantInts(ctx, node, 1, "Pad's pads");
  std::vector<std::size_t> axes;
  if (!inputName(node, 3).empty()) {
    for (const auto a : constantInts(ctx, node, 3, "Pad's axes")) axes.push_back(normalizeAxis(a, rank, nodeLabel(node)));
  } else {
    for (std::size_t d = 0; d < rank; ++d) axes.push_back(d);
  }
  if (pads.size() != 2 * axes.size()) {
    throw Error(ErrorCode::CorruptModel, "{}: {} pads for {} axes", nodeLabel(node), pads.size(), axes.size());
  }
  const double value = padValue(ctx, node);
  hwsim::Tensor y = x;
  bool grows = false;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const std::int64_t before = pads[i], after = pads[i + axes.size()];
    if (before == 0 && after == 0) continue;
    grows = grows || before > 0 || after > 0;
    y = padAxis(ctx, y, static_cast<unsigned>(axes[i]), before, after, mode, value, node.output(0));
  }
  // Only cropping leaves a view of x's own elements, each once.
  ctx.setDevice(node.output(0), grows ? materialize(ctx, y, node.output(0)) : y, ctx.value(node.input(0)).type);
}

void lowerTile(LoweringContext &ctx, const NodeProto &node) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  std::vector<std::int64_t> repeats;
  if (isConstantInput(ctx, node, 1)) {
    repeats = constantInts(ctx, node, 1, "Tile's repeats");
  } else {  // computed at run time: the declared output shape over the input's
    const Dims out = declaredOutputDims(ctx, node, 0, "Tile's repeats");
    for (std::size_t d = 0; d < out.size() && d < x.rank(); ++d) {
      const auto in = static_cast<std::int64_t>(x.dim(static_cast<unsigned>(d)));
      if (in == 0 || out[d] % in != 0) {
        throw Error(ErrorCode::CorruptModel, "{}: output shape {} is no tiling of {}", nodeLabel(node), toString(out),
                    toString(toDims(x.shape())));
      }
      repeats.push_back(out[d] / in);
    }
  }
  if (repeats.size() != x.rank()) {
    throw Error(ErrorCode::CorruptModel, "{}: {} repeats for rank {}", nodeLabel(node), repeats.size(), x.rank());
  }
  hwsim::Tensor y = x;
  for (unsigned d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 0) throw Error(ErrorCode::CorruptModel, "{}: negative repeat {}", nodeLabel(node), repeats[d]);
    if (repeats[d] == 0) throw UnsupportedNode("Tile with a repeat of 0 (an empty result)");
    if (repeats[d] > 1) y = hwsim::concat(std::vector<hwsim::Tensor>(static_cast<std::size_t>(repeats[d]), y), d);
  }
  ctx.setDevice(node.output(0), y.numElements() == x.numElements() ? y : materialize(ctx, y, node.output(0)),
                ctx.value(node.input(0)).type);
}

}  // namespace

void registerPadTileOps(OpRegistry &registry) {
  registry.add("Pad", lowerPad);
  registry.add("Tile", lowerTile);
}

}  // namespace mrt::onnx
