// mrt::ModelRunnerConfig carried into the C config: Save outputs borrowed
// until the runner is destroyed (also after the runner is moved), frozen
// inputs copied at construction, replica devices kept by the runner, device
// wait configs, statistics.
#include <string>
#include <vector>

#include "cxx_test_util.hpp"

namespace {

using mrt_cxx_test::kAddOneN;
using mrt_cxx_test::modelPath;
using mrt_cxx_test::randomFloats;

TEST(CxxRunnerConfig, SaveOutputsAreWrittenWhenTheMovedRunnerIsDestroyed) {
  std::vector<float> saved(4, -1.0f), sums(4, 0.0f);
  mrt::ModelRunnerConfig config;
  config.run_save_programs = true;
  config.replica_to_save_programs_outputs = {{0, {{"acc_save", saved}}}};
  {
    mrt::ModelRunner first(modelPath("stateful_b2"), config);
    config = mrt::ModelRunnerConfig();  // the runner does not need ours
    mrt::ModelRunner runner = std::move(first);
    EXPECT_EQ(runner.getExecuteOutputs().size(), 1u);  // acc_out; acc_save is a Save output
    EXPECT_EQ(runner.getModelOutputs().size(), 2u);
    for (unsigned i = 0; i < 20; ++i) {
      const auto x = randomFloats(8, i, -1.0f, 1.0f);  // a batch of 2 samples of 4
      for (std::size_t k = 0; k < 4; ++k) sums[k] += x[k] + x[4 + k];
      std::vector<float> acc(4);
      runner.execute({{"x", x}}, {{"acc_out", acc}});
      for (std::size_t k = 0; k < 4; ++k) ASSERT_NEAR(acc[k], sums[k], 1e-4);
    }
    EXPECT_EQ(saved[0], -1.0f) << "not before the runner is destroyed";
    mrt::ModelRunner other;
    other = std::move(runner);  // move assignment keeps the borrowed arrays alive too
  }
  for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(saved[k], sums[k], 1e-4);

  mrt::ModelRunnerConfig wrong;
  wrong.replica_to_save_programs_outputs = {{0, {{"acc_out", saved}}}};
  EXPECT_MRT_ERROR(mrt::ModelRunner(modelPath("stateful_b2"), wrong), MRT_NOT_FOUND, "acc_out");
}

TEST(CxxRunnerConfig, FrozenInputsAreCopiedAtConstruction) {
  std::vector<float> frozen = randomFloats(kAddOneN, 5);
  const std::vector<float> original = frozen;
  mrt::ModelRunnerConfig config;
  config.frozen_inputs = {{"x", frozen}};
  mrt::ModelRunner runner(modelPath("add_one"), config);
  frozen.assign(kAddOneN, 100.0f);  // the runner copied it
  EXPECT_TRUE(runner.getExecuteInputs().empty());
  std::vector<float> y(kAddOneN);
  runner.execute({}, {{"y", y}});
  for (std::size_t i = 0; i < kAddOneN; ++i) EXPECT_FLOAT_EQ(y[i], original[i] + 1.0f);
}

TEST(CxxRunnerConfig, ReplicaDevicesAndDeviceWaits) {
  mrt::DeviceManager manager;
  mrt::Device device = manager.getDevice(1);
  const int64_t id = device.id();
  mrt::ModelRunnerConfig config;
  config.replica_to_device = {&device};
  mrt::ModelRunner runner(modelPath("add_one"), config);
  device.close();  // the runner keeps its own reference
  EXPECT_FALSE(manager.tryGetSpecificDevice(id).has_value()) << "still held by the runner";
  std::vector<float> x(kAddOneN, 0.5f), y(kAddOneN);
  runner.execute({{"x", x}}, {{"y", y}});
  EXPECT_FLOAT_EQ(y[0], 1.5f);

  // Every IPU-4 group overlaps the runner's IPU: waiting 30 ms does not help.
  const mrt::DeviceWaitConfig wait(mrt::DeviceWaitStrategy::WAIT_WITH_TIMEOUT, std::chrono::milliseconds(30),
                                   std::chrono::milliseconds(5));
  EXPECT_MRT_ERROR(manager.getDevice(4, {}, wait), MRT_UNAVAILABLE, "");
  runner.close();
  EXPECT_TRUE(manager.tryGetSpecificDevice(id).has_value()) << "released with the runner";
}

TEST(CxxRunnerConfig, TheRunnerReportsItsModelAndConfig) {
  mrt::ModelRunnerConfig config;
  config.replication_factor = 2;
  config.thread_safe = true;
  config.timeout_ns = std::chrono::milliseconds(250);
  config.ring_buffer_size_multiplier = 3;
  config.flush_callback = [](std::string_view) {};
  mrt::ModelRunner runner(modelPath("add_one"), config);
  EXPECT_EQ(runner.model().info().executable, "add_one");
  const mrt::ModelRunnerConfig used = runner.config();
  EXPECT_EQ(used.replication_factor, 2u);
  EXPECT_TRUE(used.thread_safe);
  EXPECT_EQ(used.timeout_ns, std::chrono::milliseconds(250));
  EXPECT_EQ(used.ring_buffer_size_multiplier, 3u);
  EXPECT_EQ(used.batching_dim, uint32_t(MRT_BATCHING_DISABLED));
  EXPECT_FALSE(used.flush_callback) << "callbacks are not handed back";
}

TEST(CxxRunnerConfig, Statistics) {
  mrt::ModelRunnerConfig config;
  config.request_tracepoints_buffer_size = 10;
  mrt::ModelRunner runner(modelPath("add_one"), config);
  std::vector<float> x(kAddOneN), y(kAddOneN);
  for (int i = 0; i < 30; ++i) runner.execute({{"x", x}}, {{"y", y}});
  EXPECT_EQ(runner.getMonitoringStatisticsTotalCount().request_us, 30.0);
  const mrt::RequestTimes mean = runner.getMonitoringStatisticsMean();
  const mrt::RequestTimes p99 = runner.getMonitoringStatisticsPercentile(0.99);
  EXPECT_GT(mean.request_us, 0.0);
  EXPECT_GE(p99.request_us, runner.getMonitoringStatisticsPercentile(0.0).request_us);
  EXPECT_GT(runner.getTimeTrace(0, 0).request_us, 0.0);
  // Only 10 traces are kept (mrt_c.h says MRT_NOT_FOUND, the library says
  // MRT_INVALID_ARGUMENT; either way an mrt::Error naming the index).
  try {
    runner.getTimeTrace(0, 10);
    ADD_FAILURE() << "trace 10 of 10 did not throw";
  } catch (const mrt::Error &e) {
    EXPECT_TRUE(e.code() == MRT_NOT_FOUND || e.code() == MRT_INVALID_ARGUMENT) << e.what();
    EXPECT_NE(std::string(e.what()).find("10"), std::string::npos) << e.what();
  }
  EXPECT_MRT_ERROR(runner.getMonitoringStatisticsMean(3), MRT_INVALID_ARGUMENT, "3");
}

TEST(CxxRunnerConfig, DeviceTimeCountsEachRequestsMainRun) {
  mrt::ModelRunner runner(modelPath("add_one"));
  std::vector<float> x(kAddOneN), y(kAddOneN);
  const mrt::DeviceTime loaded = runner.deviceTime();
  runner.execute({{"x", x}}, {{"y", y}});
  const mrt::DeviceTime once = runner.deviceTime();
  runner.execute({{"x", x}}, {{"y", y}});
  const mrt::DeviceTime twice = runner.deviceTime();
  EXPECT_GT(once.cycles, loaded.cycles);
  EXPECT_EQ(twice.cycles - once.cycles, once.cycles - loaded.cycles);
  EXPECT_GT(once.clock_hz, 0.0);
  EXPECT_DOUBLE_EQ(twice.secondsSince(loaded), 2.0 * static_cast<double>(once.cycles - loaded.cycles) / once.clock_hz);
  EXPECT_MRT_ERROR(runner.deviceTime(2), MRT_INVALID_ARGUMENT, "replica_id 2 out of range");
}

}  // namespace
