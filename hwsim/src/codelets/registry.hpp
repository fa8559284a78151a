// The codelet library: for each codelet its fields, attributes, a validator
// (types and shapes), a cycle cost and the host implementation. Used both when
// compiling a graph and when verifying a deserialized executable, so a
// verified executable never runs a vertex on operands it cannot handle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hwsim/target.hpp"
#include "hwsim/types.hpp"

namespace hwsim::detail {

// One vertex operand: its data (null when validating) and its view's type/shape.
struct Operand {
  std::uint8_t *data = nullptr;
  Type type = Type::F32;
  const Shape *shape = nullptr;
  std::uint64_t numElements = 0;
  // A planar field's operand only (FieldSpec::planar): bytes from one plane
  // (the elements of one index of the first two dimensions) to the next; 0:
  // the planes lie end to end. An engine passes a pitch where the view's
  // planes lie apart in the arena (a Conv's out of 2 channels of one row),
  // or where an input is read through a copy's sources (operand_mirrors.hpp).
  std::uint64_t planePitch = 0;
};

using Attrs = std::vector<std::vector<double>>;

enum class FieldDir : std::uint8_t { In, Out, InOut };

struct FieldSpec {
  std::string_view name;
  FieldDir dir = FieldDir::In;
  // The host implementation takes this field's planes at any pitch
  // (Operand::planePitch), so an engine need not gather or scatter them.
  bool planar = false;
};

struct AttrSpec {
  std::string_view name;
  std::vector<double> defaults;
};

struct CodeletSpec;
using ValidateFn = std::string (*)(const CodeletSpec &, const Operand *, const Attrs &);
using CyclesFn = double (*)(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
using ExecuteFn = void (*)(const CodeletSpec &, const Operand *, const Attrs &);
// What a codelet can derive once per vertex from its operands' types and
// shapes and its attributes, all fixed for a vertex (Conv and pool geometry):
// made at engine creation (null when the codelet cannot, e.g. invalid
// operands) and handed to executePrepared at each run, so the run skips the
// parsing. Outside an engine, execute parses at each call as before.
using PreparedState = std::shared_ptr<const void>;
using PrepareFn = PreparedState (*)(const CodeletSpec &, const Operand *, const Attrs &);
using PreparedExecuteFn = void (*)(const CodeletSpec &, const Operand *, const Attrs &, const void *prepared);

struct CodeletSpec {
  std::string_view name;
  std::vector<FieldSpec> fields;
  std::vector<AttrSpec> attrs;
  ValidateFn validate = nullptr;
  CyclesFn cycles = nullptr;
  ExecuteFn execute = nullptr;
  int op = 0;  // which member of a family (unary/binary op id)
  PrepareFn prepare = nullptr;                   // optional, with executePrepared
  PreparedExecuteFn executePrepared = nullptr;  // execute given what prepare made
};

const std::vector<CodeletSpec> &codeletLibrary();
std::optional<std::uint16_t> findCodelet(std::string_view name);

// Family op ids.
enum class UnaryOp : int {
  Neg, Abs, Relu, Exp, Log, Sqrt, Sigmoid, Tanh, Not, Cast,
  Erf, Floor, Ceil, Round, Sign,
  Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh
};
enum class BinaryOp : int {
  Add, Sub, Mul, Div, Max, Min, Pow,
  Equal, NotEqual, Less, LessEqual, Greater, GreaterEqual,
  And, Or,
  Mod, Fmod
};
// Comparisons and logical ops give a BOOL out.
constexpr bool isComparison(BinaryOp op) { return op >= BinaryOp::Equal && op <= BinaryOp::GreaterEqual; }
constexpr bool isLogical(BinaryOp op) { return op == BinaryOp::And || op == BinaryOp::Or; }
enum class ReduceOp : int { Sum, Max, Min, Mean, Prod };
enum class GatherOp : int { Gather, GatherElements };

// Validation and cycle costs (codelets/*.cpp); the host implementations of
// all but Gather and Scatter are compiled per instruction set
// (codelets/kernels.hpp).
std::string validateUnary(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesUnary(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
std::string validateBinary(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesBinary(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
std::string validateFill(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesFill(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
std::string validateIncrement(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesIncrement(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
std::string validateMatMul(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesMatMul(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
std::string validateReduce(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesReduce(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
std::string validateSoftmax(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesSoftmax(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
std::string validateArgMax(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesArgMax(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
std::string validateConv(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesConv(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
PreparedState prepareConv(const CodeletSpec &, const Operand *, const Attrs &);  // a Geometry
std::string validateScatter(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesScatter(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
void executeScatter(const CodeletSpec &, const Operand *, const Attrs &);
std::string validateGather(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesGather(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
void executeGather(const CodeletSpec &, const Operand *, const Attrs &);
// Pooling family: op 0 = MaxPool, 1 = AveragePool.
std::string validatePool(const CodeletSpec &, const Operand *, const Attrs &);
double cyclesPool(const CodeletSpec &, const Target &, const Operand *, const Attrs &);
PreparedState preparePool(const CodeletSpec &, const Operand *, const Attrs &);  // a Geometry

// Elements per cycle of the vector unit for a type.
double vectorWidth(const Target &target, Type type);

}  // namespace hwsim::detail
