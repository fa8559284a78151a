// mnist-8 (tests/data/onnx/mnist-8, the ONNX model zoo's MNIST CNN, the same
// file as ../shared/models/mnist-8) at batch 1 on test set 0: ModelRunner
// execute of the model compiled by the ONNX frontend next to the same layers
// with the same weights computed natively by Eigen compiled for this machine
// (mnist_native.cpp), one thread. Target (issue 14): the runner at most 1.2x
// the native time. Both paths are checked once against the set's reference
// output (computed by ONNX Runtime). BM_MnistRunnerVsNative alternates the
// two within each iteration, so machine load hits both alike; its counter
// `ratio` is runner time / native time. Run pinned (taskset -c 0) as well.
#include "private_devices.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "mnist_native.hpp"
#include "onnx/compile.hpp"
#include "onnx/host_tensor.hpp"
#include "onnx/reader.hpp"
#include "onnx/tensor_file.hpp"
#include "runner/model_runner.hpp"

namespace {

using namespace mrt;
namespace frontend = mrt::onnx;

const std::string kDir = MRT_BENCH_MNIST_DIR;

std::vector<float> floats(const std::vector<std::uint8_t> &bytes) {
  std::vector<float> v(bytes.size() / sizeof(float));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(float));
  return v;
}

// The model, its float initializers by name, test set 0's input and output.
struct Mnist {
  ::onnx::ModelProto proto = frontend::readModelFile(kDir + "/model.onnx");
  std::map<std::string, std::vector<float>> weights;
  std::vector<float> image = floats(frontend::readTensorFile(kDir + "/test_data_set_0/input_0.pb", hwsim::Type::F32, 784));
  std::vector<float> want = floats(frontend::readTensorFile(kDir + "/test_data_set_0/output_0.pb", hwsim::Type::F32, 10));

  Mnist() {
    for (const auto &init : proto.graph().initializer()) {
      const frontend::HostTensor t = frontend::fromProto(init);
      if (t.type == ::onnx::TensorProto::FLOAT) weights[init.name()].assign(t.values.begin(), t.values.end());
    }
  }

  mrt_bench::MnistWeights nativeWeights() const {
    return {weights.at("Parameter5").data(),  weights.at("Parameter6").data(),  weights.at("Parameter87").data(),
            weights.at("Parameter88").data(), weights.at("Parameter193").data(), weights.at("Parameter194").data()};
  }

  // Within the tolerance the model folder's README gives (rtol 1e-3, atol 1e-4).
  bool matches(const std::vector<float> &got) const {
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::fabs(got[i] - want[i]) > 1e-4f + 1e-3f * std::fabs(want[i])) return false;
    }
    return true;
  }
};

const Mnist &mnist() {
  static const Mnist m;
  return m;
}

std::shared_ptr<popef::Model> compiled() {
  static const auto model = frontend::compileOnnx(mnist().proto, frontend::OnnxOptions{});
  return model;
}

struct RunnerPath {
  ModelRunner runner{compiled()};
  std::vector<float> image = mnist().image, logits = std::vector<float>(10);
  InputMemoryView in{{"Input3", {image.data(), image.size() * 4}}};
  OutputMemoryView out{{"Plus214_Output_0", {logits.data(), logits.size() * 4}}};
  void run() { runner.execute(in, out); }
};

struct NativePath {
  mrt_bench::NativeMnist native{mnist().nativeWeights()};
  std::vector<float> logits = std::vector<float>(10);
  void run() {
    native.run(mnist().image.data(), logits.data());
    benchmark::DoNotOptimize(logits.data());
  }
};

// Runs `path` once and checks its output; false (and the benchmark skipped) if wrong.
template <typename Path>
bool checked(benchmark::State &state, Path &path, const char *what) {
  path.run();
  if (mnist().matches(path.logits)) return true;
  state.SkipWithError((std::string(what) + " output differs from test_data_set_0's reference").c_str());
  return false;
}

void BM_MnistExecute(benchmark::State &state) {
  RunnerPath runner;
  if (!checked(state, runner, "runner")) return;
  for (auto _ : state) runner.run();
}

void BM_MnistNative(benchmark::State &state) {
  NativePath native;
  if (!checked(state, native, "native")) return;
  for (auto _ : state) native.run();
}

// One runner request then one native run per iteration; the iteration's time
// is the runner's.
void BM_MnistRunnerVsNative(benchmark::State &state) {
  RunnerPath runner;
  NativePath native;
  if (!checked(state, runner, "runner") || !checked(state, native, "native")) return;
  using Clock = std::chrono::steady_clock;
  double runnerSeconds = 0, nativeSeconds = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    runner.run();
    const auto t1 = Clock::now();
    native.run();
    const auto t2 = Clock::now();
    const double r = std::chrono::duration<double>(t1 - t0).count();
    runnerSeconds += r;
    nativeSeconds += std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(r);
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["runner_us"] = runnerSeconds / n * 1e6;
  state.counters["native_us"] = nativeSeconds / n * 1e6;
  state.counters["ratio"] = runnerSeconds / nativeSeconds;
}

// Wall time: the runner computes on its worker threads.
BENCHMARK(BM_MnistExecute)->UseRealTime()->MinTime(0.3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MnistNative)->UseRealTime()->MinTime(0.3)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MnistRunnerVsNative)->UseManualTime()->MinTime(0.5)->Unit(benchmark::kMicrosecond);

}  // namespace
