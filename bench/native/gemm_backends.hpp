// Single-precision GEMM through each CPU library bench_gemm_kernels compares:
// C[M,N] = A[M,K] * B[K,N], every matrix row-major and dense, one thread.
// Each library lives in a file of its own (their headers declare the same
// CBLAS names).
#pragma once

#include <cstddef>
#include <memory>

namespace mrt_bench::gemm {

// Eigen compiled for this machine (-march=native), as mlp_native.cpp.
void eigenNative(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c);

// OpenBLAS cblas_sgemm; openBlasInit() limits it to one thread.
void openBlasInit();
void openBlas(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c);

// BLIS's own API (bli_sgemm, strides given); blisInit() limits it to one thread.
void blisInit();
void blis(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c);

// oneDNN's dnnl_sgemm (its GEMM driver, JIT kernels made once per process);
// dnnlInit() limits OpenMP, which it runs on, to one thread.
void dnnlInit();
void dnnlSgemm(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c);

// A oneDNN matmul primitive made once for one shape, run on any operands of it.
class DnnlMatmul {
 public:
  DnnlMatmul(std::size_t M, std::size_t K, std::size_t N);
  ~DnnlMatmul();
  DnnlMatmul(const DnnlMatmul &) = delete;
  DnnlMatmul &operator=(const DnnlMatmul &) = delete;
  void run(const float *a, const float *b, float *c);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mrt_bench::gemm
