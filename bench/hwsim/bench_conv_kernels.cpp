// The Conv and MaxPool host kernels of each x86-64 level on mnist-8's vertex
// geometries, side by side: both Convs as the plan splits them (the first and
// last output rows read fewer input rows, with a row pad) and one channel of
// each MaxPool. Time per pass over a Conv's vertices, or per pool vertex. Uses hwsim's private
// headers: the kernel tables are internal.
#include <algorithm>
#include <vector>

#include <benchmark/benchmark.h>

#include "codelets/kernels.hpp"
#include "codelets/registry.hpp"
#include "hwsim/types.hpp"
#include "random_floats.hpp"

namespace {

using hwsim::Shape;
using hwsim::Type;
using hwsim::detail::Attrs;
using hwsim::detail::CodeletSpec;
using hwsim::detail::KernelIsa;
using hwsim::detail::KernelTable;
using hwsim::detail::Operand;

const CodeletSpec &spec(const char *name) {
  return hwsim::detail::codeletLibrary()[*hwsim::detail::findCodelet(name)];
}

Operand operand(std::vector<float> &values, const Shape &shape) {
  return {reinterpret_cast<std::uint8_t *>(values.data()), Type::F32, &shape, values.size()};
}

// One Conv vertex of mnist-8: output rows [row, row + rows) of a conv with
// `channels` output channels, Cg input channels and 5x5 kernels, pad 2, on
// rows of `width` columns (height `height`).
struct ConvVertex {
  Shape inShape, wShape, outShape;
  std::vector<float> in, w, out;
  Attrs attrs;
  ConvVertex(std::size_t Cg, std::size_t channels, std::int64_t height, std::size_t width, std::int64_t row,
             std::int64_t rows)
      : wShape{channels, Cg, 5, 5}, outShape{1, channels, static_cast<std::size_t>(rows), width} {
    const std::int64_t r0 = std::max<std::int64_t>(0, row - 2), r1 = std::min(height, row + rows + 2);
    inShape = {1, Cg, static_cast<std::size_t>(r1 - r0), width};
    in = randomFloats(Cg * static_cast<std::size_t>(r1 - r0) * width, 1 + static_cast<unsigned>(row));
    w = randomFloats(channels * Cg * 25, 100);
    out.resize(channels * static_cast<std::size_t>(rows) * width);
    attrs = {{}, {double(r0 - (row - 2)), 2, double(row + rows + 2 - r1), 2}, {}, {1}, {0}};
  }
};

void runConvVertices(benchmark::State &state, std::vector<ConvVertex> &vertices, int repeat) {
  const auto *table = hwsim::detail::kernelTable(static_cast<KernelIsa>(state.range(0)));
  if (table == nullptr) {
    state.SkipWithError("level not run by this CPU");
    return;
  }
  const CodeletSpec &s = spec("Conv");
  for (auto _ : state) {
    for (int i = 0; i < repeat; ++i) {
      for (auto &v : vertices) {
        Operand ops[] = {operand(v.in, v.inShape), operand(v.w, v.wShape), operand(v.out, v.outShape)};
        table->conv(s, ops, v.attrs);
        benchmark::DoNotOptimize(v.out.data());
      }
    }
  }
  state.SetLabel(std::string(hwsim::detail::kernelIsaName(static_cast<KernelIsa>(state.range(0)))));
}

// The second Conv: a vertex per 2 of 16 output channels and output row of 14
// (8 input channels): 8 x 14 vertices.
void BM_SecondConvVertices(benchmark::State &state) {
  std::vector<ConvVertex> vertices;
  for (std::int64_t row = 0; row < 14; ++row) vertices.emplace_back(8, 2, 14, 14, row, 1);
  runConvVertices(state, vertices, 8);
}

// The first Conv: a vertex per 3 of 8 output channels (2 for the last) and 2
// output rows of 28 (1 input channel): 3 x 14 vertices.
void BM_FirstConvVertices(benchmark::State &state) {
  std::vector<ConvVertex> vertices;
  for (std::int64_t row = 0; row < 28; row += 2) {
    for (std::size_t channels : {3, 3, 2}) vertices.emplace_back(1, channels, 28, 28, row, 2);
  }
  runConvVertices(state, vertices, 1);
}

// One MaxPool vertex of one channel: the first MaxPool's (2x2, stride 2, 28x28
// -> 14x14) and the second's (3x3, stride 3, 14x14 -> 4x4).
void runMaxPool(benchmark::State &state, std::size_t size, double window) {
  const auto *table = hwsim::detail::kernelTable(static_cast<KernelIsa>(state.range(0)));
  if (table == nullptr) {
    state.SkipWithError("level not run by this CPU");
    return;
  }
  const auto k = static_cast<std::size_t>(window), outSize = (size - k) / k + 1;
  const Shape inShape{1, 1, size, size}, outShape{1, 1, outSize, outSize};
  std::vector<float> in = randomFloats(size * size, 7), out(outSize * outSize);
  const Attrs attrs{{window, window}, {window, window}, {}, {}};
  Operand ops[] = {operand(in, inShape), operand(out, outShape)};
  const CodeletSpec &s = spec("MaxPool");
  for (auto _ : state) {
    table->pool(s, ops, attrs);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetLabel(std::string(hwsim::detail::kernelIsaName(static_cast<KernelIsa>(state.range(0)))));
}

void BM_FirstMaxPoolVertex(benchmark::State &state) { runMaxPool(state, 28, 2); }
void BM_SecondMaxPoolVertex(benchmark::State &state) { runMaxPool(state, 14, 3); }

void levels(benchmark::internal::Benchmark *b) {
  for (KernelIsa isa : hwsim::detail::kAllKernelIsas) b->Arg(static_cast<int>(isa));
}

BENCHMARK(BM_FirstConvVertices)->Apply(levels)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SecondConvVertices)->Apply(levels)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FirstMaxPoolVertex)->Apply(levels)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SecondMaxPoolVertex)->Apply(levels)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
