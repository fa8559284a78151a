// oneDNN's GEMM as hwsim's MatMul kernels call it: the product and the
// accumulated product of row-major operands, on the calling thread, with the
// caller's OpenMP thread count left as it was.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "codelets/onednn_sgemm.hpp"

extern "C" int omp_get_max_threads(void);
extern "C" void omp_set_num_threads(int);

namespace {

// a[i][k] = (i + 2k) mod 7 - 3, b[k][j] = (3k + j) mod 5 - 2: small
// integers, so every sum is exact in F32 and the product compares exactly.
std::vector<float> pattern(std::size_t rows, std::size_t cols, int ri, int ci, int mod) {
  std::vector<float> v(rows * cols);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      v[r * cols + c] = static_cast<float>((ri * int(r) + ci * int(c)) % mod - mod / 2);
    }
  }
  return v;
}

std::vector<float> naive(std::size_t M, std::size_t K, std::size_t N, const std::vector<float> &a,
                         const std::vector<float> &b, std::vector<float> c) {
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) {
      for (std::size_t k = 0; k < K; ++k) c[i * N + j] += a[i * K + k] * b[k * N + j];
    }
  }
  return c;
}

TEST(OnednnSgemm, MultipliesAndAccumulatesRowMajorOperands) {
  const std::size_t M = 16, K = 300, N = 70;
  const auto a = pattern(M, K, 1, 2, 7), b = pattern(K, N, 3, 1, 5);
  const std::vector<float> start = pattern(M, N, 1, 1, 3);
  std::vector<float> c = start;
  ASSERT_TRUE(hwsim::detail::onednnSgemm(M, K, N, a.data(), b.data(), c.data(), false));
  EXPECT_EQ(c, naive(M, K, N, a, b, std::vector<float>(M * N, 0.f)));
  c = start;
  ASSERT_TRUE(hwsim::detail::onednnSgemm(M, K, N, a.data(), b.data(), c.data(), true));
  EXPECT_EQ(c, naive(M, K, N, a, b, start));
}

TEST(OnednnSgemm, LeavesTheCallersOpenMpThreadCount) {
  const std::size_t M = 32, K = 784, N = 32;
  const auto a = pattern(M, K, 1, 2, 7), b = pattern(K, N, 3, 1, 5);
  std::vector<float> c(M * N);
  for (int team : {3, 1}) {
    omp_set_num_threads(team);
    ASSERT_TRUE(hwsim::detail::onednnSgemm(M, K, N, a.data(), b.data(), c.data(), false));
    EXPECT_EQ(omp_get_max_threads(), team);
  }
}

}  // namespace
