// oneDNN's single-precision GEMM for the MatMul kernels of the levels above
// baseline (hwsim/kernels/linalg_kernels.cpp). oneDNN picks its own kernels
// for the CPU at run time (JIT, up to AVX-512), so the library stays one
// portable build; on this project's machines it runs the mlp's per-tile
// blocks about twice as fast as Eigen compiled for AVX-512
// (bench/native/bench_gemm_kernels, docs/performance.md item 1).
#pragma once

#include <cstddef>

namespace hwsim::detail {

// Products of fewer multiply-adds stay with Eigen, which is faster there
// (the mlp's 1x128x10 block: 0.4 us against oneDNN's 0.6); from 16x128x10
// (1.4x faster) up, oneDNN is at least as fast. One-row products (GEMVs)
// never come here (Eigen's, or v4's own up to 64 columns:
// linalg_kernels.cpp): on 64-byte aligned operands Eigen's GEMV is faster
// (1x784x32: 1.1 us against 1.7).
inline constexpr std::size_t kOnednnMinMacs = std::size_t(1) << 14;

// c[M,N] = a[M,K] * b[K,N] (+ c when accumulate), every matrix row-major
// and dense, computed on the calling thread only. False, with c untouched,
// when oneDNN refuses (its only failures are bad arguments and a packing
// buffer it cannot allocate, both found before it writes c): the caller
// then computes the product itself.
bool onednnSgemm(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c,
                 bool accumulate);

}  // namespace hwsim::detail
