// The PopLibs-like operations (include/mrt_c.h, "Operations"), over
// hwsim::ops. hwsim's ops place vertices without checking operand types (the
// compiler would reject them later, far from the call), so the type and
// shape rules of the codelet library are checked here, naming the tensors.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <hwsim/ops.hpp>

#include "capi/codelet.hpp"
#include "capi/element_type.hpp"
#include "capi/graph.hpp"

using mrt::Error;
using mrt::ErrorCode;
using namespace mrt::capi;
namespace ops = hwsim::ops;
using hwsim::Type;

namespace {

constexpr std::array<std::string_view, 10> kUnary = {"Neg", "Abs", "Relu", "Exp", "Log",
                                                     "Sqrt", "Sigmoid", "Tanh", "Not", "Cast"};
constexpr std::array<std::string_view, 15> kBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "Equal",
                                                       "NotEqual", "Less", "LessEqual", "Greater",
                                                       "GreaterEqual", "And", "Or"};
constexpr std::array<std::string_view, 4> kReduce = {"ReduceSum", "ReduceMax", "ReduceMin", "ReduceMean"};

bool isFloat(Type t) { return t == Type::F16 || t == Type::F32; }

// A known codelet of the family the op takes.
template <std::size_t N>
std::string_view familyCodelet(const char *codelet, const std::array<std::string_view, N> &family,
                               const char *familyName) {
  const std::string_view name = hwsim::codeletInfos()[codeletIndexOf(codelet, "codelet")].name;
  if (std::find(family.begin(), family.end(), name) == family.end()) {
    throw Error(ErrorCode::InvalidArgument, "codelet '{}' is not a {} codelet; those are {}", name, familyName,
                fmt::join(family, ", "));
  }
  return name;
}

// The sequence an op appends to (`argument` names it in errors).
hwsim::program::Sequence &sequenceOf(mrt_graph &g, mrt_program id, const char *argument = "sequence") {
  ProgramEntry &p = programOf(g, id, argument);
  if (p.kind != ProgramKind::Sequence) {
    throw Error(ErrorCode::InvalidArgument, "{} 0x{:x} is not a Sequence program", argument, id);
  }
  return *p.sequence;
}

ops::TileRange tilesOf(const mrt_graph &g, uint32_t first, uint32_t count) {
  const unsigned total = g.graph.getTarget().numTiles();
  if (first >= total || std::uint64_t{first} + count > total) {
    throw Error(ErrorCode::InvalidArgument, "tiles [{}, {}) are out of range: the target has {} tiles", first,
                std::uint64_t{first} + (count == 0 ? total - std::min(first, total) : count), total);
  }
  return {first, count};
}

[[noreturn]] void badType(const mrt_graph &g, const char *argument, mrt_tensor id, std::string_view codelet,
                          const char *needs) {
  throw Error(ErrorCode::InvalidArgument, "{} {} is {}; {} takes {}", argument, describeTensor(g, id),
              hwsim::toString(tensorOf(g, id, argument).tensor.elementType()), codelet, needs);
}

void checkUnary(const mrt_graph &g, std::string_view codelet, mrt_tensor in, std::optional<Type> outType) {
  const Type t = tensorOf(g, in, "in").tensor.elementType();
  if (codelet == "Cast") {
    if (!outType) throw Error(ErrorCode::InvalidArgument, "Cast needs an out_type (it is -1)");
    return;
  }
  if (outType && *outType != t) {
    throw Error(ErrorCode::InvalidArgument, "out_type {} differs from in's type {}; only Cast changes the type",
                hwsim::toString(*outType), hwsim::toString(t));
  }
  if (codelet == "Not" && t != Type::BOOL) badType(g, "in", in, codelet, "BOOL");
  if ((codelet == "Neg" || codelet == "Abs" || codelet == "Relu") && t == Type::BOOL) {
    badType(g, "in", in, codelet, "numeric types");
  }
  if ((codelet == "Exp" || codelet == "Log" || codelet == "Sqrt" || codelet == "Sigmoid" || codelet == "Tanh") &&
      !isFloat(t)) {
    badType(g, "in", in, codelet, "F16 or F32");
  }
}

void checkBinary(const mrt_graph &g, std::string_view codelet, mrt_tensor a, mrt_tensor b) {
  const hwsim::Tensor &ta = tensorOf(g, a, "a").tensor;
  const hwsim::Tensor &tb = tensorOf(g, b, "b").tensor;
  if (ta.elementType() != tb.elementType()) {
    throw Error(ErrorCode::InvalidArgument, "a {} is {} but b {} is {}; {} needs operands of one type",
                describeTensor(g, a), hwsim::toString(ta.elementType()), describeTensor(g, b),
                hwsim::toString(tb.elementType()), codelet);
  }
  const std::size_t last = ta.rank() == 0 ? 1 : ta.shape().back();
  if (tb.numElements() != ta.numElements() && tb.numElements() != 1 && tb.numElements() != last) {
    throw Error(ErrorCode::InvalidArgument,
                "b {} has {} elements; {} needs a's {}, 1 or a's last dimension {}", describeTensor(g, b),
                tb.numElements(), codelet, ta.numElements(), last);
  }
  const bool logical = codelet == "And" || codelet == "Or";
  const bool comparison = std::find(kBinary.begin() + 7, kBinary.begin() + 13, codelet) != kBinary.begin() + 13;
  if (logical && ta.elementType() != Type::BOOL) badType(g, "a", a, codelet, "BOOL");
  if (!logical && !comparison && ta.elementType() == Type::BOOL) badType(g, "a", a, codelet, "numeric types");
}

template <typename Make>
void returnTensor(mrt_graph &g, mrt_tensor *out, const char *name, Make &&make) {
  requireNotNull(out, "out");
  hwsim::Tensor t = make();
  *out = addTensor(g, std::move(t), nameOf(name));
}

}  // namespace

MRT_API mrt_status mrt_ops_create_tensor(mrt_graph *graph, int32_t data_type, const uint64_t *shape, size_t rank,
                                         const char *name, uint32_t first_tile, uint32_t num_tiles,
                                         mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_create_tensor", graph, [&](mrt_graph &g) {
    const Type type = hwsimTypeOf(data_type, "data_type");
    const hwsim::Shape s = shapeOf(shape, rank, "shape");
    const ops::TileRange tiles = tilesOf(g, first_tile, num_tiles);
    returnTensor(g, out, name, [&] { return ops::createTensor(g.graph, type, s, nameOf(name), tiles); });
  });
}

MRT_API mrt_status mrt_ops_unary(mrt_graph *graph, mrt_program sequence, const char *codelet, mrt_tensor in,
                                 int32_t out_type, const char *name, mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_unary", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    auto &seq = sequenceOf(g, sequence);
    const std::string_view c = familyCodelet(codelet, kUnary, "unary");
    const std::optional<Type> outType =
        out_type == -1 ? std::nullopt : std::optional<Type>(hwsimTypeOf(out_type, "out_type"));
    checkUnary(g, c, in, outType);
    const hwsim::Tensor &t = tensorOf(g, in, "in").tensor;
    returnTensor(g, out, name, [&] { return ops::unary(g.graph, seq, c, t, nameOf(name), outType); });
  });
}

MRT_API mrt_status mrt_ops_binary(mrt_graph *graph, mrt_program sequence, const char *codelet, mrt_tensor a,
                                  mrt_tensor b, const char *name, mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_binary", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    auto &seq = sequenceOf(g, sequence);
    const std::string_view c = familyCodelet(codelet, kBinary, "binary");
    checkBinary(g, c, a, b);
    const hwsim::Tensor &ta = tensorOf(g, a, "a").tensor;
    const hwsim::Tensor &tb = tensorOf(g, b, "b").tensor;
    returnTensor(g, out, name, [&] { return ops::binary(g.graph, seq, c, ta, tb, nameOf(name)); });
  });
}

MRT_API mrt_status mrt_ops_binary_in_place(mrt_graph *graph, mrt_program sequence, const char *codelet,
                                           mrt_tensor a, mrt_tensor b) noexcept {
  return changeGraph("mrt_ops_binary_in_place", graph, [&](mrt_graph &g) {
    auto &seq = sequenceOf(g, sequence);
    const std::string_view c = familyCodelet(codelet, kBinary, "binary");
    checkBinary(g, c, a, b);
    const hwsim::Tensor &ta = tensorOf(g, a, "a").tensor;
    const bool boolResult = std::find(kBinary.begin() + 7, kBinary.end(), c) != kBinary.end();
    if (boolResult && ta.elementType() != Type::BOOL) {
      throw Error(ErrorCode::InvalidArgument, "{} gives BOOL, so it cannot work in place on a {} {}", c,
                  describeTensor(g, a), hwsim::toString(ta.elementType()));
    }
    refuseConstantDestination(g, a, "a");
    ops::binaryInPlace(g.graph, seq, c, ta, tensorOf(g, b, "b").tensor);
  });
}

MRT_API mrt_status mrt_ops_fill(mrt_graph *graph, mrt_program sequence, mrt_tensor tensor, double value) noexcept {
  return changeGraph("mrt_ops_fill", graph, [&](mrt_graph &g) {
    auto &seq = sequenceOf(g, sequence);
    const hwsim::Tensor &t = tensorOf(g, tensor, "tensor").tensor;
    refuseConstantDestination(g, tensor, "tensor");
    ops::fill(g.graph, seq, t, value);
  });
}

namespace {

// mrt_ops_matmul and mrt_ops_matmul_preloaded_rhs: load, when not null, is
// the program that writes b and makes b's copies (ops::matMul's rhsLoad).
void matMul(mrt_graph &g, mrt_program sequence, hwsim::program::Sequence *load, mrt_tensor a, mrt_tensor b,
            int32_t out_type, const char *name, uint32_t first_tile, uint32_t num_tiles, mrt_tensor *out) {
  requireNotNull(out, "out");
  auto &seq = sequenceOf(g, sequence);
  const hwsim::Tensor &ta = tensorOf(g, a, "a").tensor;
  const hwsim::Tensor &tb = tensorOf(g, b, "b").tensor;
  if (ta.rank() != 2 || tb.rank() != 2 || ta.dim(0 + 1) != tb.dim(0)) {
    throw Error(ErrorCode::InvalidArgument, "a {} of shape [{}] and b {} of shape [{}] do not chain as [M,K] x [K,N]",
                describeTensor(g, a), fmt::join(ta.shape(), ", "), describeTensor(g, b),
                fmt::join(tb.shape(), ", "));
  }
  const Type in = ta.elementType();
  if (tb.elementType() != in || !isFloat(in)) {
    throw Error(ErrorCode::InvalidArgument, "matmul takes F32 x F32 or F16 x F16, not {} x {}",
                hwsim::toString(in), hwsim::toString(tb.elementType()));
  }
  const Type outType = out_type == -1 ? Type::F32 : hwsimTypeOf(out_type, "out_type");
  if (outType != Type::F32 && !(outType == Type::F16 && in == Type::F16)) {
    throw Error(ErrorCode::InvalidArgument, "out_type {} is not possible for {} inputs (F32, or F16 for F16)",
                hwsim::toString(outType), hwsim::toString(in));
  }
  const ops::TileRange tiles = tilesOf(g, first_tile, num_tiles);
  returnTensor(g, out, name, [&] { return ops::matMul(g.graph, seq, ta, tb, nameOf(name), tiles, outType, load); });
}

}  // namespace

MRT_API mrt_status mrt_ops_matmul(mrt_graph *graph, mrt_program sequence, mrt_tensor a, mrt_tensor b,
                                  int32_t out_type, const char *name, uint32_t first_tile, uint32_t num_tiles,
                                  mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_matmul", graph, [&](mrt_graph &g) {
    matMul(g, sequence, nullptr, a, b, out_type, name, first_tile, num_tiles, out);
  });
}

MRT_API mrt_status mrt_ops_matmul_preloaded_rhs(mrt_graph *graph, mrt_program sequence, mrt_program load_sequence,
                                                mrt_tensor a, mrt_tensor b, int32_t out_type, const char *name,
                                                uint32_t first_tile, uint32_t num_tiles, mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_matmul_preloaded_rhs", graph, [&](mrt_graph &g) {
    hwsim::program::Sequence &load = sequenceOf(g, load_sequence, "load_sequence");
    if (load_sequence == sequence) {
      throw Error(ErrorCode::InvalidArgument,
                  "load_sequence 0x{:x} is the matmul's own sequence; b's copies belong in the program that loads it",
                  load_sequence);
    }
    matMul(g, sequence, &load, a, b, out_type, name, first_tile, num_tiles, out);
  });
}

MRT_API mrt_status mrt_ops_create_matmul_input(mrt_graph *graph, int32_t operand, int32_t data_type,
                                               const uint64_t a_shape[2], const uint64_t b_shape[2],
                                               const char *name, uint32_t first_tile, uint32_t num_tiles,
                                               mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_create_matmul_input", graph, [&](mrt_graph &g) {
    if (operand < MRT_MATMUL_LHS || operand > MRT_MATMUL_RHS_PRELOADED) {
      throw Error(ErrorCode::InvalidArgument,
                  "operand {} is not an mrt_matmul_operand (0 LHS, 1 RHS, 2 LHS_OF_PRELOADED, 3 RHS_PRELOADED)",
                  operand);
    }
    const Type type = hwsimTypeOf(data_type, "data_type");
    const hwsim::Shape as = shapeOf(a_shape, 2, "a_shape");
    const hwsim::Shape bs = shapeOf(b_shape, 2, "b_shape");
    if (as[1] != bs[0]) {
      throw Error(ErrorCode::InvalidArgument, "a_shape [{}] and b_shape [{}] do not chain as [M,K] x [K,N]",
                  fmt::join(as, ", "), fmt::join(bs, ", "));
    }
    const ops::TileRange tiles = tilesOf(g, first_tile, num_tiles);
    const bool preloaded = operand == MRT_MATMUL_LHS_OF_PRELOADED || operand == MRT_MATMUL_RHS_PRELOADED;
    const bool lhs = operand == MRT_MATMUL_LHS || operand == MRT_MATMUL_LHS_OF_PRELOADED;
    returnTensor(g, out, name, [&] {
      return lhs ? ops::createMatMulInputLhs(g.graph, type, as, bs, nameOf(name), tiles, preloaded)
                 : ops::createMatMulInputRhs(g.graph, type, as, bs, nameOf(name), tiles, preloaded);
    });
  });
}

MRT_API mrt_status mrt_ops_reduce(mrt_graph *graph, mrt_program sequence, const char *codelet, mrt_tensor in,
                                  const uint64_t *axes, size_t num_axes, const char *name, uint32_t first_tile,
                                  uint32_t num_tiles, mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_reduce", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    auto &seq = sequenceOf(g, sequence);
    const std::string_view c = familyCodelet(codelet, kReduce, "reduce");
    const hwsim::Tensor &t = tensorOf(g, in, "in").tensor;
    if (t.elementType() == Type::BOOL) badType(g, "in", in, c, "numeric types");
    if (num_axes > 0) requireNotNull(axes, "axes");
    std::vector<std::size_t> list;
    for (std::size_t i = 0; i < num_axes; ++i) {
      if (axes[i] >= t.rank() || std::find(list.begin(), list.end(), axes[i]) != list.end()) {
        throw Error(ErrorCode::InvalidArgument, "axes[{}] = {} is out of range or repeated for {} of rank {}", i,
                    axes[i], describeTensor(g, in), t.rank());
      }
      list.push_back(axes[i]);
    }
    const ops::TileRange tiles = tilesOf(g, first_tile, num_tiles);
    returnTensor(g, out, name, [&] { return ops::reduce(g.graph, seq, c, t, list, nameOf(name), tiles); });
  });
}

MRT_API mrt_status mrt_ops_softmax(mrt_graph *graph, mrt_program sequence, mrt_tensor in, const char *name,
                                   uint32_t first_tile, uint32_t num_tiles, mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_softmax", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    auto &seq = sequenceOf(g, sequence);
    const hwsim::Tensor &t = tensorOf(g, in, "in").tensor;
    if (!isFloat(t.elementType())) badType(g, "in", in, "Softmax", "F16 or F32");
    if (t.rank() == 0) throw Error(ErrorCode::InvalidArgument, "in {} is a scalar; Softmax needs rank >= 1", describeTensor(g, in));
    const ops::TileRange tiles = tilesOf(g, first_tile, num_tiles);
    returnTensor(g, out, name, [&] { return ops::softmax(g.graph, seq, t, nameOf(name), tiles); });
  });
}

MRT_API mrt_status mrt_ops_argmax(mrt_graph *graph, mrt_program sequence, mrt_tensor in, const char *name,
                                  uint32_t first_tile, uint32_t num_tiles, mrt_tensor *out) noexcept {
  return changeGraph("mrt_ops_argmax", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    auto &seq = sequenceOf(g, sequence);
    const hwsim::Tensor &t = tensorOf(g, in, "in").tensor;
    if (t.elementType() == Type::BOOL) badType(g, "in", in, "ArgMax", "numeric types");
    if (t.rank() == 0) throw Error(ErrorCode::InvalidArgument, "in {} is a scalar; ArgMax needs rank >= 1", describeTensor(g, in));
    const ops::TileRange tiles = tilesOf(g, first_tile, num_tiles);
    returnTensor(g, out, name, [&] { return ops::argMax(g.graph, seq, t, nameOf(name), tiles); });
  });
}
