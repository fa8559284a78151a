// Elementwise codelets: unary ops and casts, binary ops (arithmetic and
// remainders) with scalar/row broadcasting, comparisons, logical ops, Fill
// and Increment. Validation and cycle costs; the host implementations are in
// hwsim/kernels/elementwise_kernels.cpp.
#include <cmath>

#include <fmt/format.h>

#include "codelets/registry.hpp"

namespace hwsim::detail {

namespace {

bool isTranscendental(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: case UnaryOp::Log: case UnaryOp::Sqrt: case UnaryOp::Sigmoid: case UnaryOp::Tanh:
    case UnaryOp::Erf: case UnaryOp::Sin: case UnaryOp::Cos: case UnaryOp::Tan: case UnaryOp::Asin:
    case UnaryOp::Acos: case UnaryOp::Atan: case UnaryOp::Sinh: case UnaryOp::Cosh: case UnaryOp::Asinh:
    case UnaryOp::Acosh: case UnaryOp::Atanh:
      return true;
    default:
      return false;
  }
}

// Rounding to an integral value is one vector operation, but means nothing
// for integers.
bool isFloatOnly(UnaryOp op) {
  return isTranscendental(op) || op == UnaryOp::Floor || op == UnaryOp::Ceil || op == UnaryOp::Round;
}

}  // namespace

std::string validateUnary(const CodeletSpec &spec, const Operand *ops, const Attrs &) {
  const auto op = static_cast<UnaryOp>(spec.op);
  const Operand &in = ops[0], &out = ops[1];
  if (in.numElements != out.numElements) {
    return fmt::format("in has {} elements but out has {}", in.numElements, out.numElements);
  }
  if (op == UnaryOp::Cast) return {};
  if (in.type != out.type) {
    return fmt::format("in is {} but out is {}", toString(in.type), toString(out.type));
  }
  if (op == UnaryOp::Not) {
    return in.type == Type::BOOL ? std::string() : fmt::format("needs BOOL, got {}", toString(in.type));
  }
  if (isFloatOnly(op) && !isFloatingPoint(in.type)) {
    return fmt::format("needs F16 or F32, got {}", toString(in.type));
  }
  if (in.type == Type::BOOL) return "does not take BOOL";
  return {};
}

double cyclesUnary(const CodeletSpec &spec, const Target &t, const Operand *ops, const Attrs &) {
  const auto op = static_cast<UnaryOp>(spec.op);
  const double n = static_cast<double>(ops[0].numElements);
  const double perElement =
      isTranscendental(op) ? t.transcendentalCyclesPerElement : 1.0 / vectorWidth(t, ops[0].type);
  return t.vertexOverheadCycles + std::ceil(n * perElement);
}

// ---------- binary ----------

std::string validateBinary(const CodeletSpec &spec, const Operand *ops, const Attrs &) {
  const auto op = static_cast<BinaryOp>(spec.op);
  const Operand &a = ops[0], &b = ops[1], &out = ops[2];
  if (a.type != b.type) {
    return fmt::format("in0 is {} but in1 is {}", toString(a.type), toString(b.type));
  }
  if (out.numElements != a.numElements) {
    return fmt::format("in0 has {} elements but out has {}", a.numElements, out.numElements);
  }
  const bool sameOrScalar = b.numElements == a.numElements || b.numElements == 1;
  const bool row = !a.shape->empty() && b.numElements == a.shape->back() && b.numElements > 0;
  if (!sameOrScalar && !row) {
    return fmt::format("in1 has {} elements: needs {} (same), 1 (scalar) or the last dimension of in0",
                       b.numElements, a.numElements);
  }
  const Type want = (isComparison(op) || isLogical(op)) ? Type::BOOL : a.type;
  if (out.type != want) {
    return fmt::format("out must be {}, got {}", toString(want), toString(out.type));
  }
  if (isLogical(op) && a.type != Type::BOOL) return fmt::format("needs BOOL, got {}", toString(a.type));
  if (!isComparison(op) && !isLogical(op) && a.type == Type::BOOL) return "does not take BOOL";
  return {};
}

double cyclesBinary(const CodeletSpec &spec, const Target &t, const Operand *ops, const Attrs &) {
  const auto op = static_cast<BinaryOp>(spec.op);
  const double n = static_cast<double>(ops[0].numElements);
  // A remainder is a division and a multiply-subtract: two vector operations.
  const double perElement = op == BinaryOp::Pow                             ? 2 * t.transcendentalCyclesPerElement
                            : op == BinaryOp::Mod || op == BinaryOp::Fmod ? 2.0 / vectorWidth(t, ops[0].type)
                                                                            : 1.0 / vectorWidth(t, ops[0].type);
  return t.vertexOverheadCycles + std::ceil(n * perElement);
}

// ---------- Fill ----------

std::string validateFill(const CodeletSpec &, const Operand *, const Attrs &attrs) {
  return attrs[0].size() == 1 ? std::string() : "attribute value must be one number";
}

double cyclesFill(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &) {
  return t.vertexOverheadCycles + std::ceil(static_cast<double>(ops[0].numElements * sizeOf(ops[0].type)) / 8.0);
}

// ---------- Increment ----------

std::string validateIncrement(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  if (ops[0].type == Type::BOOL) return "counter cannot be BOOL";
  return attrs[0].size() == 1 ? std::string() : "attribute step must be one number";
}

double cyclesIncrement(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &) {
  return t.vertexOverheadCycles + static_cast<double>(ops[0].numElements);
}

}  // namespace hwsim::detail
