// hwsim speed: a matmul compute set run through the engine next to the same
// product computed directly with Eigen (target >= 0.5x Eigen's GFLOP/s from
// 256 up), and the host overhead of an empty run and of one stream-copy host
// sync (targets < 1 us each).
#include <cstring>

#include <Eigen/Core>
#include <benchmark/benchmark.h>

#include "hwsim/hwsim.hpp"

namespace {

using hwsim::Type;
namespace p = hwsim::program;
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void setFlops(benchmark::State &state, double n) {
  state.counters["GFLOPS"] = benchmark::Counter(2 * n * n * n, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

void BM_EigenMatMul(benchmark::State &state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  RowMajor a = RowMajor::Random(n, n), b = RowMajor::Random(n, n), c(n, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
  }
  setFlops(state, static_cast<double>(n));
}

// One Execute of a compute set of MatMul vertices: the [n,n] output in
// blocks of `block` x `block` on a grid of tiles, each vertex with its rows of
// a and columns of b already on its tile (as ops::matMul leaves them).
void BM_EngineMatMul(benchmark::State &state) {
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  const std::size_t block = static_cast<std::size_t>(state.range(1));
  const std::size_t grid = n / block;
  hwsim::Target target = hwsim::Target::gc200();
  hwsim::Graph g(target);
  auto out = g.addVariable(Type::F32, {n, n}, "c");
  auto cs = g.addComputeSet("matmul");
  unsigned tile = 0;
  for (std::size_t i = 0; i < grid; ++i) {
    for (std::size_t j = 0; j < grid; ++j, ++tile) {
      auto a = g.addVariable(Type::F32, {block, n});
      auto b = g.addVariable(Type::F32, {n, block});
      // Row blocks of c are contiguous when the grid has one column.
      auto c = out.slice(i * block, (i + 1) * block, 0).slice(j * block, (j + 1) * block, 1);
      for (auto &t : {a, b, c}) g.setTileMapping(t, tile);
      g.addVertex(cs, "MatMul", {{"a", a}, {"b", b}, {"out", c}}, tile);
    }
  }
  hwsim::Engine engine(g, {p::Execute(cs)});
  auto dev = hwsim::DeviceManager::createIpuModelDevice(target);
  dev.attach();
  engine.load(dev);
  for (auto _ : state) engine.run(0);
  setFlops(state, static_cast<double>(n));
  state.counters["tiles"] = static_cast<double>(grid * grid);
  state.counters["device_us_per_run"] =
      static_cast<double>(engine.deviceCycles()) / target.clockHz * 1e6 / static_cast<double>(state.iterations());
}

void BM_EmptyProgramRun(benchmark::State &state) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  hwsim::Engine engine(g, {p::Sequence()});
  auto dev = hwsim::DeviceManager::createSmallIpuModelDevice();
  dev.attach();
  engine.load(dev);
  for (auto _ : state) engine.run(0);
}

void BM_StreamCopyHostSync(benchmark::State &state) {
  hwsim::Graph g(hwsim::Target::smallIpuModel());
  auto x = g.addVariable(Type::F32, {4});
  g.setTileMapping(x, 0);
  auto in = g.addHostToDeviceFIFO("in", Type::F32, 4);
  hwsim::Engine engine(g, {p::Copy(in, x)});
  auto dev = hwsim::DeviceManager::createSmallIpuModelDevice();
  dev.attach();
  engine.load(dev);
  const float data[4] = {1, 2, 3, 4};
  engine.connectStreamToCallback("in", [&](void *ptr) { std::memcpy(ptr, data, sizeof(data)); });
  for (auto _ : state) engine.run(0);
}


// The mlp example's Main program (batch 1: [1,784] x [784,128], bias, relu,
// [1,128] x [128,10], bias, softmax) run by the engine on this thread with
// fixed stream buffers, next to the same math with Eigen: the engine's own
// per-run overhead, without the runner's thread hand-offs.
struct MlpWeights {
  RowMajor w1 = RowMajor::Random(784, 128) * 0.1f, b1 = RowMajor::Random(1, 128) * 0.1f;
  RowMajor w2 = RowMajor::Random(128, 10) * 0.3f, b2 = RowMajor::Random(1, 10) * 0.1f;
};

void BM_MlpEngineMain(benchmark::State &state) {
  namespace ops = hwsim::ops;
  const hwsim::Target target = hwsim::Target::gc200();
  hwsim::Graph g(target);
  auto image = ops::createMatMulInputLhs(g, Type::F32, {1, 784}, {784, 128}, "image");
  auto w1 = ops::createMatMulInputRhs(g, Type::F32, {1, 784}, {784, 128}, "w1");
  auto b1 = ops::createTensor(g, Type::F32, {128}, "b1");
  auto w2 = ops::createMatMulInputRhs(g, Type::F32, {1, 128}, {128, 10}, "w2");
  auto b2 = ops::createTensor(g, Type::F32, {10}, "b2");
  p::Sequence load, main;
  for (const auto &[name, t] : std::vector<std::pair<std::string, hwsim::Tensor>>{{"w1", w1}, {"b1", b1}, {"w2", w2}, {"b2", b2}}) {
    load.add(p::Copy(g.addHostToDeviceFIFO(name, Type::F32, t.numElements()), t));
  }
  main.add(p::Copy(g.addHostToDeviceFIFO("image", Type::F32, 784), image));
  auto h = ops::binary(g, main, "Add", ops::matMul(g, main, image, w1, "layer1"), b1, "bias1");
  auto o = ops::matMul(g, main, ops::unary(g, main, "Relu", h, "relu"), w2, "layer2");
  ops::binaryInPlace(g, main, "Add", o, b2);
  auto probs = ops::softmax(g, main, o, "probs");
  main.add(p::Copy(probs, g.addDeviceToHostFIFO("probs", Type::F32, 10)));
  hwsim::Engine engine(g, {load, main});
  auto dev = hwsim::DeviceManager::createIpuModelDevice(target);
  dev.attach();
  engine.load(dev);
  MlpWeights m;
  RowMajor x = RowMajor::Constant(1, 784, 0.5f), y(1, 10);
  engine.connectStream("w1", m.w1.data());
  engine.connectStream("b1", m.b1.data());
  engine.connectStream("w2", m.w2.data());
  engine.connectStream("b2", m.b2.data());
  engine.connectStreamToCallback("image", [&](void *p) { std::memcpy(p, x.data(), 784 * 4); });
  engine.connectStreamToCallback("probs", [&](void *p) { std::memcpy(y.data(), p, 40); });
  engine.run(0);
  for (auto _ : state) engine.run(1);
}

void BM_MlpEigen(benchmark::State &state) {
  MlpWeights m;
  RowMajor x = RowMajor::Constant(1, 784, 0.5f), probs(1, 10);
  for (auto _ : state) {
    RowMajor hidden = ((x * m.w1) + m.b1).cwiseMax(0.f);
    RowMajor logits = hidden * m.w2 + m.b2;
    logits = (logits.array() - logits.maxCoeff()).exp();
    probs = logits / logits.sum();
    benchmark::DoNotOptimize(probs.data());
  }
}
}  // namespace

// Wall time: the engine uses several host threads, so CPU time of the main thread would flatter it.
BENCHMARK(BM_EigenMatMul)->Arg(128)->Arg(256)->Arg(512)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EngineMatMul)
    ->Args({128, 32})->Args({256, 32})->Args({256, 64})->Args({512, 32})->Args({512, 64})->Args({1024, 32})->Args({1024, 64})
    ->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EmptyProgramRun)->UseRealTime();
BENCHMARK(BM_StreamCopyHostSync)->UseRealTime();
BENCHMARK(BM_MlpEngineMain)->UseRealTime()->MinTime(0.1);
BENCHMARK(BM_MlpEigen)->UseRealTime()->MinTime(0.1);

BENCHMARK_MAIN();
