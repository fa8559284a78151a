#include <cblas.h>

#include "gemm_backends.hpp"

namespace mrt_bench::gemm {

void openBlasInit() { openblas_set_num_threads(1); }

void openBlas(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c) {
  const auto m = static_cast<blasint>(M), k = static_cast<blasint>(K), n = static_cast<blasint>(N);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

}  // namespace mrt_bench::gemm
