// Elementwise F32 math with every element on Eigen's packet path. Eigen
// computes the elements before the first aligned packet and after the last
// whole one one at a time with the scalar libm function (expf, tanhf...),
// which may differ from the packet function by an ulp, and for rows shorter
// than a packet (Softmax over the mlp's 10 classes, one row per vertex) is
// every element: 16 rows of 10 took 160 calls of glibc's expf.
#pragma once

#include <algorithm>
#include <cstddef>

#include <Eigen/Core>

#include "kernel_entry.hpp"

namespace hwsim::detail::HWSIM_ISA {

constexpr std::size_t kFloatLanes = Eigen::internal::packet_traits<float>::size;

// In place on an aligned buffer of whole packets, so Eigen runs no scalar
// head or tail.
using AlignedPackets = Eigen::Map<Eigen::ArrayXf, Eigen::Aligned64>;

// out[i] = f(in[i]) for i in [0, n), f applied by apply(AlignedPackets&) to
// chunks of in staged in a 64-byte aligned buffer padded to whole packets.
// The padding repeats the chunk's last element so that it stays in f's
// domain (no log(0) or acosh(0) computed and thrown away). Each element's
// value is then the packet function's wherever the element lies, so a
// kernel may split or join elements freely (elementwise_runs.hpp). in may
// equal out.
template <class Apply>
void packetwise(const float *in, float *out, std::size_t n, Apply apply) {
  constexpr std::size_t kChunk = 256;
  static_assert(kChunk % kFloatLanes == 0);
  alignas(64) float stage[kChunk];
  for (std::size_t base = 0; base < n; base += kChunk) {
    const std::size_t m = std::min(kChunk, n - base);
    const std::size_t padded = (m + kFloatLanes - 1) / kFloatLanes * kFloatLanes;
    std::fill(std::copy(in + base, in + base + m, stage), stage + padded, in[base + m - 1]);
    AlignedPackets packets(stage, static_cast<Eigen::Index>(padded));
    apply(packets);
    std::copy(stage, stage + m, out + base);
  }
}

}  // namespace hwsim::detail::HWSIM_ISA
