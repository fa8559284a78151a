// Operand access shared by the float kernels (MatMul, Conv, pooling): typed
// pointers into an operand, and F16 operands widened to F32 in per-thread
// scratch buffers, so each kernel runs one F32 Eigen kernel for both types.
#pragma once

#include <cstddef>
#include <vector>

#include "codelets/registry.hpp"
#include "codelets/type_dispatch.hpp"
#include "kernel_entry.hpp"

namespace hwsim::detail::HWSIM_ISA {

template <Type T>
Storage<T> *ptr(const Operand &o) {
  return reinterpret_cast<Storage<T> *>(o.data);
}

// Scratch buffer `which` (0 to 5) of the calling thread. A vertex runs on one
// thread from start to end, so a kernel owns all six while it executes.
inline std::vector<float> &scratch(int which) {
  thread_local std::vector<float> buffers[6];
  return buffers[which];
}

// The operand's elements as F32: in place for F32, widened into scratch
// buffer `which` for F16.
inline const float *asF32(const Operand &o, int which) {
  if (o.type == Type::F32) return ptr<Type::F32>(o);
  auto &buf = scratch(which);
  buf.resize(o.numElements);
  const auto *h = ptr<Type::F16>(o);
  for (std::size_t i = 0; i < o.numElements; ++i) buf[i] = static_cast<float>(h[i]);
  return buf.data();
}

}  // namespace hwsim::detail::HWSIM_ISA
