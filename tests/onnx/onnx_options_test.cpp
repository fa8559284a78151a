// The options of an ONNX compilation (mrt_onnx_options, mrt::OnnxOptions):
// input shapes replacing the declared ones, f16 precision, and a caller
// built against the first published (V1) options struct.
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "mrt_graph.hpp"
#include "onnx_test_data.hpp"

namespace fs = std::filesystem;

namespace {

using onnx_test::envDir;

fs::path mlpDir() { return envDir("MRT_TEST_ONNX_MODELS", MRT_TEST_ONNX_MODELS) / "mlp"; }
fs::path mnistDir() { return envDir("MRT_TEST_ONNX_DATA", MRT_TEST_ONNX_DATA) / "mnist-8"; }

std::vector<int64_t> anchorShape(const mrt::Model &model, const std::string &name) {
  for (const auto &a : model.anchors()) {
    if (a.name == name) return a.shape;
  }
  ADD_FAILURE() << "no anchor " << name;
  return {};
}

// The largest |got - want| of the first want.size() values.
double worstError(mrt::Span<const float> got, const std::vector<float> &want) {
  double worst = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  return worst;
}

// mlp's x is declared [N, 16]; compiled for [16, 16], two copies of its
// batch-8 test input give two copies of its output.
TEST(OnnxOptions, InputShapeReplacesTheDeclaredOne) {
  const fs::path set = mlpDir() / "batch_8" / "test_data_set_0";
  const std::vector<float> x = onnx_test::readTensor(set / "input_0.pb");
  const std::vector<float> y = onnx_test::readTensor(set / "output_0.pb");
  ASSERT_EQ(x.size(), 8u * 16u);
  mrt::OnnxOptions options;
  options.inputShapes["x"] = {16, 16};
  const mrt::Model model = mrt::compileOnnx(mlpDir() / "model.onnx", options);
  EXPECT_EQ(anchorShape(model, "x"), (std::vector<int64_t>{16, 16}));
  EXPECT_EQ(anchorShape(model, "y"), (std::vector<int64_t>{16, 10}));
  std::vector<float> twice = x;
  twice.insert(twice.end(), x.begin(), x.end());
  mrt::ModelRunner runner(model);
  const mrt::TensorMemory out = runner.execute({mrt::ConstTensorView("x", twice)});
  const auto got = out.as<float>("y");
  ASSERT_EQ(got.size(), 2 * y.size());
  EXPECT_LT(worstError(got, y), 1e-4);
  EXPECT_LT(worstError(mrt::Span<const float>(got.data() + y.size(), y.size()), y), 1e-4);
}

// The Main program (index 1) of a compiled ONNX model as a pipeline.
mrt_pipeline_info mainPipeline(const mrt::Model &model) {
  mrt_pipeline_info info{};
  info.struct_size = sizeof info;
  EXPECT_EQ(mrt_executable_pipeline(mrt::Executable::fromModel(model).get(), 1, &info), MRT_OK);
  return info;
}

// Layers over IPUs: the mlp (Gemm, Relu, Gemm, Softmax) compiled for two
// IPUs puts its layers on one IPU each, a 2-stage pipeline that streamed
// runs one request per slowest stage, with the one-IPU compile's outputs.
TEST(OnnxOptions, TwoIpusSplitTheLayersIntoAPipelineWithTheSameOutputs) {
  const fs::path set = mlpDir() / "batch_8" / "test_data_set_0";
  const std::vector<float> x = onnx_test::readTensor(set / "input_0.pb");
  const std::vector<float> y = onnx_test::readTensor(set / "output_0.pb");
  std::vector<float> outputs[2];
  for (const std::uint32_t ipus : {1u, 2u}) {
    mrt::OnnxOptions options;
    options.batchSize = 8;
    options.numIpus = ipus;
    const mrt::Model model = mrt::compileOnnx(mlpDir() / "model.onnx", options);
    const mrt_pipeline_info pipeline = mainPipeline(model);
    EXPECT_EQ(pipeline.num_stages, ipus);
    if (ipus == 2) {
      EXPECT_LT(pipeline.interval_cycles, pipeline.latency_cycles);
    }
    mrt::ModelRunner runner(model);
    for (int i = 0; i < 3; ++i) {  // streamed: each request's own answer
      const mrt::TensorMemory out = runner.execute({mrt::ConstTensorView("x", x)});
      EXPECT_LT(worstError(out.as<float>("y"), y), 1e-5) << ipus;
      const auto got = out.as<float>("y");
      outputs[ipus - 1].assign(got.begin(), got.end());
    }
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

// Four [448, 448] F32 MatMul layers with Relu between them: 3.2 MB of
// weights, more than one small IPU model holds (4 tiles x 624 KiB).
std::string deepMatMulModel(std::vector<std::vector<float>> &weights) {
  constexpr int kWidth = 448;
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  ::onnx::GraphProto *g = m.mutable_graph();
  g->set_name("deep");
  auto info = [](::onnx::ValueInfoProto *v, const std::string &name) {
    v->set_name(name);
    auto *type = v->mutable_type()->mutable_tensor_type();
    type->set_elem_type(::onnx::TensorProto::FLOAT);
    type->mutable_shape()->add_dim()->set_dim_value(1);
    type->mutable_shape()->add_dim()->set_dim_value(kWidth);
  };
  info(g->add_input(), "x");
  info(g->add_output(), "y");
  std::string in = "x";
  for (int layer = 0; layer < 4; ++layer) {
    const std::string w = "w" + std::to_string(layer);
    ::onnx::TensorProto *t = g->add_initializer();
    t->set_name(w);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    t->add_dims(kWidth);
    t->add_dims(kWidth);
    weights.emplace_back();
    for (int i = 0; i < kWidth * kWidth; ++i) {
      weights.back().push_back(static_cast<float>((i * 7919 + layer * 104729) % 2001 - 1000) / 20000.0f);
      t->add_float_data(weights.back().back());
    }
    const std::string out = layer == 3 ? "y" : "h" + std::to_string(layer);
    ::onnx::NodeProto *mm = g->add_node();
    mm->set_op_type("MatMul");
    mm->add_input(in);
    mm->add_input(w);
    mm->add_output(layer == 3 ? out : out + "_mm");
    if (layer < 3) {
      ::onnx::NodeProto *relu = g->add_node();
      relu->set_op_type("Relu");
      relu->add_input(out + "_mm");
      relu->add_output(out);
    }
    in = out;
  }
  return m.SerializeAsString();
}

TEST(OnnxOptions, AModelTooBigForOneIpuCompilesOnTwoAndComputesRight) {
  std::vector<std::vector<float>> weights;
  const std::string bytes = deepMatMulModel(weights);
  const mrt::Span<const std::byte> span(reinterpret_cast<const std::byte *>(bytes.data()), bytes.size());
  mrt::OnnxOptions options;
  options.target = "ipu-model-small";
  try {
    mrt::compileOnnxMemory(span, options);
    ADD_FAILURE() << "3.2 MB of weights compiled on one 2.5 MB IPU";
  } catch (const mrt::Error &e) {
    EXPECT_NE(std::string(e.what()).find("variables need more than the target's 2555904 bytes"), std::string::npos)
        << e.what();
  }
  options.numIpus = 2;
  const mrt::Model model = mrt::compileOnnxMemory(span, options);
  const mrt_pipeline_info pipeline = mainPipeline(model);
  EXPECT_EQ(pipeline.num_stages, 2u);
  EXPECT_LT(pipeline.interval_cycles, pipeline.latency_cycles);

  std::vector<double> want(448);
  std::vector<float> x(448);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) / 17.0f;
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = x[i];
  for (std::size_t layer = 0; layer < weights.size(); ++layer) {
    std::vector<double> next(448, 0.0);
    for (std::size_t k = 0; k < 448; ++k) {
      for (std::size_t j = 0; j < 448; ++j) next[j] += want[k] * weights[layer][k * 448 + j];
    }
    for (auto &v : next) v = layer < 3 ? std::max(v, 0.0) : v;
    want = next;
  }
  // The simulated system's IPUs are GC200s: a session runs it on two small
  // IPU models of its own.
  mrt::Session session(model);
  session.bindToDevice(mrt::DeviceManager().createSmallIpuModelDevice(2));
  std::vector<float> got(want.size());
  session.setCallbackForAnchor("x", [&](void *p, uint64_t) { std::memcpy(p, x.data(), x.size() * sizeof(float)); });
  session.setCallbackForAnchor("y", [&](void *p, uint64_t) { std::memcpy(got.data(), p, got.size() * sizeof(float)); });
  session.runMainPrograms();
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
  EXPECT_LT(worst, 1e-4);
}

// Compiling with `options` fails with `status` and a message holding `text`.
void expectFailure(const mrt::OnnxOptions &options, mrt_status status, const std::string &text) {
  try {
    mrt::compileOnnx(mlpDir() / "model.onnx", options);
    ADD_FAILURE() << "compiled; expected " << mrt_status_string(status);
  } catch (const mrt::Error &e) {
    EXPECT_EQ(e.code(), status) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
  }
}

TEST(OnnxOptions, BadInputShapesAreNamed) {
  mrt::OnnxOptions unknown;
  unknown.inputShapes["w1"] = {32, 16};  // an initializer, not an input
  expectFailure(unknown, MRT_INVALID_ARGUMENT, "an input shape is given for 'w1', which is not an input of the model "
                                               "(its inputs: 'x')");
  mrt::OnnxOptions rank;
  rank.inputShapes["x"] = {8, 16, 1};
  expectFailure(rank, MRT_INVALID_ARGUMENT, "the input shape [8, 16, 1] given for 'x' has rank 3; the model declares rank 2");
  mrt::OnnxOptions zero;
  zero.inputShapes["x"] = {0, 16};
  expectFailure(zero, MRT_INVALID_ARGUMENT, "the input shape [0, 16] given for 'x' has a dimension below 1");
  mrt::OnnxOptions inconsistent;
  inconsistent.inputShapes["x"] = {4, 15};  // w1 wants 16 columns
  expectFailure(inconsistent, MRT_CORRUPT_MODEL, "Gemm of A [4, 15] (transA 0) and B [32, 16] (transB 1): inner "
                                                 "dimensions 15 and 16 differ");
}

TEST(OnnxOptions, NullAndDuplicateShapesThroughC) {
  const int64_t dims[] = {8, 16};
  mrt_onnx_input_shape shapes[] = {{"x", dims, 2}, {"x", dims, 2}};
  mrt_onnx_options options;
  mrt_onnx_options_init(&options);
  options.input_shapes = shapes;
  options.num_input_shapes = 2;
  mrt_model *model = nullptr;
  EXPECT_EQ(mrt_onnx_compile_file((mlpDir() / "model.onnx").c_str(), &options, &model), MRT_INVALID_ARGUMENT);
  EXPECT_STREQ(mrt_last_error_message(), "mrt_onnx_compile_file: options->input_shapes[1]: a second shape for 'x'");
  shapes[1].name = nullptr;
  EXPECT_EQ(mrt_onnx_compile_file((mlpDir() / "model.onnx").c_str(), &options, &model), MRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mrt_last_error_message()).find("options->input_shapes[1].name"), std::string::npos)
      << mrt_last_error_message();
  options.input_shapes = nullptr;
  EXPECT_EQ(mrt_onnx_compile_file((mlpDir() / "model.onnx").c_str(), &options, &model), MRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mrt_last_error_message()).find("options->input_shapes"), std::string::npos);
  options.num_input_shapes = 0;
  options.precision = 7;
  EXPECT_EQ(mrt_onnx_compile_file((mlpDir() / "model.onnx").c_str(), &options, &model), MRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mrt_last_error_message()).find("options->precision is 7"), std::string::npos)
      << mrt_last_error_message();
  EXPECT_EQ(model, nullptr);
}

// MNIST at f32 and f16 against ONNX Runtime's outputs: f16 is close (its
// inputs and outputs stay F32) but not bit-equal, which shows the model
// really computed in half precision.
TEST(OnnxOptions, HalfPrecisionKeepsTheInterfaceAndTheAnswer) {
  const std::vector<float> input = onnx_test::readTensor(mnistDir() / "test_data_set_1" / "input_0.pb");
  const std::vector<float> want = onnx_test::readTensor(mnistDir() / "test_data_set_1" / "output_0.pb");
  double errors[2] = {};
  for (const bool half : {false, true}) {
    mrt::OnnxOptions options;
    options.halfPrecision = half;
    const mrt::Model model = mrt::compileOnnx(mnistDir() / "model.onnx", options);
    for (const auto &a : model.anchors()) {
      if (a.name == "Input3" || a.name == "Plus214_Output_0") {
        EXPECT_EQ(a.data_type, mrt::DataType::F32) << a.name;
      }
    }
    mrt::ModelRunner runner(model);
    const mrt::TensorMemory out = runner.execute({mrt::ConstTensorView("Input3", input)});
    errors[half] = worstError(out.as<float>("Plus214_Output_0"), want);
  }
  EXPECT_LT(errors[0], 1e-4);
  EXPECT_LT(errors[1], 2e-2);  // outputs up to 6.5: a few f16 ulps
  EXPECT_GT(errors[1], errors[0]);
}

// mlp compiled at batch 8 with batching_dim 0 recorded: a runner with the
// default config batches along it, so requests of 3 and 5 samples (in
// flight together) and of 1 sample (padded after 1 ms) each get the rows of
// the batch-8 reference output that belong to their samples.
TEST(OnnxOptions, RecordedBatchingDimLetsTheRunnerTakeSmallerRequests) {
  const fs::path set = mlpDir() / "batch_8" / "test_data_set_0";
  const std::vector<float> x = onnx_test::readTensor(set / "input_0.pb");
  const std::vector<float> y = onnx_test::readTensor(set / "output_0.pb");
  ASSERT_EQ(x.size(), 8u * 16u);
  ASSERT_EQ(y.size(), 8u * 10u);
  mrt::OnnxOptions options;
  options.batchSize = 8;
  options.batchingDim = 0;
  const mrt::Model model = mrt::compileOnnx(mlpDir() / "model.onnx", options);
  mrt::ModelRunnerConfig config;
  config.batch_size_timeout_ns = std::chrono::milliseconds(1);
  mrt::ModelRunner runner(model, config);
  EXPECT_EQ(runner.config().batching_dim, 0u);

  // Samples [first, first + n) of x, and their outputs.
  const auto request = [&](std::size_t first, std::size_t n) {
    return std::vector<float>(x.begin() + first * 16, x.begin() + (first + n) * 16);
  };
  const auto expect = [&](const mrt::TensorMemory &out, std::size_t first, std::size_t n) {
    const auto got = out.as<float>("y");
    ASSERT_EQ(got.size(), n * 10);
    const std::vector<float> want(y.begin() + first * 10, y.begin() + (first + n) * 10);
    EXPECT_LT(worstError(got, want), 1e-4) << "samples " << first << ".." << first + n;
  };
  const std::vector<float> three = request(0, 3), five = request(3, 5), one = request(7, 1);
  auto a = runner.executeAsync({mrt::ConstTensorView("x", three)});
  auto b = runner.executeAsync({mrt::ConstTensorView("x", five)});
  expect(a.get(), 0, 3);
  expect(b.get(), 3, 5);
  expect(runner.execute({mrt::ConstTensorView("x", one)}), 7, 1);
}

// A batching dimension every input and output does not have is refused
// when the model is compiled, naming the tensor.
TEST(OnnxOptions, BatchingDimBeyondATensorsRankIsNamed) {
  mrt::OnnxOptions options;
  options.batchingDim = 2;
  expectFailure(options, MRT_INVALID_ARGUMENT, "batching_dim 2: 'x' has shape [1, 16], of rank 2");
}

// IO tiles must leave each IPU compute tiles: all 1472 of a GC200 are refused
// through the C API, naming the value.
TEST(OnnxOptions, IoTilesLeavingNoComputeTileAreRefused) {
  mrt::OnnxOptions options;
  options.numIOTiles = 1472;
  expectFailure(options, MRT_INVALID_ARGUMENT,
                "num_io_tiles is 1472; it must leave compute tiles: the IPUs of GC200 have 1472 tiles");
}

// A caller built against the first published header sends
// MRT_ONNX_OPTIONS_V1_SIZE bytes: whatever follows them is never read.
TEST(OnnxOptions, V1SizedOptionsGetTheDefaultsOfLaterFields) {
  mrt_onnx_options options;
  std::memset(&options, 0xA5, sizeof options);  // later fields: garbage
  mrt_onnx_options v1;
  mrt_onnx_options_init(&v1);
  std::memcpy(&options, &v1, MRT_ONNX_OPTIONS_V1_SIZE);
  options.struct_size = MRT_ONNX_OPTIONS_V1_SIZE;
  mrt_model *model = nullptr;
  ASSERT_EQ(mrt_onnx_compile_file((mlpDir() / "model.onnx").c_str(), &options, &model), MRT_OK)
      << mrt_last_error_message();
  mrt_model_destroy(model);
  options.struct_size = MRT_ONNX_OPTIONS_V1_SIZE - 1;
  EXPECT_EQ(mrt_onnx_compile_file((mlpDir() / "model.onnx").c_str(), &options, &model), MRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mrt_last_error_message()).find("struct_size"), std::string::npos);
}

}  // namespace
