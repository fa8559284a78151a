// mnist-8 (the ONNX model zoo's MNIST CNN) computed directly with Eigen
// compiled for this machine (-march=native, mnist_native.cpp), one thread:
// the native baseline of bench_mnist_native. The same layers as the model:
// Conv 5x5 pad 2 1->8 on 28x28, channel bias, Relu, MaxPool 2x2; Conv 5x5
// pad 2 8->16 on 14x14, bias, Relu, MaxPool 3x3 stride 3; the 256 values
// times a 256x10 matrix plus a bias. Each Conv is im2col + one GEMM.
#pragma once

#include <memory>

namespace mrt_bench {

struct MnistWeights {
  const float *conv1;  // [8,1,5,5]
  const float *bias1;  // [8]
  const float *conv2;  // [16,8,5,5]
  const float *bias2;  // [16]
  const float *fc;     // [256,10] (the model's [16,4,4,10], row-major)
  const float *fcBias;  // [10]
};

class NativeMnist {
 public:
  // Copies the weights.
  explicit NativeMnist(const MnistWeights &weights);
  ~NativeMnist();
  NativeMnist(const NativeMnist &) = delete;
  NativeMnist &operator=(const NativeMnist &) = delete;

  // image [1,1,28,28] -> logits [1,10]; allocates nothing.
  void run(const float *image, float *logits);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mrt_bench
