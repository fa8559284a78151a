#include <Eigen/Core>

#include "gemm_backends.hpp"

namespace mrt_bench::gemm {

void eigenNative(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto m = static_cast<Eigen::Index>(M), k = static_cast<Eigen::Index>(K), n = static_cast<Eigen::Index>(N);
  Eigen::Map<Matrix>(c, m, n).noalias() = Eigen::Map<const Matrix>(a, m, k) * Eigen::Map<const Matrix>(b, k, n);
}

}  // namespace mrt_bench::gemm
