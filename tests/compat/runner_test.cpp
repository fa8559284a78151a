// The core of the compatibility layer, one suite per class: popef::
// (Reader, ModelBuilder, Model, Anchor), DeviceManager/Device, TensorMemory
// and ModelRunner, against the example models, results checked by reference
// math; misuse throws the documented exception types with clear messages.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using namespace compat_test;
using namespace std::chrono_literals;

namespace {

class CompatEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { usePrivateSystem(); }
};
const ::testing::Environment *const kEnvironment = ::testing::AddGlobalTestEnvironment(new CompatEnvironment);

// Expects `statement` to throw `Type` with a message containing `fragment`.
#define EXPECT_THROW_WITH(statement, Type, fragment)                                                  \
  do {                                                                                                \
    try {                                                                                             \
      statement;                                                                                      \
      ADD_FAILURE() << #statement " did not throw";                                                   \
    } catch (const Type &e) {                                                                         \
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)                              \
          << "message '" << e.what() << "' lacks '" << fragment << "'";                               \
    }                                                                                                 \
  } while (0)

std::shared_ptr<popef::Model> loadModel(const std::string &name) {
  auto reader = std::make_shared<popef::Reader>();
  reader->parseFile(modelPath(name));
  popef::ModelBuilder builder(reader);
  return builder.createModel();
}

template <class T>
std::vector<float> asFloats(const T *data, uint64_t bytes) {
  std::vector<float> v(bytes / sizeof(float));
  std::memcpy(v.data(), data, v.size() * sizeof(float));
  return v;
}

}  // namespace

TEST(CompatPopef, ReaderAndBuilderDescribeTheModel) {
  const auto model = loadModel("mlp");
  const popef::Metadata &meta = model->metadata;
  EXPECT_EQ(meta.replicationFactor(), 1);
  EXPECT_EQ(meta.numIpus(), 1);
  EXPECT_EQ(meta.ipuVersion(), 2);
  EXPECT_TRUE(meta.isInference());
  EXPECT_FALSE(meta.programFlow().main().empty());
  std::map<std::string, const popef::Anchor *> byName;
  for (const auto &anchor : meta.anchors()) byName[anchor.name()] = &anchor;
  ASSERT_EQ(byName.count("image"), 1u);
  const popef::Anchor &image = *byName["image"];
  EXPECT_EQ(image.type(), popef::TensorType::INPUT);
  EXPECT_EQ(image.tensorInfo().dataType(), popef::DataType::F32);
  EXPECT_EQ(image.tensorInfo().sizeInBytes(), int64_t(kImage * sizeof(float)));
  EXPECT_EQ(image.tensorInfo().shape(), (std::vector<int64_t>{1, int64_t(kImage)}));
  EXPECT_EQ(image.programs(), meta.programFlow().main());
  ASSERT_EQ(byName.count("probs"), 1u);
  EXPECT_EQ(byName["probs"]->type(), popef::TensorType::OUTPUT);
  // The weights come from TensorData, loaded by Load programs.
  ASSERT_EQ(byName.count("w1"), 1u);
  EXPECT_EQ(model->tensorData("w1").size(), kImage * kHidden * sizeof(float));
  for (auto program : byName["w1"]->programs()) EXPECT_NE(meta.programsMap().count(program), 0u);
}

TEST(CompatPopef, MisuseThrowsClearErrors) {
  EXPECT_THROW_WITH(popef::ModelBuilder(std::make_shared<popef::Reader>()).createModel(), std::invalid_argument,
                    "no PopEF file");
  EXPECT_THROW_WITH(popef::createModel({"/nonexistent/model.popef"}), std::runtime_error, "/nonexistent/model.popef");
  const auto model = loadModel("add_one");
  EXPECT_THROW_WITH(model->tensorData("nope"), std::runtime_error, "nope");
}

TEST(CompatDevice, WaitConfigAndConstraintsHaveTheSeedDefaults) {
  constexpr model_runtime::DeviceWaitConfig none;
  static_assert(none.strategy == model_runtime::DeviceWaitStrategy::NO_WAIT);
  static_assert(none.timeout == 0s && none.sleepTime == 15s);
  constexpr model_runtime::DeviceWaitConfig forever(model_runtime::DeviceWaitStrategy::WAIT_FOREVER);
  static_assert(forever.strategy == model_runtime::DeviceWaitStrategy::WAIT_FOREVER && forever.sleepTime == 15s);
  constexpr model_runtime::DeviceWaitConfig timed(5s, 1s);
  static_assert(timed.strategy == model_runtime::DeviceWaitStrategy::WAIT_WITH_TIMEOUT);
  static_assert(timed.timeout == 5s && timed.sleepTime == 1s);
  static_assert(!model_runtime::DeviceConstraints{});
  static_assert(model_runtime::DeviceConstraints{true});
}

TEST(CompatDevice, ManagerAttachesAndRefuses) {
  model_runtime::DeviceManager manager;
  model_runtime::DeviceManager copy(manager);
  EXPECT_EQ(copy.ipuHardwareVersion(), 2);
  const auto model = loadModel("add_one");
  {
    auto device = manager.getDevice(model);
    ASSERT_NE(device, nullptr);
    EXPECT_EQ(device->ipuVersion(), 2);
    EXPECT_EQ(device->numIpus(), 1);
    // The device is held: asking for that very device again fails.
    EXPECT_EQ(manager.tryGetSpecificDevice(device->id(), model), nullptr);
    EXPECT_THROW(manager.getSpecificDevice(device->id(), poplar::OptionFlags{}), std::runtime_error);
  }
  auto two = manager.getDevice(2, poplar::OptionFlags{}, model_runtime::DeviceWaitConfig{},
                               model_runtime::DeviceConstraints{});
  EXPECT_EQ(two->numIpus(), 2);
  EXPECT_EQ(manager.tryGetDevice(8), nullptr);  // the system has 4
  EXPECT_THROW_WITH(manager.getDevice(8), std::runtime_error, "8");
  auto ipuModel = manager.createIpuModelDevice(1, 2, 4);
  EXPECT_EQ(ipuModel->id(), -1);
  EXPECT_EQ(manager.createSmallIpuModelDevice(model)->ipuVersion(), 2);
  EXPECT_THROW_WITH(manager.getDevice(std::shared_ptr<popef::Model>()), std::invalid_argument, "null");
}

TEST(CompatTensor, MemoryAndViews) {
  model_runtime::TensorMemory memory(16);
  ASSERT_NE(memory.data, nullptr);
  EXPECT_EQ(memory.data_size_bytes, 16u);
  model_runtime::TensorMemoryView view = memory.getView();
  std::memset(view.data, 7, view.data_size_bytes);
  const model_runtime::TensorMemory shared = memory;  // shares the block
  const model_runtime::ConstTensorMemoryView constView = shared.getView();
  EXPECT_EQ(constView.data, view.data);
  EXPECT_EQ(static_cast<const unsigned char *>(constView.data)[15], 7);
  const model_runtime::ConstTensorMemoryView fromMutable(view);
  EXPECT_EQ(fromMutable.data_size_bytes, 16u);
  EXPECT_EQ(memory.getConstView().data, view.data);
  EXPECT_EQ(model_runtime::TensorMemory().data, nullptr);
  EXPECT_THROW_WITH(model_runtime::TensorMemory(-5), std::invalid_argument, "-5");
}

TEST(CompatRunner, DescribesInputsAndOutputs) {
  model_runtime::ModelRunner runner(modelPath("mlp"));
  const auto inputs = runner.getExecuteInputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].name, "image");
  EXPECT_EQ(inputs[0].size_in_bytes, int64_t(kImage * sizeof(float)));
  EXPECT_EQ(inputs[0].shape, (std::vector<int64_t>{1, int64_t(kImage)}));
  EXPECT_EQ(inputs[0].data_type, popef::DataType::F32);
  EXPECT_FALSE(inputs[0].popef_contains_tensor_data);
  const auto outputs = runner.getExecuteOutputs();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name, "probs");
  const auto all = runner.getModelInputs();
  EXPECT_EQ(all.size(), 5u);  // image and the four weights
  for (const auto &desc : all) EXPECT_EQ(desc.popef_contains_tensor_data, desc.name != "image") << desc.name;
  EXPECT_EQ(runner.getModelOutputs().size(), 1u);
  EXPECT_EQ(runner.model()->metadata.anchors().size(), 6u);
}

TEST(CompatRunner, EveryExecuteVariantMatchesTheReference) {
  const auto model = loadModel("mlp");
  model_runtime::ModelRunnerConfig config;
  config.thread_safe = true;
  config.max_look_ahead = "4";
  model_runtime::ModelRunner runner(model, config);
  EXPECT_EQ(runner.model(), model);
  EXPECT_TRUE(runner.config().thread_safe);
  EXPECT_EQ(runner.config().max_look_ahead, "4");
  for (unsigned request = 0; request < 3; ++request) {
    const auto image = randomFloats(kImage, 100 + request, 0.0f, 1.0f);
    const auto expected = mlpReference(*model, image);
    const model_runtime::InputMemoryView in{{"image", {image.data(), image.size() * sizeof(float)}}};

    const model_runtime::OutputMemory allocated = runner.execute(in);
    ASSERT_EQ(allocated.size(), 1u);
    const model_runtime::TensorMemory &probs = allocated.at("probs");
    EXPECT_EQ(probs.data_size_bytes, kClasses * sizeof(float));
    EXPECT_LT(maxError(static_cast<const float *>(probs.data.get()), expected), 1e-5);

    std::vector<float> sync(kClasses);
    runner.execute(in, {{"probs", {sync.data(), sync.size() * sizeof(float)}}});
    EXPECT_LT(maxError(sync.data(), expected), 1e-5);

    model_runtime::OutputFutureMemory futures = runner.executeAsync(in);
    ASSERT_EQ(futures.count("probs"), 1u);
    const model_runtime::TensorMemory later = futures.at("probs").get();
    EXPECT_LT(maxError(static_cast<const float *>(later.data.get()), expected), 1e-5);

    std::vector<float> async(kClasses);
    model_runtime::OutputFutureMemoryView views =
        runner.executeAsync(in, {{"probs", {async.data(), async.size() * sizeof(float)}}});
    const model_runtime::TensorMemoryView done = views.at("probs").get();
    EXPECT_EQ(done.data, async.data());
    EXPECT_LT(maxError(async.data(), expected), 1e-5);
  }
  // Library memory outlives the futures map and the request.
  model_runtime::TensorMemory kept;
  {
    const auto image = randomFloats(kImage, 7, 0.0f, 1.0f);
    kept = runner.executeAsync({{"image", {image.data(), image.size() * sizeof(float)}}}).at("probs").get();
    EXPECT_LT(maxError(static_cast<const float *>(kept.data.get()), mlpReference(*model, image)), 1e-5);
  }
  EXPECT_EQ(asFloats(static_cast<const float *>(kept.data.get()), kept.data_size_bytes).size(), kClasses);
}

// The seed's Device(poplar::Device, ipu_version): the poplar::Device of one
// Device (device()) moved into another keeps the same attached device, which
// then serves a runner; a poplar::Device holding none is refused.
TEST(CompatDevice, ConstructedFromAPoplarDevice) {
  const auto model = loadModel("add_one");
  model_runtime::DeviceManager manager;
  auto attached = manager.getDevice(model);
  const int64_t id = attached->id();
  const model_runtime::Device &constAttached = *attached;
  EXPECT_EQ(constAttached.device().mrtDevice().id(), id);
  auto device = std::make_shared<model_runtime::Device>(std::move(attached->device()), 21);
  attached.reset();
  EXPECT_EQ(device->ipuVersion(), 21);  // as given
  EXPECT_EQ(device->id(), id);
  EXPECT_EQ(manager.tryGetSpecificDevice(id, model), nullptr);  // still attached
  model_runtime::ModelRunnerConfig config;
  config.replica_to_device = {{0u, device}};
  model_runtime::ModelRunner runner(model, config);
  std::vector<float> x(kAddOneN, 1.5f), y(kAddOneN);
  runner.execute({{"x", {x.data(), x.size() * sizeof(float)}}}, {{"y", {y.data(), y.size() * sizeof(float)}}});
  EXPECT_EQ(y, std::vector<float>(kAddOneN, 2.5f));
  EXPECT_THROW_WITH(model_runtime::Device(poplar::Device(), 2), std::invalid_argument, "holds no device");
}

TEST(CompatRunner, ConstructorsFrozenInputsAndDevices) {
  const auto model = loadModel("mlp");
  // frozen_inputs override PopEF data: zero b2, so the logits lose the bias.
  std::vector<float> zeros(kClasses, 0.0f);
  model_runtime::DeviceManager manager;
  model_runtime::ModelRunnerConfig config;
  config.frozen_inputs = {{"b2", {zeros.data(), zeros.size() * sizeof(float)}}};
  config.replica_to_device = {{0u, manager.getDevice(model)}};
  const int64_t deviceId = config.replica_to_device[0]->id();
  model_runtime::ModelRunner runner(std::vector<std::string>{modelPath("mlp")}, config);
  EXPECT_EQ(manager.tryGetSpecificDevice(deviceId, model), nullptr);  // in use by the runner
  const auto image = randomFloats(kImage, 3, 0.0f, 1.0f);
  const auto out = runner.execute({{"image", {image.data(), image.size() * sizeof(float)}}});
  EXPECT_LT(maxError(static_cast<const float *>(out.at("probs").data.get()), mlpReference(*model, image, &zeros)),
            1e-5);
  // Moving keeps it serving.
  model_runtime::ModelRunner moved(std::move(runner));
  const auto again = moved.execute({{"image", {image.data(), image.size() * sizeof(float)}}});
  EXPECT_LT(maxError(static_cast<const float *>(again.at("probs").data.get()), mlpReference(*model, image, &zeros)),
            1e-5);
}

TEST(CompatRunner, TimeTraceAndStatistics) {
  model_runtime::ModelRunner runner(modelPath("add_one"));
  std::vector<float> x(kAddOneN, 1.5f), y(kAddOneN);
  for (int i = 0; i < 20; ++i) {
    runner.execute({{"x", {x.data(), x.size() * sizeof(float)}}}, {{"y", {y.data(), y.size() * sizeof(float)}}});
    ASSERT_FLOAT_EQ(y[0], 2.5f);
  }
  std::map<std::string, float> trace;
  runner.getTimeTrace(trace);
  EXPECT_GT(trace.at("request_duration_us"), 0.0f);
  for (const char *key : {"read_preparation_duration_us", "read_queue_duration_us", "computation_duration_us"}) {
    EXPECT_GE(trace.at(key), 0.0f) << key;
  }
  std::map<std::string, double> count, mean, p90;
  runner.getMonitoringStatisticsTotalCount(count);
  EXPECT_EQ(count.at("request_monitoring_statistics_count"), 20.0);
  EXPECT_EQ(count.at("computation_monitoring_statistics_count"), 20.0);
  runner.getMonitoringStatisticsMean(mean);
  EXPECT_GT(mean.at("request_monitoring_statistics_mean_us"), 0.0);
  runner.getMonitoringStatisticsPercentile(p90, 0.9);
  EXPECT_GE(p90.at("request_monitoring_statistics_percentile_us"), 0.0);
  EXPECT_EQ(p90.size(), 4u);
}

TEST(CompatRunner, MisuseThrowsAndTheRunnerServesOn) {
  model_runtime::ModelRunner runner(modelPath("add_one"));
  std::vector<float> x(kAddOneN, 1.0f), y(kAddOneN), small(kAddOneN - 1);
  const model_runtime::ConstTensorMemoryView xv(x.data(), x.size() * sizeof(float));
  const model_runtime::TensorMemoryView yv(y.data(), y.size() * sizeof(float));
  EXPECT_THROW_WITH(runner.execute({{"nope", xv}}, {{"y", yv}}), mrt::Error, "nope");
  EXPECT_THROW_WITH(runner.execute({{"x", {small.data(), small.size() * sizeof(float)}}}), std::runtime_error, "60");
  EXPECT_THROW_WITH(runner.executeAsync({{"x", xv}}, {{"y", yv}}, 7), std::runtime_error, "7");
  runner.execute({{"x", xv}}, {{"y", yv}});
  EXPECT_FLOAT_EQ(y[0], 2.0f);

  model_runtime::ModelRunnerConfig bad;
  for (const char *value : {"lots", "-1", "", "3x"}) {
    bad.max_look_ahead = value;
    EXPECT_THROW_WITH(model_runtime::ModelRunner(modelPath("add_one"), bad), std::invalid_argument,
                      "max_look_ahead");
  }
  EXPECT_THROW_WITH(model_runtime::ModelRunner(std::shared_ptr<popef::Model>()), std::invalid_argument, "null");
  EXPECT_THROW_WITH(model_runtime::ModelRunner(modelPath("missing")), std::runtime_error, "missing");
}

TEST(CompatRunner, FailedRequestsSurfaceThroughEverySharedFuture) {
  model_runtime::ModelRunnerConfig config;
  config.auto_reset = true;
  model_runtime::ModelRunner runner(modelPath("add_one"), config);
  std::vector<float> x(kAddOneN, 3.0f), y(kAddOneN);
  runner.mrtRunner().insertSimulatedError(mrt::SimulatedError::TILE_EXCEPTION, "Add");
  auto futures = runner.executeAsync({{"x", {x.data(), x.size() * sizeof(float)}}},
                                     {{"y", {y.data(), y.size() * sizeof(float)}}});
  const auto copy = futures.at("y");  // a shared_future: every copy sees the failure
  EXPECT_THROW(futures.at("y").get(), mrt::Error);
  EXPECT_THROW(copy.get(), std::runtime_error);
  // auto_reset: the next request succeeds.
  const auto out = runner.execute({{"x", {x.data(), x.size() * sizeof(float)}}});
  EXPECT_FLOAT_EQ(static_cast<const float *>(out.at("y").data.get())[0], 4.0f);
}

TEST(CompatRunner, FlushCallbackChoosesTheQueuesFlushed) {
  // Only the output queue named: the device, waiting for x, never runs on
  // padding, so a request's own output entry sits behind the padded one and
  // is still pending when the runner goes (every queue flushed, it would
  // complete: the test below).
  model_runtime::ModelRunnerConfig config;
  config.timeout_ns = std::chrono::milliseconds(2);
  config.ring_buffer_size_multiplier = 1;
  std::vector<float> sink(kAddOneN);
  const model_runtime::OutputMemoryView onlyOutput{{"y", {sink.data(), sink.size() * sizeof(float)}}};
  std::atomic<int> calls{0};
  config.flush_callback = [&](const std::string &, const model_runtime::InputMemoryView *&,
                              const model_runtime::OutputMemoryView *&outputs) {
    outputs = &onlyOutput;
    ++calls;
  };
  auto runner = std::make_unique<model_runtime::ModelRunner>(modelPath("add_one"), config);
  while (calls.load() < 1) std::this_thread::sleep_for(1ms);
  std::vector<float> x(kAddOneN, 1.0f), y(kAddOneN);
  model_runtime::OutputFutureMemoryView pending =
      runner->executeAsync({{"x", {x.data(), x.size() * sizeof(float)}}}, {{"y", {y.data(), y.size() * sizeof(float)}}});
  EXPECT_EQ(pending.at("y").wait_for(200ms), std::future_status::timeout);
  runner.reset();
  EXPECT_EQ(pending.at("y").wait_for(0s), std::future_status::ready);
}

TEST(CompatRunner, FlushCallbackIsCalledWithTheTensorWaitedFor) {
  // A batch-2 model fed one sample: the runner times out waiting for the
  // second and calls flush_callback before flushing.
  model_runtime::ModelRunnerConfig config;
  config.timeout_ns = std::chrono::milliseconds(50);
  config.batching_dim = 0;
  std::promise<std::string> waitedFor;
  auto called = waitedFor.get_future();
  config.flush_callback = [&waitedFor](const std::string &tensor_id, const model_runtime::InputMemoryView *&inputs,
                                       const model_runtime::OutputMemoryView *&outputs) {
    EXPECT_EQ(inputs, nullptr);
    EXPECT_EQ(outputs, nullptr);
    try {
      waitedFor.set_value(tensor_id);
    } catch (const std::future_error &) {
    }
  };
  model_runtime::ModelRunner runner(modelPath("add_one_b2"), config);
  std::vector<float> x(kAddOneN, 1.0f), y(kAddOneN);
  runner.execute({{"x", {x.data(), x.size() * sizeof(float)}}}, {{"y", {y.data(), y.size() * sizeof(float)}}});
  EXPECT_FLOAT_EQ(y[kAddOneN - 1], 2.0f);
  ASSERT_EQ(called.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(called.get(), "x");
}
