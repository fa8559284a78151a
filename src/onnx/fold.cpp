#include "onnx/fold.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>
#include <algorithm>

#include "onnx/shapes.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using TP = ::onnx::TensorProto;

using Inputs = std::vector<const HostTensor *>;  // nullptr for an absent optional input

std::vector<std::int64_t> ints(const HostTensor *t) {
  std::vector<std::int64_t> out;
  if (t) for (const double v : t->values) out.push_back(saturatingInt64(v));
  return out;
}

HostTensor int64Tensor(Dims dims, std::vector<double> values) { return HostTensor{TP::INT64, std::move(dims), std::move(values)}; }

// The elements of t at `indices` along `axis` (Gather and Slice on the host).
HostTensor takeAlong(const HostTensor &t, std::size_t axis, const std::vector<std::int64_t> &indices) {
  const std::size_t outer = numElements(Dims(t.dims.begin(), t.dims.begin() + static_cast<std::ptrdiff_t>(axis)));
  const std::size_t inner = numElements(Dims(t.dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, t.dims.end()));
  const auto dim = static_cast<std::size_t>(t.dims[axis]);
  HostTensor out{t.type, t.dims, {}};
  out.dims[axis] = static_cast<std::int64_t>(indices.size());
  for (std::size_t o = 0; o < outer; ++o) {
    for (const auto i : indices) {
      const auto begin = t.values.begin() + static_cast<std::ptrdiff_t>((o * dim + static_cast<std::size_t>(i)) * inner);
      out.values.insert(out.values.end(), begin, begin + static_cast<std::ptrdiff_t>(inner));
    }
  }
  return out;
}

std::vector<std::int64_t> axesOf(const NodeProto &node, const Inputs &in, std::size_t i) {
  if (auto a = attrInts(node, "axes")) return *a;
  return i < in.size() ? ints(in[i]) : std::vector<std::int64_t>{};
}

HostTensor reshaped(const HostTensor &t, Dims dims) {
  HostTensor out = t;
  out.dims = std::move(dims);
  return out;
}

const std::map<std::string, std::function<double(double, double)>> &binaryFunctions() {
  static const std::map<std::string, std::function<double(double, double)>> f = {
      {"Add", std::plus<double>()}, {"Sub", std::minus<double>()}, {"Mul", std::multiplies<double>()},
      {"Div", [](double a, double b) { return a / b; }}, {"Pow", [](double a, double b) { return std::pow(a, b); }},
      {"Max", [](double a, double b) { return std::max(a, b); }}, {"Min", [](double a, double b) { return std::min(a, b); }},
      {"Equal", [](double a, double b) { return a == b ? 1.0 : 0.0; }}, {"Less", [](double a, double b) { return a < b ? 1.0 : 0.0; }},
      {"Greater", [](double a, double b) { return a > b ? 1.0 : 0.0; }}, {"And", [](double a, double b) { return a != 0 && b != 0 ? 1.0 : 0.0; }},
      {"Or", [](double a, double b) { return a != 0 || b != 0 ? 1.0 : 0.0; }}};
  return f;
}

const std::map<std::string, std::function<double(double)>> &unaryFunctions() {
  static const std::map<std::string, std::function<double(double)>> f = {
      {"Neg", [](double x) { return -x; }}, {"Abs", [](double x) { return std::abs(x); }},
      {"Sqrt", [](double x) { return std::sqrt(x); }}, {"Exp", [](double x) { return std::exp(x); }},
      {"Log", [](double x) { return std::log(x); }}, {"Reciprocal", [](double x) { return 1.0 / x; }},
      {"Floor", [](double x) { return std::floor(x); }}, {"Ceil", [](double x) { return std::ceil(x); }},
      {"Relu", [](double x) { return std::max(x, 0.0); }}, {"Not", [](double x) { return x == 0 ? 1.0 : 0.0; }}};
  return f;
}

// The most elements one folded result may have (512 MiB of doubles): shapes
// made of constants (ConstantOfShape, Range, Expand, broadcasting) can ask for
// anything, and their element counts must not overflow either.
constexpr std::size_t kMaxFoldedElements = std::size_t{1} << 26;

// dims' element count; ResourceExhausted naming the node beyond kMaxFoldedElements.
std::size_t foldedElements(const Dims &dims, const std::string &what) {
  std::size_t n = 1;
  for (const auto d : dims) {
    if (d <= 0) return 0;
    if (n > kMaxFoldedElements / static_cast<std::size_t>(d)) {
      throw Error(ErrorCode::ResourceExhausted, "{}: a constant result of shape {} is more than the {} elements "
                                                "folding evaluates on the host", what, toString(dims), kMaxFoldedElements);
    }
    n *= static_cast<std::size_t>(d);
  }
  return n;
}

bool isComparison(const std::string &op) { return op == "Equal" || op == "Less" || op == "Greater" || op == "And" || op == "Or"; }

HostTensor elementwise(const NodeProto &node, const HostTensor &a, const HostTensor &b) {
  const auto dims = broadcastDims(a.dims, b.dims);
  if (!dims) throw Error(ErrorCode::CorruptModel, "{}: shapes {} and {} do not broadcast", nodeLabel(node), toString(a.dims), toString(b.dims));
  foldedElements(*dims, nodeLabel(node));
  const HostTensor x = broadcastTo(a, *dims), y = broadcastTo(b, *dims);
  HostTensor out{isComparison(node.op_type()) ? static_cast<std::int32_t>(TP::BOOL) : a.type, *dims, std::vector<double>(x.values.size())};
  const auto &f = binaryFunctions().at(node.op_type());
  for (std::size_t i = 0; i < x.values.size(); ++i) out.values[i] = f(x.values[i], y.values[i]);
  convertValues(out.values, out.type);  // integer Div truncates, FLOAT rounds
  return out;
}

HostTensor constantValue(const NodeProto &node) {
  for (const auto &a : node.attribute()) {
    if (a.name() == "value") return fromProto(a.t());
    if (a.name() == "value_float") return HostTensor{TP::FLOAT, {}, {a.f()}};
    if (a.name() == "value_int") return int64Tensor({}, {static_cast<double>(a.i())});
    if (a.name() == "value_floats") return HostTensor{TP::FLOAT, {a.floats_size()}, std::vector<double>(a.floats().begin(), a.floats().end())};
    if (a.name() == "value_ints") return int64Tensor({a.ints_size()}, std::vector<double>(a.ints().begin(), a.ints().end()));
  }
  throw UnsupportedNode("a Constant without a dense value (sparse_value and strings are not supported)");
}

// The outputs of node on constant inputs; nullopt for an op the host does not evaluate.
std::optional<HostTensor> evaluate(const NodeProto &node, const Inputs &in, const Dims &firstDims) {
  const std::string &op = node.op_type();
  const std::string what = nodeLabel(node);
  if (op == "Constant") return constantValue(node);
  // An empty input name ("" for an optional input) is a nullptr: only
  // Slice's axes and steps and Dropout's ratio and training_mode may be.
  if (op != "Shape" && op != "Size") {
    if (in.empty()) return std::nullopt;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const bool optional = (op == "Slice" && i >= 3) || (op == "Dropout" && i >= 1);
      if (in[i] == nullptr && !optional) return std::nullopt;
    }
  }
  if (op == "Shape") {
    const auto rank = static_cast<std::int64_t>(firstDims.size());
    auto clampAxis = [&](std::int64_t a) { return std::clamp<std::int64_t>(a < 0 ? a + rank : a, 0, rank); };
    const std::int64_t start = clampAxis(attrInt(node, "start", 0)), end = clampAxis(attrInt(node, "end", rank));
    std::vector<double> v;
    for (std::int64_t i = start; i < end; ++i) v.push_back(static_cast<double>(firstDims[static_cast<std::size_t>(i)]));
    const auto count = static_cast<std::int64_t>(v.size());  // before v is moved from
    return int64Tensor({count}, std::move(v));
  }
  if (op == "Size") return int64Tensor({}, {static_cast<double>(numElements(firstDims))});
  if (op == "ConstantOfShape") {
    const auto *attr = findAttribute(node, "value");
    const HostTensor value = attr ? fromProto(attr->t()) : HostTensor{TP::FLOAT, {1}, {0.0}};
    const Dims dims = ints(in[0]);
    for (const auto d : dims) {
      if (d < 0) throw Error(ErrorCode::CorruptModel, "{}: negative dimension in shape {}", what, toString(dims));
    }
    return HostTensor{value.type, dims, std::vector<double>(foldedElements(dims, what), value.values.at(0))};
  }
  if (op == "Identity" || op == "Dropout") return *in[0];
  if (op == "Cast") {
    HostTensor out = *in[0];
    out.type = static_cast<std::int32_t>(attrInt(node, "to", TP::FLOAT));
    convertValues(out.values, out.type);
    return out;
  }
  if (op == "Reshape") return reshaped(*in[0], reshapeDims(in[0]->dims, ints(in[1]), attrInt(node, "allowzero", 0) != 0, what));
  if (op == "Flatten") return reshaped(*in[0], flattenDims(in[0]->dims, attrInt(node, "axis", 1), what));
  if (op == "Squeeze") return reshaped(*in[0], squeezeDims(in[0]->dims, axesOf(node, in, 1), what));
  if (op == "Unsqueeze") return reshaped(*in[0], unsqueezeDims(in[0]->dims, axesOf(node, in, 1), what));
  if (op == "Concat") {
    const std::size_t axis = normalizeAxis(attrInt(node, "axis", 0), in[0]->dims.size(), what);
    for (const auto *t : in) {
      bool same = t->dims.size() == in[0]->dims.size();
      for (std::size_t d = 0; same && d < t->dims.size(); ++d) same = d == axis || t->dims[d] == in[0]->dims[d];
      if (!same) {
        throw Error(ErrorCode::CorruptModel, "{}: cannot concatenate {} and {} along axis {}", what, toString(in[0]->dims),
                    toString(t->dims), axis);
      }
    }
    // Concatenation along axis = interleaving each input's rows of `inner` elements.
    HostTensor out{in[0]->type, in[0]->dims, {}};
    out.dims[axis] = 0;
    for (const auto *t : in) out.dims[axis] += t->dims[axis];
    const std::size_t outer = numElements(Dims(in[0]->dims.begin(), in[0]->dims.begin() + static_cast<std::ptrdiff_t>(axis)));
    for (std::size_t o = 0; o < outer; ++o) {
      for (const auto *t : in) {
        const std::size_t chunk = outer == 0 ? 0 : t->numElements() / outer;
        out.values.insert(out.values.end(), t->values.begin() + static_cast<std::ptrdiff_t>(o * chunk),
                          t->values.begin() + static_cast<std::ptrdiff_t>((o + 1) * chunk));
      }
    }
    return out;
  }
  if (op == "Gather") {
    const std::size_t axis = normalizeAxis(attrInt(node, "axis", 0), in[0]->dims.size(), what);
    std::vector<std::int64_t> idx = ints(in[1]);
    for (auto &i : idx) {
      if (i < -in[0]->dims[axis] || i >= in[0]->dims[axis]) throw Error(ErrorCode::CorruptModel, "{}: index {} is out of range", what, i);
      if (i < 0) i += in[0]->dims[axis];
    }
    HostTensor out = takeAlong(*in[0], axis, idx);
    Dims dims(in[0]->dims.begin(), in[0]->dims.begin() + static_cast<std::ptrdiff_t>(axis));
    dims.insert(dims.end(), in[1]->dims.begin(), in[1]->dims.end());
    dims.insert(dims.end(), in[0]->dims.begin() + static_cast<std::ptrdiff_t>(axis) + 1, in[0]->dims.end());
    out.dims = dims;
    return out;
  }
  if (op == "Slice") {
    HostTensor out = *in[0];
    const bool attrs = findAttribute(node, "starts") != nullptr;  // opset < 10
    const auto takes = attrs ? sliceTakes(out.dims, *attrInts(node, "starts"), attrInts(node, "ends").value_or(std::vector<std::int64_t>{}),
                                          attrInts(node, "axes").value_or(std::vector<std::int64_t>{}), {}, what)
                             : sliceTakes(out.dims, ints(in[1]), ints(in[2]), in.size() > 3 && in[3] ? ints(in[3]) : std::vector<std::int64_t>{},
                                          in.size() > 4 && in[4] ? ints(in[4]) : std::vector<std::int64_t>{}, what);
    for (const AxisTake &take : takes) out = takeAlong(out, take.axis, take.indices);
    return out;
  }
  if (op == "Range") {
    const double start = in[0]->values.at(0), limit = in[1]->values.at(0), delta = in[2]->values.at(0);
    if (delta == 0) throw Error(ErrorCode::CorruptModel, "{}: Range with delta 0", what);
    const double count = std::ceil((limit - start) / delta);
    if (std::isnan(count)) throw Error(ErrorCode::CorruptModel, "{}: Range({}, {}, {}) has no length", what, start, limit, delta);
    // Checked as a double: a huge count must not overflow the conversion.
    if (count > static_cast<double>(kMaxFoldedElements)) {
      throw Error(ErrorCode::ResourceExhausted, "{}: Range({}, {}, {}) has {} elements, more than the {} folding "
                                                "evaluates on the host", what, start, limit, delta, count, kMaxFoldedElements);
    }
    const auto n = static_cast<std::int64_t>(std::max(0.0, count));
    HostTensor out{in[0]->type, {n}, {}};
    for (std::int64_t i = 0; i < n; ++i) out.values.push_back(start + static_cast<double>(i) * delta);
    return out;
  }
  if (op == "Expand") {
    const auto dims = broadcastDims(in[0]->dims, ints(in[1]));
    if (!dims) throw Error(ErrorCode::CorruptModel, "{}: cannot expand {}", what, toString(in[0]->dims));
    foldedElements(*dims, what);
    return broadcastTo(*in[0], *dims);
  }
  if (op == "Tile") {
    const std::vector<std::int64_t> repeats = ints(in[1]);
    if (repeats.size() != in[0]->dims.size()) throw Error(ErrorCode::CorruptModel, "{}: {} repeats for rank {}", what, repeats.size(), in[0]->dims.size());
    HostTensor out = *in[0];
    for (std::size_t axis = 0; axis < repeats.size(); ++axis) {
      if (repeats[axis] < 0) throw Error(ErrorCode::CorruptModel, "{}: negative repeat {}", what, repeats[axis]);
      std::vector<std::int64_t> idx;  // the axis's indices, `repeats` times over
      for (std::int64_t r = 0; r < repeats[axis]; ++r) {
        for (std::int64_t i = 0; i < out.dims[axis]; ++i) idx.push_back(i);
      }
      out = takeAlong(out, axis, idx);
    }
    return out;
  }
  if (op == "Where") {
    const auto d1 = broadcastDims(in[0]->dims, in[1]->dims);
    const auto dims = d1 ? broadcastDims(*d1, in[2]->dims) : std::nullopt;
    if (!dims) throw Error(ErrorCode::CorruptModel, "{}: Where's inputs do not broadcast", what);
    foldedElements(*dims, what);
    const HostTensor c = broadcastTo(*in[0], *dims), x = broadcastTo(*in[1], *dims), y = broadcastTo(*in[2], *dims);
    HostTensor out{in[1]->type, *dims, std::vector<double>(c.values.size())};
    for (std::size_t i = 0; i < c.values.size(); ++i) out.values[i] = c.values[i] != 0 ? x.values[i] : y.values[i];
    return out;
  }
  if (binaryFunctions().count(op) && in.size() == 2) return elementwise(node, *in[0], *in[1]);
  if (const auto it = unaryFunctions().find(op); it != unaryFunctions().end()) {
    HostTensor out = *in[0];
    for (double &v : out.values) v = it->second(v);
    convertValues(out.values, out.type);
    return out;
  }
  return std::nullopt;
}

}  // namespace

const std::set<std::string> &foldableOps() {
  static const std::set<std::string> ops = [] {
    std::set<std::string> s = {"Constant", "Shape", "Size", "ConstantOfShape", "Identity", "Dropout", "Cast", "Reshape",
                               "Flatten", "Squeeze", "Unsqueeze", "Concat", "Gather", "Slice", "Range", "Expand", "Tile", "Where"};
    for (const auto &[name, f] : binaryFunctions()) s.insert(name);
    for (const auto &[name, f] : unaryFunctions()) s.insert(name);
    return s;
  }();
  return ops;
}

bool isFoldable(const std::string &opType) { return foldableOps().count(opType) != 0; }

bool tryFold(LoweringContext &ctx, const NodeProto &node) {
  const std::string &op = node.op_type();
  if (!isFoldable(op)) return false;
  // Shape and Size read only their input's dimensions, known at compile time.
  const bool shapeOnly = op == "Shape" || op == "Size";
  Inputs inputs;
  Dims firstDims;
  for (int i = 0; i < node.input_size(); ++i) {
    const std::string &name = node.input(i);
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    if (i == 0) firstDims = ctx.value(name).dims();
    if (!ctx.isHost(name)) {
      if (!shapeOnly) return false;
      inputs.push_back(nullptr);
      continue;
    }
    inputs.push_back(&ctx.host(name));
  }
  // Dropout's mask output and training mode are left to lowering, which refuses them.
  if (op == "Dropout" && ((node.output_size() > 1 && !node.output(1).empty()) ||
                          (node.input_size() > 2 && !node.input(2).empty()))) {
    return false;
  }
  std::optional<HostTensor> result;
  try {
    result = evaluate(node, inputs, firstDims);
  } catch (const std::out_of_range &) {
    // values.at(0) of an empty tensor (Range's start, ConstantOfShape's value...).
    throw Error(ErrorCode::CorruptModel, "{}: an input has fewer values than the operator reads", nodeLabel(node));
  }
  if (!result) return false;
  ctx.setHost(node.output(0), std::move(*result));
  return true;
}

}  // namespace mrt::onnx
