// Elementwise F32 math with every element on Eigen's packet path. Eigen
// computes the elements before the first aligned packet of the destination
// and after the last whole one one at a time with the scalar libm function
// (expf, logf...), which may differ from the packet function by an ulp, and
// for rows shorter than a packet (Softmax over the mlp's 10 classes, one row
// per vertex) is every element: 16 rows of 10 took 160 calls of glibc's expf.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <Eigen/Core>

#include "kernel_entry.hpp"

namespace hwsim::detail::HWSIM_ISA {

constexpr std::size_t kFloatLanes = Eigen::internal::packet_traits<float>::size;

// A destination of whole packets on a 64-byte boundary: Eigen runs no scalar
// head or tail on it.
using AlignedPackets = Eigen::Map<Eigen::ArrayXf, Eigen::Aligned64>;
using FloatsIn = Eigen::Map<const Eigen::ArrayXf>;

// out[i] = f(in[i]) for i in [0, n), where assign(FloatsIn x, AlignedPackets
// y) assigns y = f(x) coefficient-wise. The elements of out from its first
// 64-byte boundary on, in whole packets, are assigned in place; the few
// before and after (and all of them if out is not float-aligned) are staged
// in an aligned buffer padded to whole packets. The padding repeats the
// last staged element so that it stays in f's domain (no log(0) computed and
// thrown away). Each element's value is then the packet function's wherever
// the element lies, so a kernel may split or join elements freely
// (elementwise_runs.hpp). in may equal out.
template <class Assign>
void packetwise(const float *in, float *out, std::size_t n, Assign assign) {
  const auto staged = [&assign](const float *from, float *to, std::size_t count) {
    constexpr std::size_t kChunk = 256;
    static_assert(kChunk % kFloatLanes == 0);
    alignas(64) float stage[kChunk];
    for (std::size_t base = 0; base < count; base += kChunk) {
      const std::size_t m = std::min(kChunk, count - base);
      const auto padded = static_cast<Eigen::Index>((m + kFloatLanes - 1) / kFloatLanes * kFloatLanes);
      std::fill(std::copy(from + base, from + base + m, stage), stage + padded, from[base + m - 1]);
      assign(FloatsIn(stage, padded), AlignedPackets(stage, padded));
      std::copy(stage, stage + m, to + base);
    }
  };
  const auto address = reinterpret_cast<std::uintptr_t>(out);
  const std::size_t head =
      address % alignof(float) != 0 ? n : std::min(n, (64 - address % 64) % 64 / sizeof(float));
  const std::size_t body = (n - head) / kFloatLanes * kFloatLanes;
  if (head != 0) staged(in, out, head);
  if (body != 0) {
    const auto m = static_cast<Eigen::Index>(body);
    assign(FloatsIn(in + head, m), AlignedPackets(out + head, m));
  }
  if (head + body != n) staged(in + head + body, out + head + body, n - head - body);
}

}  // namespace hwsim::detail::HWSIM_ISA
