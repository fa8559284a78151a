// ModelRunner benchmarks, each next to its baseline in this binary:
//   * execute round trip on add_one batch 1 vs a request/reply over two
//     SpscRingBuffers between two threads (the floor of any hand-off; a
//     synchronous execute on an idle replica is served on the caller's
//     thread, so it needs none);
//   * mlp batch 1 execute vs the same math with Eigen on this thread
//     (target: at most 1.3x), and the same mlp written as ONNX and compiled
//     by the ONNX frontend (what an imported model costs against native);
//   * async throughput with 1 and 2 client threads, and with 1 vs 2 replicas;
//   * add_one with 1 MiB and 16 MiB tensors vs one plain memcpy of that size
//     (target: at most 4 memcpys; copy in, add, copy out is a floor of 3).
// Each runs for 0.1 s by default so the whole binary takes a few seconds; for
// figures, run with --benchmark_repetitions and compare medians.
// The simulated system lives in a private lock directory (MRT_HWSIM_LOCK_DIR).
#include "private_devices.hpp"

#include <stdlib.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <Eigen/Dense>
#include <benchmark/benchmark.h>
#include <onnx/onnx_pb.h>

#include "internal_example_models.hpp"
#include "onnx/frontend.hpp"
#include "queue/spsc_ring_buffer.hpp"
#include "runner/model_runner.hpp"

namespace {

using namespace mrt;

std::shared_ptr<popef::Model> model(const std::string &name, std::size_t batch = 1, std::size_t size = 16) {
  example_models::ExampleOptions options;
  options.batch = batch;
  options.size = size;
  return example_models::buildExampleModel(name, options);
}

// ---- round trip ---------------------------------------------------------

void BM_AddOneExecuteRoundTrip(benchmark::State &state) {
  ModelRunner runner(model("add_one"));
  std::vector<float> x(16, 1.f), y(16);
  const InputMemoryView in{{"x", {x.data(), 64}}};
  const OutputMemoryView out{{"y", {y.data(), 64}}};
  for (auto _ : state) runner.execute(in, out);
  if (y[0] != 2.f) state.SkipWithError("wrong result");
}
BENCHMARK(BM_AddOneExecuteRoundTrip)->UseRealTime()->MinTime(0.1);

// Request over one ring, reply over another, the reply thread copying the
// 64 bytes and adding one like the device would.
void BM_SpscRoundTripBaseline(benchmark::State &state) {
  SpscRingBuffer<const float *> requests(4, "requests");
  SpscRingBuffer<float *> replies(4, "replies");
  std::vector<float> x(16, 1.f), y(16);
  std::atomic<bool> done{false};
  std::thread device([&] {
    while (true) {
      const float *in = requests.readLock();
      if (in == nullptr) break;
      requests.readComplete();
      for (int i = 0; i < 16; ++i) y[i] = in[i] + 1.f;
      replies.write(y.data());
    }
  });
  for (auto _ : state) {
    requests.write(x.data());
    benchmark::DoNotOptimize(replies.readLock());
    replies.readComplete();
  }
  requests.write(nullptr);
  device.join();
}
BENCHMARK(BM_SpscRoundTripBaseline)->UseRealTime()->MinTime(0.1);

// ---- mlp ------------------------------------------------------------------

void BM_MlpExecute(benchmark::State &state) {
  ModelRunner runner(model("mlp"));
  std::vector<float> image(784, 0.5f), probs(10);
  const InputMemoryView in{{"image", {image.data(), image.size() * 4}}};
  const OutputMemoryView out{{"probs", {probs.data(), 40}}};
  for (auto _ : state) runner.execute(in, out);
}
BENCHMARK(BM_MlpExecute)->UseRealTime()->MinTime(0.1);

void BM_MlpEigenBaseline(benchmark::State &state) {
  auto m = model("mlp");
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  auto load = [&](const char *name, Eigen::Index rows, Eigen::Index cols) {
    const popef::TensorData &data = m->tensorData(name);
    return Matrix(Eigen::Map<const Matrix>(reinterpret_cast<const float *>(data.data()), rows, cols));
  };
  const Matrix w1 = load("w1", 784, 128), b1 = load("b1", 1, 128), w2 = load("w2", 128, 10), b2 = load("b2", 1, 10);
  Matrix image = Matrix::Constant(1, 784, 0.5f), probs(1, 10);
  for (auto _ : state) {
    Matrix hidden = ((image * w1) + b1).cwiseMax(0.f);
    Matrix logits = hidden * w2 + b2;
    logits = (logits.array() - logits.maxCoeff()).exp();
    probs = logits / logits.sum();
    benchmark::DoNotOptimize(probs.data());
  }
}
BENCHMARK(BM_MlpEigenBaseline)->UseRealTime()->MinTime(0.1);

// The example mlp as an ONNX model with the same weights: MatMul, Add, Relu,
// MatMul, Add, Softmax, compiled by the ONNX frontend.
std::shared_ptr<popef::Model> onnxMlp() {
  auto m = model("mlp");
  ::onnx::ModelProto proto;
  proto.set_ir_version(8);
  proto.add_opset_import()->set_version(13);
  ::onnx::GraphProto &g = *proto.mutable_graph();
  g.set_name("mlp");
  auto addInitializer = [&](const char *name, std::vector<std::int64_t> dims) {
    ::onnx::TensorProto &t = *g.add_initializer();
    t.set_name(name);
    t.set_data_type(::onnx::TensorProto::FLOAT);
    for (const auto d : dims) t.add_dims(d);
    const popef::TensorData &data = m->tensorData(name);
    t.set_raw_data(data.data(), data.size());
  };
  addInitializer("w1", {784, 128});
  addInitializer("b1", {1, 128});
  addInitializer("w2", {128, 10});
  addInitializer("b2", {1, 10});
  auto addValue = [](::onnx::ValueInfoProto &v, const char *name, std::int64_t width) {
    v.set_name(name);
    auto &tensor = *v.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(::onnx::TensorProto::FLOAT);
    tensor.mutable_shape()->add_dim()->set_dim_value(1);
    tensor.mutable_shape()->add_dim()->set_dim_value(width);
  };
  addValue(*g.add_input(), "image", 784);
  addValue(*g.add_output(), "probs", 10);
  auto addNode = [&](const char *op, std::vector<const char *> inputs, const char *output) {
    ::onnx::NodeProto &n = *g.add_node();
    n.set_op_type(op);
    for (const char *input : inputs) n.add_input(input);
    n.add_output(output);
  };
  addNode("MatMul", {"image", "w1"}, "h0");
  addNode("Add", {"h0", "b1"}, "h1");
  addNode("Relu", {"h1"}, "h");
  addNode("MatMul", {"h", "w2"}, "l0");
  addNode("Add", {"l0", "b2"}, "logits");
  addNode("Softmax", {"logits"}, "probs");
  const std::string bytes = proto.SerializeAsString();
  return mrt::onnx::compileOnnxMemory(bytes.data(), bytes.size(), {});
}

void BM_OnnxMlpExecute(benchmark::State &state) {
  ModelRunner runner(onnxMlp());
  std::vector<float> image(784, 0.5f), probs(10);
  const InputMemoryView in{{"image", {image.data(), image.size() * 4}}};
  const OutputMemoryView out{{"probs", {probs.data(), 40}}};
  for (auto _ : state) runner.execute(in, out);
}
BENCHMARK(BM_OnnxMlpExecute)->UseRealTime()->MinTime(0.1);

// ---- async throughput -------------------------------------------------------

// One runner shared by the benchmark's threads; each keeps a window of
// requests in flight.
std::unique_ptr<ModelRunner> g_runner;

void asyncClient(benchmark::State &state, unsigned replicas) {
  if (state.thread_index() == 0) {
    ModelRunnerConfig config;
    config.thread_safe = true;
    config.replication_factor = replicas;
    g_runner = std::make_unique<ModelRunner>(model("add_one"), config);
  }
  constexpr int kWindow = 8;
  std::vector<std::vector<float>> xs(kWindow, std::vector<float>(16, 1.f)), ys(kWindow, std::vector<float>(16));
  std::vector<std::shared_ptr<Completion>> inflight(kWindow);
  int slot = 0;
  unsigned replica = static_cast<unsigned>(state.thread_index()) % replicas;
  for (auto _ : state) {
    if (inflight[slot]) inflight[slot]->wait(std::chrono::nanoseconds(-1));
    inflight[slot] = g_runner->submit({{"x", {xs[slot].data(), 64}}}, {{"y", {ys[slot].data(), 64}}}, replica);
    slot = (slot + 1) % kWindow;
    replica = (replica + 1) % replicas;
  }
  for (auto &c : inflight) {
    if (c) c->wait(std::chrono::nanoseconds(-1));
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) g_runner.reset();
}

void BM_AsyncThroughputClients(benchmark::State &state) { asyncClient(state, 1); }
BENCHMARK(BM_AsyncThroughputClients)->Threads(1)->Threads(2)->UseRealTime()->MinTime(0.1);

void BM_AsyncThroughputReplicas(benchmark::State &state) { asyncClient(state, static_cast<unsigned>(state.range(0))); }
BENCHMARK(BM_AsyncThroughputReplicas)->Arg(1)->Arg(2)->UseRealTime()->MinTime(0.1);

// ---- large tensors ----------------------------------------------------------

void BM_LargeAddOneExecute(benchmark::State &state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  ModelRunner runner(model("add_one", 1, bytes / 4));
  std::vector<float> x(bytes / 4, 1.f), y(bytes / 4);
  const InputMemoryView in{{"x", {x.data(), bytes}}};
  const OutputMemoryView out{{"y", {y.data(), bytes}}};
  for (auto _ : state) runner.execute(in, out);
  if (y.front() != 2.f || y.back() != 2.f) state.SkipWithError("wrong result");
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}

// One plain memcpy of the same size: the whole execute (copy in, add pass,
// copy out) has a floor of 3 of these; the target is at most 4.
void BM_MemcpyBaseline(benchmark::State &state) {
  const auto bytes = static_cast<std::size_t>(state.range(0));
  std::vector<char> a(bytes, 1), b(bytes);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
// Each size next to its baseline; add_one spreads x and y over tiles, so any
// size whose x and y fit in the IPU's memory compiles.
BENCHMARK(BM_LargeAddOneExecute)->Arg(1 << 20)->UseRealTime()->MinTime(0.1);
BENCHMARK(BM_MemcpyBaseline)->Arg(1 << 20)->UseRealTime()->MinTime(0.1);
BENCHMARK(BM_LargeAddOneExecute)->Arg(16 << 20)->UseRealTime()->MinTime(0.1);
BENCHMARK(BM_MemcpyBaseline)->Arg(16 << 20)->UseRealTime()->MinTime(0.1);

}  // namespace
