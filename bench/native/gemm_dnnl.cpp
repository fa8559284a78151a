#include <oneapi/dnnl/dnnl.hpp>

#include "gemm_backends.hpp"

// GCC's OpenMP runtime, which Debian's oneDNN runs on.
extern "C" void omp_set_num_threads(int);

namespace mrt_bench::gemm {

void dnnlInit() { omp_set_num_threads(1); }

void dnnlSgemm(std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c) {
  const auto m = static_cast<dnnl_dim_t>(M), k = static_cast<dnnl_dim_t>(K), n = static_cast<dnnl_dim_t>(N);
  dnnl_sgemm('N', 'N', m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

struct DnnlMatmul::State {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::memory::desc a, b, c;
  dnnl::matmul primitive;
};

DnnlMatmul::DnnlMatmul(std::size_t M, std::size_t K, std::size_t N) : state_(new State) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  const auto m = static_cast<dnnl::memory::dim>(M), k = static_cast<dnnl::memory::dim>(K),
             n = static_cast<dnnl::memory::dim>(N);
  State &s = *state_;
  s.a = dnnl::memory::desc({m, k}, dt::f32, tag::ab);
  s.b = dnnl::memory::desc({k, n}, dt::f32, tag::ab);
  s.c = dnnl::memory::desc({m, n}, dt::f32, tag::ab);
  s.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(s.a, s.b, s.c), s.engine));
}

DnnlMatmul::~DnnlMatmul() = default;

void DnnlMatmul::run(const float *a, const float *b, float *c) {
  State &s = *state_;
  dnnl::memory am(s.a, s.engine, const_cast<float *>(a)), bm(s.b, s.engine, const_cast<float *>(b)),
      cm(s.c, s.engine, c);
  s.primitive.execute(s.stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
}

}  // namespace mrt_bench::gemm
