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
      if (a.name == "Input3" || a.name == "Plus214_Output_0") EXPECT_EQ(a.data_type, mrt::DataType::F32) << a.name;
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
