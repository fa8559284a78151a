// ONNX models compiled through the C API and served by a ModelRunner,
// against outputs numpy (make_models.py) or the ONNX Model Zoo (mnist-8)
// computed: the own models (OwnModels) at batch 1 and 8, sync, async and on
// two replicas; plus the frontend's answers to bad input.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "mrt_c.h"
#include "onnx_test_data.hpp"

namespace fs = std::filesystem;

namespace {

using onnx_test::envDir;
using onnx_test::readBytes;
using onnx_test::readTensor;

struct Runner {
  mrt_model *model = nullptr;
  mrt_model_runner *runner = nullptr;
  ~Runner() {
    mrt_model_runner_destroy(runner);
    mrt_model_destroy(model);
  }
};

// One test_data_set_<i>: the inputs, and the expected outputs with buffers
// of their size for the results, as tensor views named for the runner.
struct DataSet {
  fs::path dir;
  std::vector<std::vector<float>> inputs, expected, outputs;
  std::vector<std::string> inNames, outNames;
  std::vector<mrt_tensor_view> inViews, outViews;
};

// Reads dir's input_<i>.pb and output_<i>.pb for the runner's inputs and
// outputs. A tensor names its input or output (the Model Zoo's do); an
// unnamed one is the i-th, the runner listing a single input or output.
DataSet readDataSet(const fs::path &dir, mrt_model_runner *runner) {
  const mrt_data_desc *inDescs = nullptr, *outDescs = nullptr;
  size_t numIn = 0, numOut = 0;
  EXPECT_EQ(mrt_model_runner_execute_inputs(runner, &inDescs, &numIn), MRT_OK);
  EXPECT_EQ(mrt_model_runner_execute_outputs(runner, &outDescs, &numOut), MRT_OK);
  DataSet d;
  d.dir = dir;
  d.inputs.resize(numIn);
  d.inNames.resize(numIn);
  d.expected.resize(numOut);
  d.outputs.resize(numOut);
  d.outNames.resize(numOut);
  for (size_t i = 0; i < numIn; ++i) {
    d.inputs[i] = readTensor(dir / ("input_" + std::to_string(i) + ".pb"), &d.inNames[i]);
    if (d.inNames[i].empty()) d.inNames[i] = inDescs[i].name;
    d.inViews.push_back({d.inNames[i].c_str(), d.inputs[i].data(), d.inputs[i].size() * sizeof(float)});
  }
  for (size_t i = 0; i < numOut; ++i) {
    d.expected[i] = readTensor(dir / ("output_" + std::to_string(i) + ".pb"), &d.outNames[i]);
    if (d.outNames[i].empty()) d.outNames[i] = outDescs[i].name;
    d.outputs[i].assign(d.expected[i].size(), std::nanf(""));
    d.outViews.push_back({d.outNames[i].c_str(), d.outputs[i].data(), d.outputs[i].size() * sizeof(float)});
  }
  return d;
}

// Every test_data_set_* directory of dir, sorted.
std::vector<fs::path> dataSetDirs(const fs::path &dir) {
  std::vector<fs::path> dirs;
  for (const auto &entry : fs::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind("test_data_set_", 0) == 0) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  EXPECT_FALSE(dirs.empty()) << "no test_data_set_* in " << dir;
  return dirs;
}

// Each output within atol + rtol * |expected|; what describes the request.
void expectOutputs(const DataSet &d, double rtol, double atol, const std::string &what = "") {
  for (size_t i = 0; i < d.expected.size(); ++i) {
    for (size_t j = 0; j < d.expected[i].size(); ++j) {
      ASSERT_NEAR(d.outputs[i][j], d.expected[i][j], atol + rtol * std::fabs(d.expected[i][j]))
          << d.dir << what << " output " << d.outNames[i] << " element " << j;
    }
  }
}

// Compiles model with options and creates a runner with config (NULLs for
// the defaults).
void compileAndServe(const fs::path &model, const mrt_onnx_options *options, const mrt_model_runner_config *config,
                     Runner &r) {
  ASSERT_EQ(mrt_onnx_compile_file(model.c_str(), options, &r.model), MRT_OK) << model << ": "
                                                                              << mrt_last_error_message();
  ASSERT_EQ(mrt_model_runner_create(r.model, config, &r.runner), MRT_OK) << mrt_last_error_message();
}

// Compiles dir/model.onnx, runs every test_data_set_* and compares each output
// within atol + rtol * |expected|.
void checkModel(const fs::path &dir, double rtol, double atol) {
  Runner r;
  ASSERT_NO_FATAL_FAILURE(compileAndServe(dir / "model.onnx", nullptr, nullptr, r));
  for (const fs::path &set : dataSetDirs(dir)) {
    DataSet d = readDataSet(set, r.runner);
    ASSERT_EQ(mrt_model_runner_execute(r.runner, d.inViews.data(), d.inViews.size(), d.outViews.data(),
                                       d.outViews.size(), 0),
              MRT_OK)
        << mrt_last_error_message();
    expectOutputs(d, rtol, atol);
  }
}

fs::path generated(const std::string &name) { return envDir("MRT_TEST_ONNX_MODELS", MRT_TEST_ONNX_MODELS) / name; }

TEST(OnnxModels, Broadcasting) { checkModel(generated("broadcast"), 1e-4, 1e-6); }
TEST(OnnxModels, ReshapeTransposeConcat) { checkModel(generated("views"), 1e-4, 1e-6); }
TEST(OnnxModels, ShapeSubgraphFolds) { checkModel(generated("shape_fold"), 1e-4, 1e-6); }
TEST(OnnxModels, RunTimeGatherIndicesAndLogSumExp) { checkModel(generated("runtime_indices"), 1e-4, 1e-5); }
TEST(OnnxModels, RunTimeShapeOperandsTakeTheDeclaredShapes) { checkModel(generated("runtime_shapes"), 1e-5, 1e-6); }
TEST(OnnxModels, RunTimeSliceAndPadOperandsMoveTheWindow) { checkModel(generated("runtime_windows"), 0.0, 0.0); }
TEST(OnnxModels, GridSampleEveryModePaddingAndAlignment) { checkModel(generated("grid_sample_modes"), 1e-4, 1e-5); }
TEST(OnnxModels, ResizeByRunTimeScalesEveryModeAndTransform) { checkModel(generated("resize_runtime_scales"), 1e-4, 1e-5); }
TEST(OnnxModels, CompressAndNonZeroOfRunTimeConditions) { checkModel(generated("compress_nonzero"), 0.0, 0.0); }
TEST(OnnxModels, MaxUnpoolOfMaxPoolIndices) { checkModel(generated("max_unpool"), 0.0, 0.0); }
TEST(OnnxModels, DeterminantsOfSmallMatrices) { checkModel(generated("determinants"), 1e-4, 1e-5); }
TEST(OnnxModels, NonMaxSuppressionBothBoxFormatsRunTimeThresholds) { checkModel(generated("nms_formats"), 0.0, 0.0); }
TEST(OnnxModels, WhereSelectsWithoutBlending) { checkModel(generated("where_select"), 0.0, 1e-6); }
TEST(OnnxModels, PadModesAndTile) { checkModel(generated("pad_tile"), 0.0, 0.0); }
TEST(OnnxModels, ConvTransposeGrouped) { checkModel(generated("conv_transpose_grouped"), 1e-4, 1e-5); }
TEST(OnnxModels, ConvAndPools3d) { checkModel(generated("conv_pool_3d"), 1e-4, 1e-5); }
TEST(OnnxModels, MaxPoolIndices) { checkModel(generated("pool_indices"), 0.0, 0.0); }
TEST(OnnxModels, Mnist8) { checkModel(envDir("MRT_TEST_ONNX_DATA", MRT_TEST_ONNX_DATA) / "mnist-8", 0.0, 1e-4); }

// mnist-8 compiled with replication factor 2 (PopRT's replication_factor):
// one runner, one device of 2 IPUs, two replicas. Every data set goes to
// both replicas, all requests in flight at once, so each replica holds
// different data at any time.
TEST(OnnxModels, Mnist8CompiledWithReplicationFactor2) {
  const fs::path dir = envDir("MRT_TEST_ONNX_DATA", MRT_TEST_ONNX_DATA) / "mnist-8";
  mrt_onnx_options options;
  mrt_onnx_options_init(&options);
  options.replication_factor = 2;
  Runner r;
  ASSERT_NO_FATAL_FAILURE(compileAndServe(dir / "model.onnx", &options, nullptr, r));
  std::vector<DataSet> requests;
  for (const fs::path &set : dataSetDirs(dir)) {
    for (int replica = 0; replica < 2; ++replica) requests.push_back(readDataSet(set, r.runner));
  }
  std::vector<mrt_future *> futures(requests.size(), nullptr);
  for (size_t k = 0; k < requests.size(); ++k) {
    DataSet &d = requests[k];
    ASSERT_EQ(mrt_model_runner_execute_async(r.runner, d.inViews.data(), d.inViews.size(), d.outViews.data(),
                                             d.outViews.size(), static_cast<uint32_t>(k % 2), &futures[k]),
              MRT_OK)
        << mrt_last_error_message();
  }
  for (size_t k = 0; k < requests.size(); ++k) {
    const std::string what = " (replica " + std::to_string(k % 2) + ")";
    const mrt_status status = mrt_future_wait(futures[k], 30'000'000'000);
    EXPECT_EQ(status, MRT_OK) << what << ": " << mrt_future_error_message(futures[k]);
    mrt_future_destroy(futures[k]);
    if (status == MRT_OK) expectOutputs(requests[k], 0.0, 1e-4, what);
  }
  // Replica 2 does not exist: 1 copy x the model's 2 replicas.
  DataSet &d = requests.front();
  EXPECT_EQ(mrt_model_runner_execute(r.runner, d.inViews.data(), d.inViews.size(), d.outViews.data(),
                                     d.outViews.size(), 2),
            MRT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mrt_last_error_message()).find("replica_id 2 out of range: the runner has 2 replicas"),
            std::string::npos)
      << mrt_last_error_message();
}

// The own models of make_models.py (OWN_MODELS there): networks with seeded
// weights and a dynamic batch dimension, compiled at each batch size with
// mrt_onnx_options.batch_size and compared with make_models.py's numpy
// reference (float64, rounded to float) within rtol 1e-3, atol 1e-5. Each is
// served synchronously (execute), asynchronously (every data set in flight,
// then the futures waited for) and by a runner of two replicas (every data set
// on both replicas, all in flight at once). Adding a model: one entry here
// and one in OWN_MODELS (OwnModels.EveryModelIsTested checks they agree).
const std::string kOwnModels[] = {"lenet", "mlp", "resnet_block", "depthwise_block", "lstm_gru"};
constexpr int64_t kBatches[] = {1, 8};
constexpr double kOwnRtol = 1e-3, kOwnAtol = 1e-5;

enum class Serving { Sync, Async, Replicated2 };
const char *const kServingNames[] = {"Sync", "Async", "Replicated2"};
void PrintTo(Serving serving, std::ostream *os) { *os << kServingNames[static_cast<int>(serving)]; }

using OwnParam = std::tuple<std::string, int64_t, Serving>;

class OwnModels : public ::testing::TestWithParam<OwnParam> {};

TEST_P(OwnModels, MatchNumpyReference) {
  const auto [name, batch, serving] = GetParam();
  const fs::path dir = generated(name);
  mrt_onnx_options options;
  mrt_onnx_options_init(&options);
  options.batch_size = batch;
  // Devices may be busy with the tests running beside this one: wait.
  mrt_device_wait_config wait;
  mrt_device_wait_config_init(&wait);
  wait.strategy = MRT_DEVICE_WAIT_WITH_TIMEOUT;
  wait.timeout_ns = 60'000'000'000;
  wait.sleep_time_ns = 10'000'000;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.replication_factor = serving == Serving::Replicated2 ? 2 : 1;
  config.device_wait_config = &wait;
  Runner r;
  ASSERT_NO_FATAL_FAILURE(compileAndServe(dir / "model.onnx", &options, &config, r));
  const uint32_t replicas = config.replication_factor;
  // requests[k]: data set k / replicas on replica k % replicas.
  std::vector<DataSet> requests;
  for (const fs::path &set : dataSetDirs(dir / ("batch_" + std::to_string(batch)))) {
    for (uint32_t replica = 0; replica < replicas; ++replica) requests.push_back(readDataSet(set, r.runner));
  }
  ASSERT_GE(requests.size(), 2u);
  if (serving == Serving::Sync) {
    for (DataSet &d : requests) {
      ASSERT_EQ(mrt_model_runner_execute(r.runner, d.inViews.data(), d.inViews.size(), d.outViews.data(),
                                         d.outViews.size(), 0),
                MRT_OK)
          << mrt_last_error_message();
      expectOutputs(d, kOwnRtol, kOwnAtol, " (execute)");
    }
    return;
  }
  std::vector<mrt_future *> futures(requests.size(), nullptr);
  for (size_t k = 0; k < requests.size(); ++k) {
    DataSet &d = requests[k];
    ASSERT_EQ(mrt_model_runner_execute_async(r.runner, d.inViews.data(), d.inViews.size(), d.outViews.data(),
                                             d.outViews.size(), static_cast<uint32_t>(k % replicas), &futures[k]),
              MRT_OK)
        << mrt_last_error_message();
  }
  for (size_t k = 0; k < requests.size(); ++k) {
    const std::string what = " (execute_async on replica " + std::to_string(k % replicas) + ")";
    const mrt_status status = mrt_future_wait(futures[k], 30'000'000'000);
    EXPECT_EQ(status, MRT_OK) << what << ": " << mrt_future_error_message(futures[k]);
    mrt_future_destroy(futures[k]);
    if (status == MRT_OK) expectOutputs(requests[k], kOwnRtol, kOwnAtol, what);
  }
}

std::string ownParamName(const ::testing::TestParamInfo<OwnParam> &info) {
  const auto [name, batch, serving] = info.param;
  return name + "_batch" + std::to_string(batch) + "_" + kServingNames[static_cast<int>(serving)];
}

INSTANTIATE_TEST_SUITE_P(Onnx, OwnModels,
                         ::testing::Combine(::testing::ValuesIn(kOwnModels), ::testing::ValuesIn(kBatches),
                                            ::testing::Values(Serving::Sync, Serving::Async, Serving::Replicated2)),
                         ownParamName);

// make_models.py lists the models it wrote in own_models.txt: each must be
// in kOwnModels, and the other way round.
TEST(OwnModelsList, EveryModelIsTested) {
  std::set<std::string> written, tested(std::begin(kOwnModels), std::end(kOwnModels));
  std::ifstream in(generated("own_models.txt"));
  ASSERT_TRUE(in) << generated("own_models.txt");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) written.insert(line);
  }
  EXPECT_EQ(written, tested) << "OWN_MODELS of make_models.py and kOwnModels of onnx_models_test.cpp differ";
}

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
  EXPECT_NE(message.find("'my_det' (Det)"), std::string::npos) << message;
  EXPECT_NE(message.find("'my_unique' (Unique)"), std::string::npos) << message;
}

TEST(OnnxErrors, RunTimeShapeWithoutADeclaredOutputShapeIsUnsupported) {
  mrt_model *model = nullptr;
  EXPECT_EQ(mrt_onnx_compile_file((generated("runtime_shape_unknown") / "model.onnx").c_str(), nullptr, &model),
            MRT_UNIMPLEMENTED);
  EXPECT_EQ(model, nullptr);
  const std::string message = mrt_last_error_message();
  EXPECT_NE(message.find("'my_reshape' (Reshape): Reshape's shape is computed at run time and the shape of output 'y' "
                         "is not known statically"),
            std::string::npos)
      << message;
}

// LayerNormalization of a scalar with the default axis (-1) and its Mean
// output: libonnx 1.12's shape inference writes at dimension -1 (a SEGV
// found by fuzz_onnx_compile); the frontend refuses the axis first.
TEST(OnnxErrors, LayerNormalizationDefaultAxisOfAScalarIsCorrupt) {
  ::onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  ::onnx::GraphProto *g = m.mutable_graph();
  g->set_name("layernorm_of_scalar");
  auto *x = g->add_input();
  x->set_name("x");
  x->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
  x->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (const char *name : {"w", "b"}) {
    ::onnx::TensorProto *t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(::onnx::TensorProto::FLOAT);
    t->add_dims(1);
    t->add_float_data(1.0f);
  }
  ::onnx::NodeProto *node = g->add_node();
  node->set_name("my_norm");
  node->set_op_type("LayerNormalization");
  for (const char *name : {"x", "w", "b"}) node->add_input(name);
  for (const char *name : {"y", "mean"}) {
    node->add_output(name);
    auto *output = g->add_output();
    output->set_name(name);
    output->mutable_type()->mutable_tensor_type()->set_elem_type(::onnx::TensorProto::FLOAT);
    output->mutable_type()->mutable_tensor_type()->mutable_shape();
  }
  const std::string bytes = m.SerializeAsString();
  mrt_model *model = nullptr;
  EXPECT_EQ(mrt_onnx_compile_memory(bytes.data(), bytes.size(), nullptr, &model), MRT_CORRUPT_MODEL);
  EXPECT_EQ(model, nullptr);
  const std::string message = mrt_last_error_message();
  EXPECT_NE(message.find("'my_norm' (LayerNormalization): axis -1 is out of range for rank 0"), std::string::npos)
      << message;
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

}  // namespace
