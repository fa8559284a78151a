#include "mnist_native.hpp"

#include <algorithm>
#include <limits>

#include <Eigen/Core>

namespace mrt_bench {

namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const Matrix>;

constexpr int kKernel = 5, kPad = 2;

// cols [channels*25, size*size] of a size x size, `channels`-channel image,
// zero-padded by 2 on each side (SAME_UPPER of a 5x5 kernel, stride 1).
void im2col(const float *image, int channels, int size, Matrix &cols) {
  for (int c = 0; c < channels; ++c) {
    for (int ky = 0; ky < kKernel; ++ky) {
      for (int kx = 0; kx < kKernel; ++kx) {
        float *row = cols.row((c * kKernel + ky) * kKernel + kx).data();
        for (int y = 0; y < size; ++y) {
          const int iy = y + ky - kPad;
          float *out = row + y * size;
          if (iy < 0 || iy >= size) {
            std::fill(out, out + size, 0.f);
            continue;
          }
          const float *in = image + (c * size + iy) * size;
          const int x0 = std::max(0, kPad - kx), x1 = std::min(size, size + kPad - kx);
          std::fill(out, out + x0, 0.f);
          std::copy(in + x0 + kx - kPad, in + x1 + kx - kPad, out + x0);
          std::fill(out + x1, out + size, 0.f);
        }
      }
    }
  }
}

// out [channels, size/window, size/window] = max over window x window
// blocks (stride = window, no padding) of in [channels, size, size].
void maxPool(const float *in, int channels, int size, int window, float *out) {
  const int outSize = (size - window) / window + 1;
  for (int c = 0; c < channels; ++c) {
    for (int oy = 0; oy < outSize; ++oy) {
      for (int ox = 0; ox < outSize; ++ox) {
        float m = -std::numeric_limits<float>::infinity();
        for (int dy = 0; dy < window; ++dy) {
          const float *row = in + (c * size + oy * window + dy) * size + ox * window;
          for (int dx = 0; dx < window; ++dx) m = std::max(m, row[dx]);
        }
        out[(c * outSize + oy) * outSize + ox] = m;
      }
    }
  }
}

}  // namespace

struct NativeMnist::State {
  Matrix conv1, conv2, fc;                // [8,25], [16,200], [256,10]
  Eigen::VectorXf bias1, bias2;           // per output channel
  Eigen::RowVectorXf fcBias;              // [10]
  Matrix cols1, act1, cols2, act2;        // [25,784], [8,784], [200,196], [16,196]
  Eigen::VectorXf pool1;                  // [8*14*14]
  Eigen::RowVectorXf pool2;               // [256]
};

NativeMnist::NativeMnist(const MnistWeights &w)
    : state_(new State{ConstMap(w.conv1, 8, 25), ConstMap(w.conv2, 16, 200), ConstMap(w.fc, 256, 10),
                       Eigen::Map<const Eigen::VectorXf>(w.bias1, 8),
                       Eigen::Map<const Eigen::VectorXf>(w.bias2, 16),
                       Eigen::Map<const Eigen::RowVectorXf>(w.fcBias, 10), Matrix(25, 784), Matrix(8, 784),
                       Matrix(200, 196), Matrix(16, 196), Eigen::VectorXf(8 * 14 * 14),
                       Eigen::RowVectorXf(256)}) {}

NativeMnist::~NativeMnist() = default;

void NativeMnist::run(const float *image, float *logits) {
  State &s = *state_;
  im2col(image, 1, 28, s.cols1);
  s.act1.noalias() = s.conv1 * s.cols1;
  s.act1 = (s.act1.colwise() + s.bias1).cwiseMax(0.f);
  maxPool(s.act1.data(), 8, 28, 2, s.pool1.data());
  im2col(s.pool1.data(), 8, 14, s.cols2);
  s.act2.noalias() = s.conv2 * s.cols2;
  s.act2 = (s.act2.colwise() + s.bias2).cwiseMax(0.f);
  maxPool(s.act2.data(), 16, 14, 3, s.pool2.data());
  Eigen::Map<Eigen::RowVectorXf> out(logits, 10);
  out.noalias() = s.pool2 * s.fc;
  out += s.fcBias;
}

}  // namespace mrt_bench
