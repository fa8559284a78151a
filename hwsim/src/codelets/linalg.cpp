// MatMul, reductions, Softmax and ArgMax: validation and cycle costs (the
// host implementations: hwsim/kernels/linalg_kernels.cpp).
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "codelets/registry.hpp"

namespace hwsim::detail {

// ---------- MatMul ----------

std::string validateMatMul(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  const Operand &a = ops[0], &b = ops[1], &out = ops[2];
  if (a.shape->size() != 2 || b.shape->size() != 2 || out.shape->size() != 2) {
    return fmt::format("a, b and out must be rank 2 (got ranks {}, {}, {})", a.shape->size(),
                       b.shape->size(), out.shape->size());
  }
  const auto M = (*a.shape)[0], K = (*a.shape)[1], N = (*b.shape)[1];
  if ((*b.shape)[0] != K || (*out.shape)[0] != M || (*out.shape)[1] != N) {
    return fmt::format("shapes do not chain: a [{},{}] b [{},{}] out [{},{}]", M, K, (*b.shape)[0], N,
                       (*out.shape)[0], (*out.shape)[1]);
  }
  if (a.type != b.type || !isFloatingPoint(a.type)) {
    return fmt::format("a and b must both be F32 or both F16 (got {} and {})", toString(a.type),
                       toString(b.type));
  }
  if (a.type == Type::F32 && out.type != Type::F32) return "F32 inputs need an F32 out";
  if (a.type == Type::F16 && !isFloatingPoint(out.type)) return "F16 inputs need an F16 or F32 out";
  if (attrs[0].size() != 1) return "attribute accumulate must be one number";
  return {};
}

double cyclesMatMul(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &) {
  const double flops = 2.0 * static_cast<double>((*ops[0].shape)[0]) *
                       static_cast<double>((*ops[0].shape)[1]) * static_cast<double>((*ops[1].shape)[1]);
  const double rate = ops[0].type == Type::F16 ? t.f16MatMulFlopsPerCycle : t.f32MatMulFlopsPerCycle;
  return t.vertexOverheadCycles + std::ceil(flops / rate);
}

// ---------- Reduce ----------

std::string validateReduce(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  const Operand &in = ops[0], &out = ops[1];
  if (in.type != out.type) return fmt::format("in is {} but out is {}", toString(in.type), toString(out.type));
  if (in.type == Type::BOOL) return "does not take BOOL";
  std::uint64_t kept = 1;
  std::vector<bool> used(in.shape->size(), false);
  for (double a : attrs[0]) {
    if (!(a >= 0) || a >= static_cast<double>(in.shape->size()) || a != std::floor(a)) {
      return fmt::format("axis {} is not a dimension of in (rank {})", a, in.shape->size());
    }
    used[static_cast<std::size_t>(a)] = true;
  }
  if (!attrs[0].empty()) {
    for (std::size_t d = 0; d < in.shape->size(); ++d) {
      if (!used[d]) kept *= (*in.shape)[d];
    }
  }
  if (out.numElements != kept) {
    return fmt::format("out has {} elements, the kept dimensions have {}", out.numElements, kept);
  }
  return {};
}

double cyclesReduce(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &) {
  return t.vertexOverheadCycles +
         std::ceil(static_cast<double>(ops[0].numElements) / vectorWidth(t, ops[0].type));
}

// ---------- Softmax ----------

std::string validateSoftmax(const CodeletSpec &, const Operand *ops, const Attrs &) {
  const Operand &in = ops[0], &out = ops[1];
  if (!isFloatingPoint(in.type) || in.type != out.type) {
    return fmt::format("in and out must be the same float type (got {} and {})", toString(in.type),
                       toString(out.type));
  }
  if (in.shape->empty() || in.shape->back() == 0) return "in needs a non-empty last dimension";
  if (in.numElements != out.numElements) return "in and out differ in size";
  return {};
}

double cyclesSoftmax(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &) {
  const double n = static_cast<double>(ops[0].numElements);
  return t.vertexOverheadCycles + std::ceil(n * (t.transcendentalCyclesPerElement + 3.0 / vectorWidth(t, ops[0].type)));
}

// ---------- ArgMax ----------

std::string validateArgMax(const CodeletSpec &, const Operand *ops, const Attrs &) {
  const Operand &in = ops[0], &out = ops[1];
  if (in.shape->empty() || in.shape->back() == 0) return "in needs a non-empty last dimension";
  if (out.type != Type::S32 && out.type != Type::U32) return fmt::format("out must be S32 or U32, got {}", toString(out.type));
  if (out.numElements != in.numElements / in.shape->back()) {
    return fmt::format("out has {} elements, in has {} rows", out.numElements, in.numElements / in.shape->back());
  }
  return {};
}

double cyclesArgMax(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &) {
  return t.vertexOverheadCycles + static_cast<double>(ops[0].numElements);
}

}  // namespace hwsim::detail
