#include <blis.h>

#include "gemm_backends.hpp"

namespace mrt_bench::gemm {

void blisInit() { bli_thread_set_num_threads(1); }

void blis(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c) {
  float one = 1.0f, zero = 0.0f;
  const auto m = static_cast<dim_t>(M), k = static_cast<dim_t>(K), n = static_cast<dim_t>(N);
  bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, m, n, k, &one, const_cast<float *>(a), k, 1,
            const_cast<float *>(b), n, 1, &zero, c, n, 1);
}

}  // namespace mrt_bench::gemm
