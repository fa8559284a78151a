// The single-precision GEMMs of the example mlp (784-128-10) through hwsim's
// own MatMul kernel (its x86-64-v3 and v4 levels) and through each CPU library
// installed here, one thread: which is fastest on the blocks hwsim's MatMul
// vertices multiply, and on whole layers (the native baseline's calls).
// docs/performance.md, item 1, has the figures and the choice they led to.
//
// A case is a grid of GEMM calls of one shape: rowBlocks x colBlocks calls,
// call (i, j) multiplying A block i by B block j into an output of its own,
// every block a dense row-major buffer of its own, as on the tiles. The
// planner gives the mlp's layer1 (K 784, N 128) column blocks of 32 and row
// blocks of 32 (of 16 and 1 at batch 16 and 1): 128 calls of 32x784x32 at
// batch 1024, 8 at batch 64, 4 of 16x784x32 or 1x784x32 at batch 16 or 1;
// layer2 (K 128, N 10) row blocks only. Counter GFLOPS: 2*M*K*N per call.
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "codelets/kernels.hpp"
#include "codelets/registry.hpp"
#include "gemm_backends.hpp"
#include "random_floats.hpp"

namespace {

namespace gemm = mrt_bench::gemm;

struct Case {
  const char *name;
  std::size_t rowBlocks, colBlocks, M, K, N;
};

const Case kCases[] = {
    // One vertex, its operands hot in cache.
    {"vertex 1x784x32", 1, 1, 1, 784, 32},
    {"vertex 16x784x32", 1, 1, 16, 784, 32},
    {"vertex 32x784x32", 1, 1, 32, 784, 32},
    {"vertex 1x128x10", 1, 1, 1, 128, 10},
    {"vertex 16x128x10", 1, 1, 16, 128, 10},
    {"vertex 32x128x10", 1, 1, 32, 128, 10},
    // A layer's compute set, vertex by vertex.
    {"layer1 b1 as 4 vertices", 1, 4, 1, 784, 32},
    {"layer1 b16 as 4 vertices", 1, 4, 16, 784, 32},
    {"layer1 b64 as 8 vertices", 2, 4, 32, 784, 32},
    {"layer1 b1024 as 128 vertices", 32, 4, 32, 784, 32},
    {"layer2 b1024 as 32 vertices", 32, 1, 32, 128, 10},
    // A layer as one call.
    {"layer1 b1 whole", 1, 1, 1, 784, 128},
    {"layer1 b16 whole", 1, 1, 16, 784, 128},
    {"layer1 b64 whole", 1, 1, 64, 784, 128},
    {"layer1 b1024 whole", 1, 1, 1024, 784, 128},
    {"layer2 b1024 whole", 1, 1, 1024, 128, 10},
};

using GemmFn = std::function<void(std::size_t, std::size_t, std::size_t, const float *, const float *, float *)>;

// hwsim's MatMul codelet at one level, called as the interpreter calls it.
GemmFn hwsimKernel(hwsim::detail::KernelIsa isa) {
  const hwsim::detail::KernelTable *table = hwsim::detail::kernelTable(isa);
  if (table == nullptr) return nullptr;
  return [fn = table->matMul](std::size_t M, std::size_t K, std::size_t N, const float *a, const float *b, float *c) {
    using hwsim::detail::Operand;
    static const auto &spec = hwsim::detail::codeletLibrary()[*hwsim::detail::findCodelet("MatMul")];
    static const hwsim::detail::Attrs attrs{{0.0}};
    const hwsim::Shape as{M, K}, bs{K, N}, cs{M, N};
    const Operand ops[3] = {{reinterpret_cast<std::uint8_t *>(const_cast<float *>(a)), hwsim::Type::F32, &as, M * K},
                            {reinterpret_cast<std::uint8_t *>(const_cast<float *>(b)), hwsim::Type::F32, &bs, K * N},
                            {reinterpret_cast<std::uint8_t *>(c), hwsim::Type::F32, &cs, M * N}};
    fn(spec, ops, attrs);
  };
}

struct Operands {
  std::vector<std::vector<float>> a, b, c;
  explicit Operands(const Case &k) {
    for (std::size_t i = 0; i < k.rowBlocks; ++i) a.push_back(randomFloats(k.M * k.K, unsigned(i + 1)));
    for (std::size_t j = 0; j < k.colBlocks; ++j) b.push_back(randomFloats(k.K * k.N, unsigned(100 + j)));
    c.assign(k.rowBlocks * k.colBlocks, std::vector<float>(k.M * k.N));
  }
  void runAll(const Case &k, const GemmFn &fn) {
    for (std::size_t i = 0; i < k.rowBlocks; ++i) {
      for (std::size_t j = 0; j < k.colBlocks; ++j) {
        fn(k.M, k.K, k.N, a[i].data(), b[j].data(), c[i * k.colBlocks + j].data());
      }
    }
  }
};

void runCase(benchmark::State &state, const Case &k, const GemmFn &fn) {
  Operands ops(k), want(k);
  ops.runAll(k, fn);
  want.runAll(k, gemm::eigenNative);
  for (std::size_t o = 0; o < ops.c.size(); ++o) {
    for (std::size_t e = 0; e < ops.c[o].size(); ++e) {
      if (std::fabs(ops.c[o][e] - want.c[o][e]) > 1e-4f * std::max(1.f, std::fabs(want.c[o][e]))) {
        state.SkipWithError("result differs from Eigen's");
        return;
      }
    }
  }
  for (auto _ : state) {
    ops.runAll(k, fn);
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * double(k.M * k.K * k.N * k.rowBlocks * k.colBlocks);
  state.counters["GFLOPS"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char **argv) {
  gemm::openBlasInit();
  gemm::blisInit();
  gemm::dnnlInit();
  const std::pair<const char *, GemmFn> backends[] = {
      {"hwsim_v3", hwsimKernel(hwsim::detail::KernelIsa::V3)},
      {"hwsim_v4", hwsimKernel(hwsim::detail::KernelIsa::V4)},
      {"eigen_native", gemm::eigenNative},
      {"openblas", gemm::openBlas},
      {"blis", gemm::blis},
      {"dnnl_sgemm", gemm::dnnlSgemm},
  };
  for (const Case &k : kCases) {
    for (const auto &[backend, fn] : backends) {
      if (!fn) continue;  // a level this CPU cannot run
      benchmark::RegisterBenchmark((std::string(k.name) + "/" + backend).c_str(),
                                   [&k, fn = fn](benchmark::State &s) { runCase(s, k, fn); })
          ->Unit(benchmark::kMicrosecond);
    }
    // The matmul primitive made once, as a kernel would keep one per shape.
    benchmark::RegisterBenchmark((std::string(k.name) + "/dnnl_matmul").c_str(), [&k](benchmark::State &s) {
      auto primitive = std::make_shared<gemm::DnnlMatmul>(k.M, k.K, k.N);
      runCase(s, k, [primitive](std::size_t, std::size_t, std::size_t, const float *a, const float *b, float *c) {
        primitive->run(a, b, c);
      });
    })->Unit(benchmark::kMicrosecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
