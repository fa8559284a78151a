// Compile time of the ONNX frontend on the model zoo's MNIST CNN: reading,
// checking, shape inference, folding, lowering, hwsim compilation and the
// PopEF model, at batch 1 and 16 (the per-tile plans grow with the batch).
// Per-inference cost against a native baseline is in bench_model_runner
// (BM_OnnxMlpExecute next to BM_MlpEigenBaseline).
#include <benchmark/benchmark.h>

#include "onnx/frontend.hpp"

namespace {

void BM_OnnxCompileMnist(benchmark::State &state) {
  mrt::onnx::OnnxOptions options;
  options.batchSize = state.range(0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(mrt::onnx::compileOnnxFile(MRT_BENCH_ONNX_DATA "/mnist-8/model.onnx", options));
  }
}
BENCHMARK(BM_OnnxCompileMnist)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(0.5);

}  // namespace
BENCHMARK_MAIN();
