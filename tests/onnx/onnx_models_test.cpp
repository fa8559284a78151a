// ONNX models compiled through the C API and served by a ModelRunner,
// against outputs numpy (make_models.py) or the ONNX Model Zoo (mnist-8)
// computed; plus the frontend's answers to bad input.
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "mrt_c.h"

namespace fs = std::filesystem;

namespace {

// The directories CMake compiles in, unless the environment overrides them.
fs::path envDir(const char *name, const char *fallback) {
  const char *value = std::getenv(name);
  return value != nullptr ? fs::path(value) : fs::path(fallback);
}

std::string readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A FLOAT tensor of an ONNX test data set (.pb); *name gets its name (may be empty).
std::vector<float> readTensor(const fs::path &path, std::string *name = nullptr) {
  onnx::TensorProto t;
  EXPECT_TRUE(t.ParseFromString(readBytes(path))) << path;
  EXPECT_EQ(t.data_type(), onnx::TensorProto::FLOAT) << path;
  if (name != nullptr) *name = t.name();
  if (t.has_raw_data()) {
    std::vector<float> v(t.raw_data().size() / sizeof(float));
    std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
    return v;
  }
  return std::vector<float>(t.float_data().begin(), t.float_data().end());
}

struct Runner {
  mrt_model *model = nullptr;
  mrt_model_runner *runner = nullptr;
  ~Runner() {
    mrt_model_runner_destroy(runner);
    mrt_model_destroy(model);
  }
};

enum class Execution { Sync, Async };

// One request through mrt_model_runner_execute, or execute_async and a wait.
void execute(mrt_model_runner *runner, const std::vector<mrt_tensor_view> &in,
             const std::vector<mrt_tensor_view> &out, Execution how) {
  if (how == Execution::Sync) {
    ASSERT_EQ(mrt_model_runner_execute(runner, in.data(), in.size(), out.data(), out.size(), 0), MRT_OK)
        << mrt_last_error_message();
    return;
  }
  mrt_future *future = nullptr;
  ASSERT_EQ(mrt_model_runner_execute_async(runner, in.data(), in.size(), out.data(), out.size(), 0, &future), MRT_OK)
      << mrt_last_error_message();
  const mrt_status status = mrt_future_wait(future, -1);
  const char *error = mrt_future_error_message(future);
  const std::string message = error != nullptr ? error : "";
  mrt_future_destroy(future);
  ASSERT_EQ(status, MRT_OK) << message;
}

// Compiles dir/model.onnx, runs every test_data_set_* and compares each output
// within atol + rtol * |expected|.
void checkModel(const fs::path &dir, double rtol, double atol, Execution how = Execution::Sync) {
  Runner r;
  mrt_onnx_options options;
  mrt_onnx_options_init(&options);
  ASSERT_EQ(mrt_onnx_compile_file((dir / "model.onnx").c_str(), &options, &r.model), MRT_OK)
      << mrt_last_error_message();
  ASSERT_EQ(mrt_model_runner_create(r.model, nullptr, &r.runner), MRT_OK) << mrt_last_error_message();
  const mrt_data_desc *inDescs = nullptr, *outDescs = nullptr;
  size_t numIn = 0, numOut = 0;
  ASSERT_EQ(mrt_model_runner_execute_inputs(r.runner, &inDescs, &numIn), MRT_OK);
  ASSERT_EQ(mrt_model_runner_execute_outputs(r.runner, &outDescs, &numOut), MRT_OK);
  int sets = 0;
  for (const auto &entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("test_data_set_", 0) != 0) continue;
    ++sets;
    std::vector<std::vector<float>> inputs(numIn), outputs(numOut), expected(numOut);
    std::vector<mrt_tensor_view> inViews, outViews;
    // A tensor names its input or output (the Model Zoo's do); an unnamed
    // one is the i-th, the runner listing a single input or output.
    std::vector<std::string> inNames(numIn), outNames(numOut);
    for (size_t i = 0; i < numIn; ++i) {
      inputs[i] = readTensor(entry.path() / ("input_" + std::to_string(i) + ".pb"), &inNames[i]);
      if (inNames[i].empty()) inNames[i] = inDescs[i].name;
      inViews.push_back({inNames[i].c_str(), inputs[i].data(), inputs[i].size() * sizeof(float)});
    }
    for (size_t i = 0; i < numOut; ++i) {
      expected[i] = readTensor(entry.path() / ("output_" + std::to_string(i) + ".pb"), &outNames[i]);
      if (outNames[i].empty()) outNames[i] = outDescs[i].name;
      outputs[i].resize(expected[i].size());
      outViews.push_back({outNames[i].c_str(), outputs[i].data(), outputs[i].size() * sizeof(float)});
    }
    ASSERT_NO_FATAL_FAILURE(execute(r.runner, inViews, outViews, how));
    for (size_t i = 0; i < numOut; ++i) {
      for (size_t j = 0; j < expected[i].size(); ++j) {
        ASSERT_NEAR(outputs[i][j], expected[i][j], atol + rtol * std::fabs(expected[i][j]))
            << entry.path().filename() << " output " << outNames[i] << " element " << j;
      }
    }
  }
  EXPECT_GT(sets, 0) << "no test_data_set_* in " << dir;
}

fs::path generated(const char *name) { return envDir("MRT_TEST_ONNX_MODELS", MRT_TEST_ONNX_MODELS) / name; }

TEST(OnnxModels, Mlp) { checkModel(generated("mlp"), 1e-4, 1e-6); }
TEST(OnnxModels, Broadcasting) { checkModel(generated("broadcast"), 1e-4, 1e-6); }
TEST(OnnxModels, ReshapeTransposeConcat) { checkModel(generated("views"), 1e-4, 1e-6); }
TEST(OnnxModels, ShapeSubgraphFolds) { checkModel(generated("shape_fold"), 1e-4, 1e-6); }
TEST(OnnxModels, RunTimeGatherIndicesAndLogSumExp) { checkModel(generated("runtime_indices"), 1e-4, 1e-5); }
TEST(OnnxModels, WhereSelectsWithoutBlending) { checkModel(generated("where_select"), 0.0, 1e-6); }
TEST(OnnxModels, LeNet) { checkModel(generated("lenet"), 1e-4, 1e-5); }
TEST(OnnxModels, PadModesAndTile) { checkModel(generated("pad_tile"), 0.0, 0.0); }
TEST(OnnxModels, ConvTransposeGrouped) { checkModel(generated("conv_transpose_grouped"), 1e-4, 1e-5); }
TEST(OnnxModels, Mnist8) { checkModel(envDir("MRT_TEST_ONNX_DATA", MRT_TEST_ONNX_DATA) / "mnist-8", 0.0, 1e-4); }

TEST(OnnxErrors, TruncatedModelIsCorrupt) {
  const std::string bytes = readBytes(generated("mlp") / "model.onnx");
  for (const size_t size : {bytes.size() / 2, bytes.size() - 1, size_t{7}}) {
    mrt_model *model = nullptr;
    EXPECT_EQ(mrt_onnx_compile_memory(bytes.data(), size, nullptr, &model), MRT_CORRUPT_MODEL) << size;
    EXPECT_EQ(model, nullptr);
  }
}

TEST(OnnxErrors, EveryUnsupportedNodeIsNamed) {
  mrt_model *model = nullptr;
  EXPECT_EQ(mrt_onnx_compile_file((generated("unsupported") / "model.onnx").c_str(), nullptr, &model),
            MRT_UNIMPLEMENTED);
  const std::string message = mrt_last_error_message();
  EXPECT_NE(message.find("'my_hardmax' (Hardmax)"), std::string::npos) << message;
  EXPECT_NE(message.find("'my_det' (Det)"), std::string::npos) << message;
}

TEST(OnnxErrors, MissingFileAndBadOptions) {
  mrt_model *model = nullptr;
  EXPECT_EQ(mrt_onnx_compile_file("/nonexistent/model.onnx", nullptr, &model), MRT_NOT_FOUND);
  mrt_onnx_options options;
  mrt_onnx_options_init(&options);
  options.batch_size = -3;
  EXPECT_EQ(mrt_onnx_compile_file((generated("mlp") / "model.onnx").c_str(), &options, &model),
            MRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mrt_last_error_message()).find("-3"), std::string::npos);
  mrt_onnx_options_init(&options);
  options.target = "gc300";
  EXPECT_EQ(mrt_onnx_compile_file((generated("mlp") / "model.onnx").c_str(), &options, &model), MRT_NOT_FOUND);
}

// Issue 13: a sequence model (LSTM -> GRU -> Gemm, make_models.py's
// lstm_gru) at batch 1 and 8, served synchronously and asynchronously.
TEST(OnnxModels, LstmGruSyncAndAsync) {
  for (const char *model : {"lstm_gru_b1", "lstm_gru_b8"}) {
    for (const Execution how : {Execution::Sync, Execution::Async}) {
      SCOPED_TRACE(std::string(model) + (how == Execution::Sync ? " sync" : " async"));
      checkModel(generated(model), 1e-4, 1e-5, how);
    }
  }
}

}  // namespace
