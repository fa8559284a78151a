// The recurrent operators RNN, GRU and LSTM, unrolled at compile time: the
// sequence length is static after shape inference, so every time step becomes
// its own multiply and elementwise work. The input projection X W^T (and the
// biases that do not depend on the state) is one multiply over all steps; only
// H R^T and the gate arithmetic run per step.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include <hwsim/ops.hpp>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;

enum class CellKind { Rnn, Gru, Lstm };

// An activation of the ONNX recurrent-operator list with its parameters.
struct Activation {
  std::string name;
  float alpha = 0.0f, beta = 0.0f;
};

// What every step of every direction shares.
struct Recurrence {
  CellKind kind = CellKind::Rnn;
  std::int32_t type = ::onnx::TensorProto::FLOAT;
  std::size_t seq = 0, batch = 0, hidden = 0;
  std::size_t directions = 1;
  bool reverse = false;                // direction "reverse" (bidirectional runs its second one backwards)
  bool batchwise = false;              // layout 1: [batch, seq, ...] instead of [seq, batch, ...]
  std::optional<double> clip;          // bound of every gate activation's input
  std::vector<Activation> activations;  // per direction: f (, g (, h))
  bool linearBeforeReset = false;      // GRU
  bool inputForget = false;            // LSTM

  std::size_t gatesWidth() const { return (kind == CellKind::Rnn ? 1 : kind == CellKind::Gru ? 3 : 4) * hidden; }
};

struct State {
  hwsim::Tensor h, c;  // [batch, hidden]; c only for LSTM
};

std::vector<std::string> defaultActivations(CellKind kind) {
  switch (kind) {
    case CellKind::Rnn: return {"Tanh"};
    case CellKind::Gru: return {"Sigmoid", "Tanh"};
    case CellKind::Lstm: return {"Sigmoid", "Tanh", "Tanh"};
  }
  return {};
}

// Element i of dimension `axis` of t, that dimension dropped (a view).
hwsim::Tensor along(const hwsim::Tensor &t, unsigned axis, std::size_t i) {
  hwsim::Shape shape = t.shape();
  shape.erase(shape.begin() + axis);
  return t.slice(i, i + 1, axis).reshape(shape);
}

// The activations with their alpha and beta: the attribute lists are consumed
// in order by the activations that take a parameter (as ONNX Runtime reads
// them); those left without one get the ONNX operator's default.
std::vector<Activation> readActivations(const NodeProto &node, CellKind kind, std::size_t directions) {
  static const std::map<std::string, std::string> kCanonical = {
      {"relu", "Relu"}, {"tanh", "Tanh"}, {"sigmoid", "Sigmoid"}, {"affine", "Affine"},
      {"leakyrelu", "LeakyRelu"}, {"thresholdedrelu", "ThresholdedRelu"}, {"scaledtanh", "ScaledTanh"},
      {"hardsigmoid", "HardSigmoid"}, {"elu", "Elu"}, {"softsign", "Softsign"}, {"softplus", "Softplus"}};
  // Default alpha and beta of the activations that take them.
  static const std::map<std::string, std::pair<float, float>> kParameterDefaults = {
      {"Affine", {1.0f, 0.0f}}, {"LeakyRelu", {0.01f, 0.0f}}, {"ThresholdedRelu", {1.0f, 0.0f}},
      {"ScaledTanh", {1.0f, 1.0f}}, {"HardSigmoid", {0.2f, 0.5f}}, {"Elu", {1.0f, 0.0f}}};
  static const std::set<std::string> kTakesBeta = {"Affine", "ScaledTanh", "HardSigmoid"};

  std::vector<std::string> names;
  if (const auto *attr = findAttribute(node, "activations")) {
    names.assign(attr->strings().begin(), attr->strings().end());
  } else {
    for (std::size_t d = 0; d < directions; ++d) {
      for (const auto &n : defaultActivations(kind)) names.push_back(n);
    }
  }
  const std::size_t perDirection = defaultActivations(kind).size();
  if (names.size() != perDirection * directions) {
    throw Error(ErrorCode::CorruptModel, "{}: {} activations given, {} expected ({} per direction)", nodeLabel(node),
                names.size(), perDirection * directions, perDirection);
  }
  std::vector<float> alphas, betas;
  if (const auto *a = findAttribute(node, "activation_alpha")) alphas.assign(a->floats().begin(), a->floats().end());
  if (const auto *b = findAttribute(node, "activation_beta")) betas.assign(b->floats().begin(), b->floats().end());
  std::size_t nextAlpha = 0, nextBeta = 0;
  std::vector<Activation> result;
  for (const auto &given : names) {
    std::string lower = given;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return std::tolower(ch); });
    const auto canonical = kCanonical.find(lower);
    if (canonical == kCanonical.end()) throw UnsupportedNode("activations value '" + given + "'");
    Activation act{canonical->second};
    if (const auto p = kParameterDefaults.find(act.name); p != kParameterDefaults.end()) {
      act.alpha = nextAlpha < alphas.size() ? alphas[nextAlpha++] : p->second.first;
      act.beta = p->second.second;
      if (kTakesBeta.count(act.name)) act.beta = nextBeta < betas.size() ? betas[nextBeta++] : act.beta;
    }
    result.push_back(act);
  }
  return result;
}

// f(clip(x)), or f(x) when not `clipped`. Affine and ScaledTanh are not ONNX operators and are composed
// here; the others are lowered by the registry's own lowering of the ONNX
// operator of the same name, so each composition lives in one place.
hwsim::Tensor activate(LoweringContext &ctx, const Recurrence &r, const Activation &act, const hwsim::Tensor &x,
                       const std::string &name, bool clipped = true) {
  hwsim::Tensor in = x;
  if (clipped && r.clip) {
    in = scalarBinary(ctx, "Min", scalarBinary(ctx, "Max", in, -*r.clip, name + "/clip_lo"), *r.clip, name + "/clip");
  }
  if (act.name == "Affine") {
    return scalarBinary(ctx, "Add", scalarBinary(ctx, "Mul", in, act.alpha, name + "/scale"), act.beta, name);
  }
  if (act.name == "ScaledTanh") {
    const hwsim::Tensor scaled = scalarBinary(ctx, "Mul", in, act.beta, name + "/in_scale");
    const hwsim::Tensor tanh = hwsim::ops::unary(ctx.graph(), ctx.main(), "Tanh", scaled, name + "/tanh");
    return scalarBinary(ctx, "Mul", tanh, act.alpha, name);
  }
  NodeProto op;
  op.set_op_type(act.name);
  const std::string inName = ctx.uniqueName(name + "/in");
  ctx.setDevice(inName, in, r.type);
  op.add_input(inName);
  op.add_output(ctx.uniqueName(name));
  auto addFloat = [&](const char *attr, float v) {
    auto *a = op.add_attribute();
    a->set_name(attr);
    a->set_type(::onnx::AttributeProto::FLOAT);
    a->set_f(v);
  };
  if (act.name == "LeakyRelu" || act.name == "ThresholdedRelu" || act.name == "Elu") addFloat("alpha", act.alpha);
  if (act.name == "HardSigmoid") {
    addFloat("alpha", act.alpha);
    addFloat("beta", act.beta);
  }
  (*opRegistry().find(act.name))(ctx, op);
  return ctx.device(op.output(0));
}

// 1 - gate for gate = act(pre). A Sigmoid gate's is sigmoid(-pre): 1 - gate
// loses the small complement once the sigmoid rounds to 1 in F32.
hwsim::Tensor complement(LoweringContext &ctx, const Recurrence &r, const Activation &act, const hwsim::Tensor &pre,
                         const hwsim::Tensor &gate, const std::string &name) {
  if (act.name == "Sigmoid") return activate(ctx, r, act, scalarBinary(ctx, "Mul", pre, -1.0, name + "/neg"), name);
  return scalarBinary(ctx, "Add", scalarBinary(ctx, "Mul", gate, -1.0, name + "/neg"), 1.0, name);
}

hwsim::Tensor add(LoweringContext &ctx, const hwsim::Tensor &a, const hwsim::Tensor &b, const std::string &name) {
  return broadcastBinary(ctx, "Add", a, b, name);
}
hwsim::Tensor mul(LoweringContext &ctx, const hwsim::Tensor &a, const hwsim::Tensor &b, const std::string &name) {
  return broadcastBinary(ctx, "Mul", a, b, name);
}
// Columns [gate * hidden, (gate + count) * hidden) of a [rows, gates * hidden] tensor.
hwsim::Tensor gates(const hwsim::Tensor &t, std::size_t hidden, std::size_t gate, std::size_t count = 1) {
  return t.slice(gate * hidden, (gate + count) * hidden, static_cast<unsigned>(t.rank() - 1));
}

hwsim::Tensor matMul(LoweringContext &ctx, const Recurrence &r, const hwsim::Tensor &a, const hwsim::Tensor &b,
                     const std::string &name) {
  return hwsim::ops::matMul(ctx.graph(), ctx.main(), a, b, name, {}, *deviceType(r.type));
}

// W[d]^T or R[d]^T ([columns, gates * hidden]) as the rhs of a multiply by an
// lhs of `lhsShape`: a constant one transposed once on the host and laid out
// for the multiply, a run-time one as a transposed view.
hwsim::Tensor transposedWeights(LoweringContext &ctx, const std::string &name, std::size_t direction,
                                const hwsim::Shape &lhsShape) {
  if (!ctx.isHost(name)) return ctx.device(name)[direction].transpose();
  const HostTensor &w = ctx.host(name);
  const std::int64_t rows = w.dims[1], cols = w.dims[2];
  HostTensor t = transposedMatrix(w, direction * static_cast<std::size_t>(rows * cols), rows, cols);
  const std::string transposed = ctx.uniqueName(name + "/T" + std::to_string(direction));
  ctx.setHost(transposed, std::move(t));
  ctx.markInitializer(transposed);
  return ctx.device(transposed, [&](hwsim::Type type, const hwsim::Shape &shape, const std::string &handle) {
    return hwsim::ops::createMatMulInputRhs(ctx.graph(), type, lhsShape, shape, handle);
  });
}

// The weights and biases of one direction.
struct DirectionWeights {
  hwsim::Tensor rT;             // [hidden, gates * hidden]
  hwsim::Tensor recurrentBias;  // GRU with linear_before_reset and B: Rbh, added to H Rh^T; else invalid
  hwsim::Tensor peepholes;      // LSTM with P: [3 * hidden] (i, o, f); else invalid
};

// One step of each cell: the new state from the previous one and this
// step's input projection (biases included); `act` are the direction's
// activations.
State rnnStep(LoweringContext &ctx, const Recurrence &r, const Activation *act, const DirectionWeights &w,
              const State &prev, const hwsim::Tensor &xProjection, const std::string &name) {
  const hwsim::Tensor pre = add(ctx, xProjection, matMul(ctx, r, prev.h, w.rT, name + "/HR"), name + "/pre");
  return {activate(ctx, r, act[0], pre, name + "/H"), {}};
}

// Gate order z, r, h; the reset gate scales H before the multiply by Rh, or
// its result under linear_before_reset.
State gruStep(LoweringContext &ctx, const Recurrence &r, const Activation *act, const DirectionWeights &w,
              const State &prev, const hwsim::Tensor &xProjection, const std::string &name) {
  const std::size_t n = r.hidden;
  hwsim::Tensor zrPre, hr;
  if (r.linearBeforeReset) {
    const hwsim::Tensor all = matMul(ctx, r, prev.h, w.rT, name + "/HR");
    zrPre = add(ctx, gates(xProjection, n, 0, 2), gates(all, n, 0, 2), name + "/zr_pre");
    hr = w.recurrentBias.valid() ? add(ctx, gates(all, n, 2), w.recurrentBias, name + "/HRh") : gates(all, n, 2);
  } else {
    zrPre = add(ctx, gates(xProjection, n, 0, 2), matMul(ctx, r, prev.h, gates(w.rT, n, 0, 2), name + "/HRzr"),
                name + "/zr_pre");
  }
  const hwsim::Tensor zr = activate(ctx, r, act[0], zrPre, name + "/zr");
  const hwsim::Tensor z = gates(zr, n, 0), reset = gates(zr, n, 1);
  hr = r.linearBeforeReset
           ? mul(ctx, reset, hr, name + "/reset")
           : matMul(ctx, r, mul(ctx, reset, prev.h, name + "/reset"), gates(w.rT, n, 2), name + "/HRh");
  const hwsim::Tensor candidate =
      activate(ctx, r, act[1], add(ctx, gates(xProjection, n, 2), hr, name + "/h_pre"), name + "/h");
  const hwsim::Tensor update =
      mul(ctx, complement(ctx, r, act[0], gates(zrPre, n, 0), z, name + "/one_minus_z"), candidate, name + "/update");
  return {add(ctx, update, mul(ctx, z, prev.h, name + "/keep"), name + "/H"), {}};
}

// Gate order i, o, f, c; peepholes P = [Pi, Po, Pf].
State lstmStep(LoweringContext &ctx, const Recurrence &r, const Activation *act, const DirectionWeights &w,
               const State &prev, const hwsim::Tensor &xProjection, const std::string &name) {
  const std::size_t n = r.hidden;
  const hwsim::Tensor pre = add(ctx, xProjection, matMul(ctx, r, prev.h, w.rT, name + "/HR"), name + "/pre");
  auto peep = [&](const hwsim::Tensor &gate, std::size_t p, const hwsim::Tensor &c, const std::string &gname) {
    if (!w.peepholes.valid()) return gate;
    return add(ctx, gate, mul(ctx, c, gates(w.peepholes, n, p), gname + "/peep"), gname + "/pre");
  };
  const hwsim::Tensor iPre = peep(gates(pre, n, 0), 0, prev.c, name + "/i");
  const hwsim::Tensor i = activate(ctx, r, act[0], iPre, name + "/i");
  // input_forget couples the gates: f = 1 - i.
  const hwsim::Tensor f = r.inputForget
                              ? complement(ctx, r, act[0], iPre, i, name + "/f")
                              : activate(ctx, r, act[0], peep(gates(pre, n, 2), 2, prev.c, name + "/f"), name + "/f");
  const hwsim::Tensor cand = activate(ctx, r, act[1], gates(pre, n, 3), name + "/c");
  const hwsim::Tensor c =
      add(ctx, mul(ctx, f, prev.c, name + "/forget"), mul(ctx, i, cand, name + "/input"), name + "/C");
  const hwsim::Tensor o = activate(ctx, r, act[0], peep(gates(pre, n, 1), 1, c, name + "/o"), name + "/o");
  // h's input is the cell state, not a gate: it is not clipped.
  return {mul(ctx, o, activate(ctx, r, act[2], c, name + "/h_of_C", false), name + "/H"), c};
}

State step(LoweringContext &ctx, const Recurrence &r, const Activation *act, const DirectionWeights &w,
           const State &prev, const hwsim::Tensor &xProjection, const std::string &name) {
  switch (r.kind) {
    case CellKind::Rnn: return rnnStep(ctx, r, act, w, prev, xProjection, name);
    case CellKind::Gru: return gruStep(ctx, r, act, w, prev, xProjection, name);
    case CellKind::Lstm: return lstmStep(ctx, r, act, w, prev, xProjection, name);
  }
  return {};
}

// The initial state of direction d from the optional input `input`, zeros without it.
hwsim::Tensor initialState(LoweringContext &ctx, const Recurrence &r, const NodeProto &node, int input,
                           std::size_t d, const std::string &name) {
  const std::string &given = inputName(node, input);
  if (!given.empty()) return along(ctx.device(given), r.batchwise ? 1 : 0, d);
  const Dims dims{static_cast<std::int64_t>(r.batch), static_cast<std::int64_t>(r.hidden)};
  return ctx.deviceConstant(HostTensor{r.type, dims, std::vector<double>(numElements(dims), 0.0)},
                            ctx.uniqueName(name));
}

// Per time step t, [batch, hidden] of 1 where t < sequence_lens[b], else 0;
// none when every sequence is known to be whole.
std::vector<hwsim::Tensor> stepMasks(LoweringContext &ctx, const Recurrence &r, const NodeProto &node,
                                     const std::string &name) {
  const std::string &lens = inputName(node, 4);
  if (lens.empty()) return {};
  if (ctx.isHost(lens)) {
    const std::vector<std::int64_t> given = constantInts(ctx, node, 4, "sequence_lens");
    const auto whole = [&](std::int64_t len) { return len == static_cast<std::int64_t>(r.seq); };
    if (std::all_of(given.begin(), given.end(), whole)) return {};
  }
  const hwsim::Tensor perRow = ctx.device(lens).reshape({r.batch, 1});
  const hwsim::Tensor lengths = materialize(ctx, broadcastView(perRow, {r.batch, r.hidden}), name + "/lengths");
  std::vector<hwsim::Tensor> masks;
  for (std::size_t t = 0; t < r.seq; ++t) {
    masks.push_back(mask(ctx, "Greater", lengths, static_cast<double>(t), name + "/mask" + std::to_string(t),
                         *deviceType(r.type)));
  }
  return masks;
}

void checkAttributes(const NodeProto &node, CellKind kind) {
  std::set<std::string> known = {"activation_alpha", "activation_beta", "activations", "clip",
                                 "direction", "hidden_size", "layout",
                                 // Before opset 7: Y is produced whenever it is named, so this is moot.
                                 "output_sequence"};
  if (kind == CellKind::Gru) known.insert("linear_before_reset");
  if (kind == CellKind::Lstm) known.insert("input_forget");
  for (const auto &a : node.attribute()) {
    if (!known.count(a.name())) throw UnsupportedNode(node.op_type() + " attribute '" + a.name() + "'");
  }
}

// The node's attributes and shapes, checked.
Recurrence readRecurrence(LoweringContext &ctx, const NodeProto &node, CellKind kind, const hwsim::Tensor &x) {
  checkAttributes(node, kind);
  Recurrence r;
  r.kind = kind;
  r.type = ctx.value(node.input(0)).type;
  if (r.type != ::onnx::TensorProto::FLOAT && r.type != ::onnx::TensorProto::FLOAT16) {
    throw UnsupportedNode(node.op_type() + " of " + typeName(r.type) + " (only FLOAT and FLOAT16)");
  }
  const std::int64_t layout = attrInt(node, "layout", 0);
  if (layout != 0 && layout != 1) throw UnsupportedNode("layout " + std::to_string(layout));
  r.batchwise = layout == 1;
  if (x.rank() != 3) throw Error(ErrorCode::CorruptModel, "{}: X must be rank 3", nodeLabel(node));
  r.seq = x.dim(r.batchwise ? 1 : 0);
  r.batch = x.dim(r.batchwise ? 0 : 1);
  const std::string direction = attrString(node, "direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    throw UnsupportedNode("direction '" + direction + "'");
  }
  r.directions = direction == "bidirectional" ? 2 : 1;
  r.reverse = direction == "reverse";
  const Dims wDims = ctx.value(node.input(1)).dims(), rDims = ctx.value(node.input(2)).dims();
  r.hidden = rDims.size() == 3 ? static_cast<std::size_t>(rDims[2]) : 0;
  const Dims expectedW = toDims({r.directions, r.gatesWidth(), x.dim(2)});
  const Dims expectedR = toDims({r.directions, r.gatesWidth(), r.hidden});
  if (wDims != expectedW || rDims != expectedR ||
      attrInt(node, "hidden_size", static_cast<std::int64_t>(r.hidden)) != static_cast<std::int64_t>(r.hidden)) {
    throw Error(ErrorCode::CorruptModel, "{}: W {} and R {} do not fit X {}, hidden_size {} and {} direction(s)",
                nodeLabel(node), toString(wDims), toString(rDims), toString(toDims(x.shape())),
                attrInt(node, "hidden_size", 0), r.directions);
  }
  if (findAttribute(node, "clip")) r.clip = attrFloat(node, "clip", 0.0f);
  r.activations = readActivations(node, kind, r.directions);
  r.linearBeforeReset = attrInt(node, "linear_before_reset", 0) != 0;
  r.inputForget = attrInt(node, "input_forget", 0) != 0;
  return r;
}

// X W^T plus the biases that do not depend on the state, for every step of
// direction d at once: [seq, batch, gates * hidden] ([batch, seq, ...]
// batchwise). Sets w.recurrentBias when a bias must stay out of it.
hwsim::Tensor inputProjection(LoweringContext &ctx, const Recurrence &r, const NodeProto &node, const hwsim::Tensor &x,
                              std::size_t d, DirectionWeights &w, const std::string &name) {
  const std::size_t rows = r.seq * r.batch, inputSize = x.dim(2), width = r.gatesWidth();
  const hwsim::Tensor wT = transposedWeights(ctx, node.input(1), d, {rows, inputSize});
  hwsim::Tensor projection = matMul(ctx, r, x.reshape({rows, inputSize}), wT, name + "/XW");
  if (const std::string &bias = inputName(node, 3); !bias.empty()) {
    // B = [Wb, Rb]; Rb joins Wb here except GRU's Rbh under
    // linear_before_reset, which the reset gate scales.
    const hwsim::Tensor b = ctx.device(bias)[d];
    const hwsim::Tensor wb = b.slice(0, width), rb = b.slice(width, 2 * width);
    hwsim::Tensor inputBias = add(ctx, wb, rb, name + "/bias");
    if (r.kind == CellKind::Gru && r.linearBeforeReset) {
      inputBias = hwsim::concat({gates(inputBias, r.hidden, 0, 2), gates(wb, r.hidden, 2)}, 0);
      w.recurrentBias = gates(rb, r.hidden, 2);
    }
    projection = add(ctx, projection, inputBias, name + "/XW_bias");
  }
  return projection.reshape(r.batchwise ? hwsim::Shape{r.batch, r.seq, width} : hwsim::Shape{r.seq, r.batch, width});
}

// The hidden state of every time step, and the last state, of one direction.
struct DirectionResult {
  std::vector<hwsim::Tensor> hs;
  State last;
};

DirectionResult runDirection(LoweringContext &ctx, const Recurrence &r, const NodeProto &node, const hwsim::Tensor &x,
                             std::size_t d, const std::vector<hwsim::Tensor> &masks, const std::string &name) {
  DirectionWeights w;
  const hwsim::Tensor projection = inputProjection(ctx, r, node, x, d, w, name);
  w.rT = transposedWeights(ctx, node.input(2), d, {r.batch, r.hidden});
  if (r.kind == CellKind::Lstm && !inputName(node, 7).empty()) w.peepholes = ctx.device(node.input(7))[d];
  State state{initialState(ctx, r, node, 5, d, name + "/H0"),
              r.kind == CellKind::Lstm ? initialState(ctx, r, node, 6, d, name + "/C0") : hwsim::Tensor{}};
  const bool reverse = r.reverse || d == 1;
  const Activation *act = &r.activations[d * defaultActivations(r.kind).size()];
  DirectionResult result{std::vector<hwsim::Tensor>(r.seq), {}};
  for (std::size_t s = 0; s < r.seq; ++s) {
    const std::size_t t = reverse ? r.seq - 1 - s : s;
    const std::string sname = name + "/t" + std::to_string(t);
    const State next = step(ctx, r, act, w, state, along(projection, r.batchwise ? 1 : 0, t), sname);
    if (masks.empty()) {
      state = next;
      result.hs[t] = state.h;
      continue;
    }
    // Past its length a sequence keeps its state and outputs zeros.
    auto masked = [&](const hwsim::Tensor &prev, const hwsim::Tensor &now, const std::string &what) {
      const hwsim::Tensor change = broadcastBinary(ctx, "Sub", now, prev, sname + "/" + what + "_change");
      return add(ctx, prev, mul(ctx, masks[t], change, sname + "/" + what + "_masked"), sname + "/" + what);
    };
    result.hs[t] = mul(ctx, masks[t], next.h, sname + "/Y");
    state = {masked(state.h, next.h, "H"), next.c.valid() ? masked(state.c, next.c, "C") : hwsim::Tensor{}};
  }
  result.last = state;
  return result;
}

// Y: [seq, directions, batch, hidden]; Y_h and Y_c: [directions, batch,
// hidden]. Batchwise, batch comes first: [batch, seq, directions, hidden] and
// [batch, directions, hidden].
void setOutputs(LoweringContext &ctx, const Recurrence &r, const NodeProto &node,
                const std::vector<DirectionResult> &results) {
  auto output = [&](int i) { return i < node.output_size() ? node.output(i) : std::string(); };
  const std::size_t b = r.batch, n = r.hidden;
  if (!output(0).empty()) {
    std::vector<hwsim::Tensor> steps;
    for (std::size_t t = 0; t < r.seq; ++t) {
      std::vector<hwsim::Tensor> perDirection;
      for (const DirectionResult &result : results) {
        perDirection.push_back(result.hs[t].reshape(r.batchwise ? hwsim::Shape{b, 1, 1, n} : hwsim::Shape{1, 1, b, n}));
      }
      steps.push_back(hwsim::concat(perDirection, r.batchwise ? 2 : 1));
    }
    ctx.setDevice(output(0), hwsim::concat(steps, r.batchwise ? 1 : 0), r.type);
  }
  auto lastOf = [&](hwsim::Tensor State::*member) {
    const hwsim::Shape shape = r.batchwise ? hwsim::Shape{b, 1, n} : hwsim::Shape{1, b, n};
    std::vector<hwsim::Tensor> perDirection;
    for (const DirectionResult &result : results) perDirection.push_back((result.last.*member).reshape(shape));
    return hwsim::concat(perDirection, r.batchwise ? 1 : 0);
  };
  if (!output(1).empty()) ctx.setDevice(output(1), lastOf(&State::h), r.type);
  if (r.kind == CellKind::Lstm && !output(2).empty()) ctx.setDevice(output(2), lastOf(&State::c), r.type);
}

void lowerRecurrent(LoweringContext &ctx, const NodeProto &node, CellKind kind) {
  const hwsim::Tensor x = ctx.device(node.input(0));
  const Recurrence r = readRecurrence(ctx, node, kind, x);
  // Device names derive from the first output the node has; with none
  // there is nothing to compute.
  const auto named = std::find_if(node.output().begin(), node.output().end(),
                                   [](const std::string &o) { return !o.empty(); });
  if (named == node.output().end()) return;
  const std::string out = *named;
  const std::vector<hwsim::Tensor> masks = stepMasks(ctx, r, node, out);
  std::vector<DirectionResult> results;
  for (std::size_t d = 0; d < r.directions; ++d) {
    results.push_back(runDirection(ctx, r, node, x, d, masks, out + "/dir" + std::to_string(d)));
  }
  setOutputs(ctx, r, node, results);
}

}  // namespace

void registerRnnOps(OpRegistry &registry) {
  registry.add("RNN", [](LoweringContext &ctx, const NodeProto &node) { lowerRecurrent(ctx, node, CellKind::Rnn); });
  registry.add("GRU", [](LoweringContext &ctx, const NodeProto &node) { lowerRecurrent(ctx, node, CellKind::Gru); });
  registry.add("LSTM", [](LoweringContext &ctx, const NodeProto &node) { lowerRecurrent(ctx, node, CellKind::Lstm); });
}

}  // namespace mrt::onnx
