#include "codelets/onednn_sgemm.hpp"

#include <oneapi/dnnl/dnnl.h>

// OpenMP, which Debian's oneDNN runs on (libgomp), declared here rather than
// through <omp.h>, which clang does not find for GCC's runtime.
extern "C" int omp_get_max_threads(void);
extern "C" void omp_set_num_threads(int);

namespace hwsim::detail {

bool onednnSgemm(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c,
                 bool accumulate) {
  // oneDNN would start an OpenMP team of every CPU on each call, from each
  // thread of the worker pool, which already spreads a compute set's
  // vertices over the CPUs: one thread per call, and the caller's own
  // OpenMP setting is put back after it.
  const int team = omp_get_max_threads();
  if (team != 1) omp_set_num_threads(1);
  const auto m = static_cast<dnnl_dim_t>(M), k = static_cast<dnnl_dim_t>(K), n = static_cast<dnnl_dim_t>(N);
  const dnnl_status_t status = dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, accumulate ? 1.0f : 0.0f, c, n);
  if (team != 1) omp_set_num_threads(team);
  return status == dnnl_success;
}

}  // namespace hwsim::detail
