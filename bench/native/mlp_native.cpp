#include "mlp_native.hpp"

#include <Eigen/Core>

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
};

NativeMlp::NativeMlp(std::size_t batch, const float *w1, const float *b1, const float *w2, const float *b2)
    : state_(new State{static_cast<Eigen::Index>(batch), ConstMap(w1, 784, 128), ConstMap(w2, 128, 10),
                       Eigen::Map<const Eigen::RowVectorXf>(b1, 128), Eigen::Map<const Eigen::RowVectorXf>(b2, 10),
                       Matrix(batch, 128), Matrix(batch, 10)}) {}

NativeMlp::~NativeMlp() = default;

void NativeMlp::run(const float *image, float *probs) {
  State &s = *state_;
  s.hidden.noalias() = ConstMap(image, s.batch, 784) * s.w1;
  s.hidden = (s.hidden.rowwise() + s.b1).cwiseMax(0.f);
  s.logits.noalias() = s.hidden * s.w2;
  s.logits.rowwise() += s.b2;
  Eigen::Map<Matrix> out(probs, s.batch, 10);
  for (Eigen::Index r = 0; r < s.batch; ++r) {
    auto row = out.row(r);
    row = (s.logits.row(r).array() - s.logits.row(r).maxCoeff()).exp().matrix();
    row /= row.sum();
  }
}

}  // namespace mrt_bench
