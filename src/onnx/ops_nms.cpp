// NonMaxSuppression (opsets 10, 11): how many boxes it selects depends on
// the values, so the output's shape is the one the model declares, [K, 3],
// and the selection runs on the device. Every (batch, class) row runs the
// greedy loop at once, unrolled over the boxes: each round picks the best
// remaining box (ArgMax; the lower index wins a tie), then drops the boxes
// overlapping it by more than iou_threshold. Box pairs' IoU is computed once
// per batch. The selections, in (batch, class, round) order, are then
// numbered by prefix sums (multiplies by triangular matrices) and scattered
// into the K output rows. The rounds make it suit tens of boxes, not thousands.
#include <algorithm>

#include "onnx/device_math.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

// Far below any score: the score of a box no longer in the running.
constexpr double kRemoved = 3e38;

struct Corners {
  hwsim::Tensor x1, y1, x2, y2;  // [batches, boxes], x1 <= x2 and y1 <= y2
};

// center_point_box 0: [y1, x1, y2, x2], any two opposite corners; 1: [x_center, y_center, width, height].
Corners cornersOf(DeviceMath &m, const hwsim::Tensor &boxes, bool centerPoint) {
  const std::size_t b = boxes.dim(0), n = boxes.dim(1);
  auto column = [&](std::size_t k) { return m.cast(boxes.slice(k, k + 1, 2).reshape({b, n}), hwsim::Type::F32); };
  const hwsim::Tensor c0 = column(0), c1 = column(1), c2 = column(2), c3 = column(3);
  if (centerPoint) {
    const hwsim::Tensor halfW = m.op("Mul", c2, 0.5), halfH = m.op("Mul", c3, 0.5);
    return {m.op("Sub", c0, halfW), m.op("Sub", c1, halfH), m.op("Add", c0, halfW), m.op("Add", c1, halfH)};
  }
  return {m.op("Min", c1, c3), m.op("Min", c0, c2), m.op("Max", c1, c3), m.op("Max", c0, c2)};
}

// 1 where box j survives box i being selected (IoU <= threshold), else 0: [batches, boxes, boxes].
hwsim::Tensor survivors(DeviceMath &m, const Corners &c, const hwsim::Tensor &iouThreshold) {
  const std::size_t b = c.x1.dim(0), n = c.x1.dim(1);
  auto rows = [&](const hwsim::Tensor &t) { return t.reshape({b, n, 1}); };
  auto cols = [&](const hwsim::Tensor &t) { return t.reshape({b, 1, n}); };
  auto overlap = [&](const hwsim::Tensor &lo, const hwsim::Tensor &hi) {
    return m.op("Max", m.op("Sub", m.op("Min", rows(hi), cols(hi)), m.op("Max", rows(lo), cols(lo))), 0.0);
  };
  const hwsim::Tensor area = m.op("Mul", m.op("Sub", c.x2, c.x1), m.op("Sub", c.y2, c.y1));
  const hwsim::Tensor inter = m.op("Mul", overlap(c.x1, c.x2), overlap(c.y1, c.y2));
  const hwsim::Tensor iou = m.op("Div", inter, m.op("Sub", m.op("Add", rows(area), cols(area)), inter));
  // A NaN IoU (two empty boxes) suppresses nothing, as "greater than" fails.
  return m.op("Sub", m.op("Mul", m.test("Greater", iou, iouThreshold, hwsim::Type::F32), -1.0), -1.0);
}

// The run-time scalar input i as F32 [1], or `fallback` when it is absent.
hwsim::Tensor scalarInput(LoweringContext &ctx, DeviceMath &m, const NodeProto &node, int i, double fallback) {
  if (!inputName(node, i).empty()) return m.cast(ctx.device(node.input(i)).reshape({1}), hwsim::Type::F32);
  return m.constant({1}, fallback, hwsim::Type::F32);
}

void lowerNonMaxSuppression(LoweringContext &ctx, const NodeProto &node) {
  const std::string &out = node.output(0);
  const hwsim::Tensor boxes = ctx.device(node.input(0)), scores = ctx.device(node.input(1));
  if (boxes.rank() != 3 || boxes.dim(2) != 4 || scores.rank() != 3 || scores.dim(0) != boxes.dim(0) ||
      scores.dim(2) != boxes.dim(1)) {
    throw Error(ErrorCode::CorruptModel, "{}: boxes {} and scores {} (want [batches, boxes, 4] and [batches, classes, boxes])",
                nodeLabel(node), toString(toDims(boxes.shape())), toString(toDims(scores.shape())));
  }
  const Dims declared = declaredOutputDims(ctx, node, 0, "the number of boxes NonMaxSuppression selects");
  if (declared.size() != 2 || declared[1] != 3) {
    throw Error(ErrorCode::CorruptModel, "{}: declared output shape {} (want [K, 3])", nodeLabel(node), toString(declared));
  }
  if (declared[0] == 0) throw UnsupportedNode("a NonMaxSuppression selecting no boxes (tensors with no elements)");
  const std::size_t batches = boxes.dim(0), classes = scores.dim(1), n = boxes.dim(1), rows = batches * classes;
  const auto k = static_cast<double>(declared[0]);
  DeviceMath m(ctx, out);
  // max_output_boxes_per_class bounds the rounds when it is a constant.
  std::size_t rounds = n;
  if (isConstantInput(ctx, node, 2)) {
    const std::vector<std::int64_t> limit = constantInts(ctx, node, 2, "max_output_boxes_per_class");
    if (!limit.empty()) rounds = static_cast<std::size_t>(std::clamp<std::int64_t>(limit[0], 1, static_cast<std::int64_t>(n)));
  }
  const hwsim::Tensor maxPerClass = scalarInput(ctx, m, node, 2, 0.0);
  const hwsim::Tensor iouThreshold = scalarInput(ctx, m, node, 3, 0.0);
  // Each (batch, class) row sees its batch's survivors matrix.
  const hwsim::Tensor keep = survivors(m, cornersOf(m, boxes, attrInt(node, "center_point_box", 0) != 0), iouThreshold);
  const hwsim::Tensor keepRows =
      m.materialized(broadcastView(keep.reshape({batches, 1, n, n}), {batches, classes, n, n})).reshape({rows, n, n});
  const hwsim::Tensor s = m.cast(scores.reshape({rows, n}), hwsim::Type::F32);
  // Boxes still in the running, 1 or 0: those scoring above score_threshold (all without one).
  hwsim::Tensor live = inputName(node, 4).empty()
                           ? m.constant({rows, n}, 1.0, hwsim::Type::F32)
                           : m.test("Greater", s, scalarInput(ctx, m, node, 4, 0.0), hwsim::Type::F32);
  const hwsim::Tensor boxIndex = m.iota(n).reshape({1, n});
  std::vector<hwsim::Tensor> picks, valid;
  for (std::size_t r = 0; r < rounds; ++r) {
    // s where live, far below every score elsewhere: s * live + (live - 1) * kRemoved.
    const hwsim::Tensor ranked = m.op("Add", m.op("Mul", s, live), m.op("Mul", m.op("Sub", live, 1.0), kRemoved));
    const hwsim::Tensor pick = m.s32(hwsim::ops::argMax(ctx.graph(), ctx.main(), ranked, ctx.uniqueName(out + "/pick"))).reshape({rows, 1});
    const hwsim::Tensor anyLive = hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceMax", live, {1}, ctx.uniqueName(out + "/any"));
    const hwsim::Tensor underLimit = m.test("Greater", maxPerClass, static_cast<double>(r), hwsim::Type::F32);
    valid.push_back(m.op("Mul", anyLive.reshape({rows, 1}), underLimit));
    picks.push_back(pick);
    if (r + 1 == rounds) break;
    const hwsim::Tensor at = m.materialized(broadcastView(pick.reshape({rows, 1, 1}), {rows, 1, n}));
    const hwsim::Tensor kept = m.takeElements(keepRows, at, 1).reshape({rows, n});
    const hwsim::Tensor notPicked = m.op("Sub", m.op("Mul", m.test("Equal", boxIndex, pick, hwsim::Type::F32), -1.0), -1.0);
    live = m.op("Mul", m.op("Mul", live, kept), notPicked);
  }
  // Output row of each selection: the selections before it in its row, plus
  // those of the rows before; K (dropped by the scatter) for no selection.
  const hwsim::Tensor picked = m.materialized(hwsim::concat(picks, 1));
  const hwsim::Tensor selected = m.materialized(hwsim::concat(valid, 1));
  const hwsim::Tensor inRow = m.prefixBefore(selected);
  const hwsim::Tensor counts = hwsim::ops::reduce(ctx.graph(), ctx.main(), "ReduceSum", selected, {1}, ctx.uniqueName(out + "/counts"));
  const hwsim::Tensor before = m.prefixBefore(counts.reshape({1, rows}));
  const hwsim::Tensor position = m.op("Add", inRow, before.reshape({rows, 1}));
  const hwsim::Tensor target = m.s32(m.op("Add", m.op("Mul", m.op("Sub", position, k), selected), k));
  const std::size_t total = rows * rounds;
  HostTensor batchClass{::onnx::TensorProto::INT32, {static_cast<std::int64_t>(total), 2}, {}};
  for (std::size_t i = 0; i < total; ++i) {
    batchClass.values.push_back(static_cast<double>(i / rounds / classes));
    batchClass.values.push_back(static_cast<double>(i / rounds % classes));
  }
  const hwsim::Tensor updates = m.materialized(
      hwsim::concat({ctx.deviceConstant(batchClass, ctx.uniqueName(out + "/batch_class")), picked.reshape({total, 1})}, 1));
  const hwsim::Tensor indices = m.materialized(broadcastView(target.reshape({total, 1}), {total, 3}));
  const hwsim::Tensor zeros = m.constant({static_cast<std::size_t>(declared[0]), 3}, 0.0, hwsim::Type::S32);
  ctx.setDevice(out,
                hwsim::ops::scatterElements(ctx.graph(), ctx.main(), zeros, indices, updates, 0,
                                            hwsim::ops::ScatterReduction::None, out),
                ::onnx::TensorProto::INT64);
}

}  // namespace

void registerNmsOps(OpRegistry &registry) { registry.add("NonMaxSuppression", lowerNonMaxSuppression); }

}  // namespace mrt::onnx
