// The example mlp (softmax(relu(image.w1 + b1).w2 + b2)) computed directly,
// one thread, compiled for this machine (-march=native, mlp_native.cpp):
// the native baseline of bench_mlp_native. The two GEMMs are oneDNN's
// (dnnl_sgemm, its JIT kernels for this CPU: the fastest library here on
// these shapes, bench_gemm_kernels) or Eigen's; bias, Relu and Softmax are
// Eigen's either way.
#pragma once

#include <cstddef>
#include <memory>

namespace mrt_bench {

enum class GemmLibrary { OneDnn, Eigen };

class NativeMlp {
 public:
  // w1 [784,128], b1 [128], w2 [128,10], b2 [10], row-major; copied.
  // OneDnn sets the calling thread's OpenMP thread count to 1.
  NativeMlp(std::size_t batch, const float *w1, const float *b1, const float *w2, const float *b2,
            GemmLibrary gemm = GemmLibrary::OneDnn);
  ~NativeMlp();
  NativeMlp(const NativeMlp &) = delete;
  NativeMlp &operator=(const NativeMlp &) = delete;

  // image [batch,784] -> probs [batch,10]; allocates nothing.
  void run(const float *image, float *probs);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace mrt_bench
