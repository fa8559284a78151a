#include "codelets/registry.hpp"

#include "codelets/kernels.hpp"

#include "hwsim/codelets.hpp"

#include <utility>

namespace hwsim::detail {

namespace {

CodeletSpec unary(std::string_view name, UnaryOp op) {
  return {name, {{"in", FieldDir::In}, {"out", FieldDir::Out}}, {},
          validateUnary, cyclesUnary, activeKernels().unary, static_cast<int>(op)};
}
CodeletSpec binary(std::string_view name, BinaryOp op) {
  return {name, {{"in0", FieldDir::In}, {"in1", FieldDir::In}, {"out", FieldDir::Out}}, {},
          validateBinary, cyclesBinary, activeKernels().binary, static_cast<int>(op)};
}
CodeletSpec gather(std::string_view name, GatherOp op) {
  return {name, {{"in", FieldDir::In}, {"indices", FieldDir::In}, {"out", FieldDir::Out}}, {{"axis", {0.0}}},
          validateGather, cyclesGather, executeGather, static_cast<int>(op)};
}
CodeletSpec reduce(std::string_view name, ReduceOp op) {
  return {name, {{"in", FieldDir::In}, {"out", FieldDir::Out}}, {{"axes", {}}},
          validateReduce, cyclesReduce, activeKernels().reduce, static_cast<int>(op)};
}

std::vector<CodeletSpec> buildLibrary() {
  const KernelTable &k = activeKernels();
  // The order is part of the serialized format (codelet ids): append only.
  return {
      unary("Neg", UnaryOp::Neg),
      unary("Abs", UnaryOp::Abs),
      unary("Relu", UnaryOp::Relu),
      unary("Exp", UnaryOp::Exp),
      unary("Log", UnaryOp::Log),
      unary("Sqrt", UnaryOp::Sqrt),
      unary("Sigmoid", UnaryOp::Sigmoid),
      unary("Tanh", UnaryOp::Tanh),
      unary("Not", UnaryOp::Not),
      unary("Cast", UnaryOp::Cast),
      binary("Add", BinaryOp::Add),
      binary("Sub", BinaryOp::Sub),
      binary("Mul", BinaryOp::Mul),
      binary("Div", BinaryOp::Div),
      binary("Max", BinaryOp::Max),
      binary("Min", BinaryOp::Min),
      binary("Pow", BinaryOp::Pow),
      binary("Equal", BinaryOp::Equal),
      binary("NotEqual", BinaryOp::NotEqual),
      binary("Less", BinaryOp::Less),
      binary("LessEqual", BinaryOp::LessEqual),
      binary("Greater", BinaryOp::Greater),
      binary("GreaterEqual", BinaryOp::GreaterEqual),
      binary("And", BinaryOp::And),
      binary("Or", BinaryOp::Or),
      {"Fill", {{"out", FieldDir::Out}}, {{"value", {0.0}}}, validateFill, cyclesFill, k.fill, 0},
      {"MatMul", {{"a", FieldDir::In}, {"b", FieldDir::In}, {"out", FieldDir::InOut}},
       {{"accumulate", {0.0}}}, validateMatMul, cyclesMatMul, k.matMul, 0},
      reduce("ReduceSum", ReduceOp::Sum),
      reduce("ReduceMax", ReduceOp::Max),
      reduce("ReduceMin", ReduceOp::Min),
      reduce("ReduceMean", ReduceOp::Mean),
      {"Softmax", {{"in", FieldDir::In}, {"out", FieldDir::Out}}, {}, validateSoftmax,
       cyclesSoftmax, k.softmax, 0},
      {"ArgMax", {{"in", FieldDir::In}, {"out", FieldDir::Out}}, {}, validateArgMax, cyclesArgMax,
       k.argMax, 0},
      {"Increment", {{"counter", FieldDir::InOut}}, {{"step", {1.0}}}, validateIncrement,
       cyclesIncrement, k.increment, 0},
      {"Conv", {{"in", FieldDir::In, true}, {"weights", FieldDir::In}, {"out", FieldDir::InOut, true}},
       {{"strides", {}}, {"pads", {}}, {"dilations", {}}, {"group", {1.0}}, {"accumulate", {0.0}}},
       validateConv, cyclesConv, k.conv, 0, prepareConv, k.convPrepared},
      {"MaxPool", {{"in", FieldDir::In}, {"out", FieldDir::Out}},
       {{"kernel_shape", {}}, {"strides", {}}, {"pads", {}}, {"dilations", {}}}, validatePool, cyclesPool,
       k.pool, 0, preparePool, k.poolPrepared},
      {"AveragePool", {{"in", FieldDir::In}, {"out", FieldDir::Out}},
       {{"kernel_shape", {}}, {"strides", {}}, {"pads", {}}, {"dilations", {}}, {"count_include_pad", {0.0}}},
       validatePool, cyclesPool, k.pool, 1, preparePool, k.poolPrepared},
      unary("Erf", UnaryOp::Erf),
      unary("Floor", UnaryOp::Floor),
      unary("Ceil", UnaryOp::Ceil),
      unary("Round", UnaryOp::Round),
      unary("Sign", UnaryOp::Sign),
      unary("Sin", UnaryOp::Sin),
      unary("Cos", UnaryOp::Cos),
      unary("Tan", UnaryOp::Tan),
      unary("Asin", UnaryOp::Asin),
      unary("Acos", UnaryOp::Acos),
      unary("Atan", UnaryOp::Atan),
      unary("Sinh", UnaryOp::Sinh),
      unary("Cosh", UnaryOp::Cosh),
      unary("Asinh", UnaryOp::Asinh),
      unary("Acosh", UnaryOp::Acosh),
      unary("Atanh", UnaryOp::Atanh),
      binary("Mod", BinaryOp::Mod),
      binary("Fmod", BinaryOp::Fmod),
      reduce("ReduceProd", ReduceOp::Prod),
      gather("Gather", GatherOp::Gather),
      gather("GatherElements", GatherOp::GatherElements),
      {"ScatterElements",
       {{"in", FieldDir::In}, {"indices", FieldDir::In}, {"updates", FieldDir::In}, {"out", FieldDir::Out}},
       {{"axis", {0.0}}, {"reduction", {0.0}}},
       validateScatter,
       cyclesScatter,
       executeScatter},
  };
}

}  // namespace

const std::vector<CodeletSpec> &codeletLibrary() {
  static const std::vector<CodeletSpec> library = buildLibrary();
  return library;
}

std::optional<std::uint16_t> findCodelet(std::string_view name) {
  const auto &lib = codeletLibrary();
  for (std::size_t i = 0; i < lib.size(); ++i) {
    if (lib[i].name == name) return static_cast<std::uint16_t>(i);
  }
  return std::nullopt;
}

double vectorWidth(const Target &target, Type type) {
  if (type == Type::F32) return target.f32VectorWidth;
  if (type == Type::F16) return target.f16VectorWidth;
  return target.intVectorWidth;
}

}  // namespace hwsim::detail

namespace hwsim {
std::vector<std::string> codeletNames() {
  std::vector<std::string> names;
  for (const auto &spec : detail::codeletLibrary()) names.emplace_back(spec.name);
  return names;
}

namespace {

// One line per codelet for discovery (mrt_codelet_get_info, docs/graph.md);
// kept next to the library so a new codelet gets its line here too.
const char *descriptionOf(std::string_view name) {
  static const std::pair<std::string_view, const char *> kDescriptions[] = {
      {"Neg", "out = -in; numeric types, out type = in type"},
      {"Abs", "out = |in|; numeric types, out type = in type"},
      {"Relu", "out = max(in, 0); numeric types, out type = in type"},
      {"Exp", "out = e^in; F16, F32"},
      {"Log", "out = ln(in); F16, F32"},
      {"Sqrt", "out = sqrt(in); F16, F32"},
      {"Sigmoid", "out = 1 / (1 + e^-in); F16, F32"},
      {"Tanh", "out = tanh(in); F16, F32"},
      {"Not", "out = !in; BOOL"},
      {"Cast", "out = in converted to out's type; any types (float to int truncates and saturates)"},
      {"Add", "out = in0 + in1; numeric, in1 of in0's size, 1 element or in0's last dimension"},
      {"Sub", "out = in0 - in1; numeric, in1 broadcast as Add"},
      {"Mul", "out = in0 * in1; numeric, in1 broadcast as Add"},
      {"Div", "out = in0 / in1; numeric (integer division by zero gives 0), in1 broadcast as Add"},
      {"Max", "out = max(in0, in1); numeric, in1 broadcast as Add"},
      {"Min", "out = min(in0, in1); numeric, in1 broadcast as Add"},
      {"Pow", "out = in0 ^ in1; numeric, in1 broadcast as Add"},
      {"Equal", "out = in0 == in1; any type, BOOL out"},
      {"NotEqual", "out = in0 != in1; any type, BOOL out"},
      {"Less", "out = in0 < in1; any type, BOOL out"},
      {"LessEqual", "out = in0 <= in1; any type, BOOL out"},
      {"Greater", "out = in0 > in1; any type, BOOL out"},
      {"GreaterEqual", "out = in0 >= in1; any type, BOOL out"},
      {"And", "out = in0 && in1; BOOL"},
      {"Or", "out = in0 || in1; BOOL"},
      {"Fill", "out = attribute value; any type"},
      {"MatMul", "out [M,N] (+)= a [M,K] x b [K,N]; F32, or F16 into F16/F32; attribute accumulate"},
      {"ReduceSum", "out = sum of in over attribute axes (all if empty); numeric, out type = in type"},
      {"ReduceMax", "out = max of in over attribute axes (all if empty); numeric"},
      {"ReduceMin", "out = min of in over attribute axes (all if empty); numeric"},
      {"ReduceMean", "out = mean of in over attribute axes (all if empty); numeric"},
      {"Softmax", "out = softmax(in) over the last dimension; F16, F32"},
      {"ArgMax", "out = index of the first maximum of each row of in; S32 or U32 out"},
      {"Increment", "counter += attribute step; for loop counters"},
      {"Conv", "out [N,M,*o] (+)= in [N,C,*s] conv weights [M,C/group,*k], 1-D/2-D, ONNX strides/pads/dilations/group; "
               "F32, or F16 into F16/F32"},
      {"MaxPool", "out [N,C,*o] = max of each kernel_shape window of in [N,C,*s] (padding is -inf); F16, F32"},
      {"AveragePool", "out [N,C,*o] = mean of each kernel_shape window of in [N,C,*s] "
                      "(padding counted if count_include_pad); F16, F32"},
      {"Erf", "out = erf(in); F16, F32"},
      {"Floor", "out = floor(in); F16, F32"},
      {"Ceil", "out = ceil(in); F16, F32"},
      {"Round", "out = in rounded to the nearest integer, halves to even; F16, F32"},
      {"Sign", "out = -1, 0 or 1 as in is negative, zero or positive; numeric types, out type = in type"},
      {"Sin", "out = sin(in); F16, F32"},
      {"Cos", "out = cos(in); F16, F32"},
      {"Tan", "out = tan(in); F16, F32"},
      {"Asin", "out = asin(in); F16, F32"},
      {"Acos", "out = acos(in); F16, F32"},
      {"Atan", "out = atan(in); F16, F32"},
      {"Sinh", "out = sinh(in); F16, F32"},
      {"Cosh", "out = cosh(in); F16, F32"},
      {"Asinh", "out = asinh(in); F16, F32"},
      {"Acosh", "out = acosh(in); F16, F32"},
      {"Atanh", "out = atanh(in); F16, F32"},
      {"Mod", "out = in0 mod in1 with in1's sign (floored, Python's %); numeric (integer mod 0 gives 0), "
              "in1 broadcast as Add"},
      {"Fmod", "out = in0 mod in1 with in0's sign (truncated, C's fmod); numeric (integer mod 0 gives 0), "
               "in1 broadcast as Add"},
      {"ReduceProd", "out = product of in over attribute axes (all if empty); numeric, out type = in type"},
      {"Gather", "out [outer, K, inner] = in [outer, indices[k], inner] along attribute axis; any type, "
                 "integer indices (negative from the end, out of range gives 0)"},
      {"GatherElements", "out[p] = in[p with its axis coordinate indices[p]]; indices of in's rank; any type, "
                         "integer indices (negative from the end, out of range gives 0)"},
      {"ScatterElements", "out = in, then out[p with its axis coordinate indices[p]] = updates[p] (attribute "
                          "reduction 1 adds, 2 multiplies); any type, integer indices (negative from the end, an "
                          "update out of range is dropped)"},
  };
  for (const auto &[n, d] : kDescriptions) {
    if (n == name) return d;
  }
  return "";
}

std::vector<CodeletInfo> buildInfos() {
  std::vector<CodeletInfo> infos;
  for (const auto &spec : detail::codeletLibrary()) {
    // spec names are string literals, so data() is NUL terminated.
    CodeletInfo info{spec.name.data(), descriptionOf(spec.name), {}, {}};
    for (const auto &f : spec.fields) {
      info.fields.push_back({f.name.data(), static_cast<FieldDirection>(f.dir)});
    }
    for (const auto &a : spec.attrs) {
      info.attributes.push_back(
          {a.name.data(), a.defaults.empty() ? nullptr : a.defaults.data(), a.defaults.size()});
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

}  // namespace

const std::vector<CodeletInfo> &codeletInfos() {
  static const std::vector<CodeletInfo> infos = buildInfos();
  return infos;
}

static_assert(static_cast<int>(detail::FieldDir::In) == static_cast<int>(FieldDirection::In));
static_assert(static_cast<int>(detail::FieldDir::Out) == static_cast<int>(FieldDirection::Out));
static_assert(static_cast<int>(detail::FieldDir::InOut) == static_cast<int>(FieldDirection::InOut));

}  // namespace hwsim
