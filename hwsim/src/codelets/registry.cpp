#include "codelets/registry.hpp"

#include "hwsim/codelets.hpp"

namespace hwsim::detail {

namespace {

CodeletSpec unary(std::string_view name, UnaryOp op) {
  return {name, {{"in", FieldDir::In}, {"out", FieldDir::Out}}, {},
          validateUnary, cyclesUnary, executeUnary, static_cast<int>(op)};
}
CodeletSpec binary(std::string_view name, BinaryOp op) {
  return {name, {{"in0", FieldDir::In}, {"in1", FieldDir::In}, {"out", FieldDir::Out}}, {},
          validateBinary, cyclesBinary, executeBinary, static_cast<int>(op)};
}
CodeletSpec reduce(std::string_view name, ReduceOp op) {
  return {name, {{"in", FieldDir::In}, {"out", FieldDir::Out}}, {{"axes", {}}},
          validateReduce, cyclesReduce, executeReduce, static_cast<int>(op)};
}

std::vector<CodeletSpec> buildLibrary() {
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
      {"Fill", {{"out", FieldDir::Out}}, {{"value", {0.0}}}, validateFill, cyclesFill, executeFill, 0},
      {"MatMul", {{"a", FieldDir::In}, {"b", FieldDir::In}, {"out", FieldDir::InOut}},
       {{"accumulate", {0.0}}}, validateMatMul, cyclesMatMul, executeMatMul, 0},
      reduce("ReduceSum", ReduceOp::Sum),
      reduce("ReduceMax", ReduceOp::Max),
      reduce("ReduceMin", ReduceOp::Min),
      reduce("ReduceMean", ReduceOp::Mean),
      {"Softmax", {{"in", FieldDir::In}, {"out", FieldDir::Out}}, {}, validateSoftmax,
       cyclesSoftmax, executeSoftmax, 0},
      {"ArgMax", {{"in", FieldDir::In}, {"out", FieldDir::Out}}, {}, validateArgMax, cyclesArgMax,
       executeArgMax, 0},
      {"Increment", {{"counter", FieldDir::InOut}}, {{"step", {1.0}}}, validateIncrement,
       cyclesIncrement, executeIncrement, 0},
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
}  // namespace hwsim
