#include "mlp_native.hpp"

#include <Eigen/Core>
#include <oneapi/dnnl/dnnl.h>

// GCC's OpenMP runtime, which Debian's oneDNN runs on (not <omp.h>: clang
// does not find GCC's).
extern "C" void omp_set_num_threads(int);

namespace mrt_bench {

namespace {
using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const Matrix>;
}  // namespace

struct NativeMlp::State {
  Eigen::Index batch;
  Matrix w1, w2;
  Eigen::RowVectorXf b1, b2;
  Matrix hidden, logits;
  GemmLibrary gemm;

  // out[batch, N] = in[batch, K] * w[K, N]
  void multiply(const float *in, const Matrix &w, Matrix &out) const {
    if (gemm == GemmLibrary::OneDnn) {
      dnnl_sgemm('N', 'N', batch, w.cols(), w.rows(), 1.0f, in, w.rows(), w.data(), w.cols(), 0.0f, out.data(),
                 w.cols());
    } else {
      out.noalias() = ConstMap(in, batch, w.rows()) * w;
    }
  }
};

NativeMlp::NativeMlp(std::size_t batch, const float *w1, const float *b1, const float *w2, const float *b2,
                     GemmLibrary gemm)
    : state_(new State{static_cast<Eigen::Index>(batch), ConstMap(w1, 784, 128), ConstMap(w2, 128, 10),
                       Eigen::Map<const Eigen::RowVectorXf>(b1, 128), Eigen::Map<const Eigen::RowVectorXf>(b2, 10),
                       Matrix(batch, 128), Matrix(batch, 10), gemm}) {
  if (gemm == GemmLibrary::OneDnn) omp_set_num_threads(1);
}

NativeMlp::~NativeMlp() = default;

void NativeMlp::run(const float *image, float *probs) {
  State &s = *state_;
  s.multiply(image, s.w1, s.hidden);
  s.hidden = (s.hidden.rowwise() + s.b1).cwiseMax(0.f);
  s.multiply(s.hidden.data(), s.w2, s.logits);
  s.logits.rowwise() += s.b2;
  Eigen::Map<Matrix> out(probs, s.batch, 10);
  for (Eigen::Index r = 0; r < s.batch; ++r) {
    auto row = out.row(r);
    row = (s.logits.row(r).array() - s.logits.row(r).maxCoeff()).exp().matrix();
    row /= row.sum();
  }
}

}  // namespace mrt_bench
