// Operand access shared by the float kernels (MatMul, Conv, pooling): typed
// pointers into an operand, and F16 operands widened to F32 in per-thread
// scratch buffers, so each kernel runs one F32 Eigen kernel for both types.
#pragma once

#include <cstddef>
#include <cstdint>
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

// Elements from one plane of a planar operand (Operand::planePitch) to the
// next: its pitch, or planeElements when its planes lie end to end.
inline std::int64_t planePitchOf(const Operand &o, std::int64_t planeElements) {
  return o.planePitch == 0 ? planeElements : static_cast<std::int64_t>(o.planePitch / sizeOf(o.type));
}

// A planar operand's planes of planeElements each as F32, `pitch` floats
// apart: in place for F32, widened end to end into scratch buffer `which`
// for F16.
inline const float *planesAsF32(const Operand &o, int which, std::int64_t planeElements, std::int64_t &pitch) {
  pitch = planePitchOf(o, planeElements);
  if (o.type == Type::F32) return ptr<Type::F32>(o);
  const std::int64_t planes = planeElements == 0 ? 0 : static_cast<std::int64_t>(o.numElements) / planeElements;
  auto &buf = scratch(which);
  buf.resize(o.numElements);
  const auto *h = ptr<Type::F16>(o);
  for (std::int64_t p = 0; p < planes; ++p) {
    for (std::int64_t i = 0; i < planeElements; ++i) buf[p * planeElements + i] = static_cast<float>(h[p * pitch + i]);
  }
  pitch = planeElements;
  return buf.data();
}

}  // namespace hwsim::detail::HWSIM_ISA
