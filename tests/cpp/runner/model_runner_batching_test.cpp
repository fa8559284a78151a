// Dynamic batch sizing (batching_dim): requests of any number of samples are
// merged into and split across the model's batches, a partial batch is padded
// after batch_size_timeout_ns; and the request statistics (getTimeTrace,
// getMonitoringStatistics*).
#include <random>

#include <gtest/gtest.h>

#include "runner_test_util.hpp"

namespace mrt::runner_test {
namespace {

using namespace std::chrono_literals;

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

ModelRunnerConfig batching(std::chrono::nanoseconds batch_timeout) {
  ModelRunnerConfig config;
  config.batching_dim = 0;
  config.timeout_ns = 0ns;
  config.batch_size_timeout_ns = batch_timeout;
  config.is_batch_size_timeout_enabled = batch_timeout != std::chrono::nanoseconds::max();
  return config;
}

TEST(ModelRunnerBatchingTest, AnyBatchSizeIsSplitOrMergedAsync) {
  for (unsigned replicas : {1u, 2u}) {
    ModelRunnerConfig config = batching(20ms);
    config.replication_factor = replicas;
    ModelRunner runner(exampleModel("add_one", 4), config);
    std::mt19937 rng(replicas);
    std::vector<std::vector<float>> xs;
    for (int i = 0; i < 1500; ++i) xs.push_back(randomFloats(rng, 16 * (1 + rng() % 12)));  // 1 to 3x the batch
    std::vector<OutputFutureMemory> futures;
    for (int i = 0; i < 1500; ++i) futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}, i % replicas));
    for (int i = 0; i < 1500; ++i) {
      ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(futures[i].at("y").get()), plusOne(xs[i]), 0.f)) << i;
    }
  }
}

TEST(ModelRunnerBatchingTest, SingleSamplesMergeIntoOneBatchWithoutAnyTimeout) {
  ModelRunner runner(exampleModel("add_one", 4), batching(std::chrono::nanoseconds::max()));
  std::mt19937 rng(1);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::vector<float>> xs;
    std::vector<OutputFutureMemory> futures;
    for (int i = 0; i < 4; ++i) xs.push_back(randomFloats(rng, 16));
    for (int i = 0; i < 4; ++i) {
      futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}));
      if (i < 3) {
        EXPECT_FALSE(futures[i].at("y").completion()->wait(1ms)) << "ran before the batch was full";
      }
    }
    for (int i = 0; i < 4; ++i) EXPECT_EQ(floatsOf(futures[i].at("y").get()), plusOne(xs[i]));
  }
}

TEST(ModelRunnerBatchingTest, PartialBatchIsPaddedAfterTheBatchSizeTimeout) {
  ModelRunner runner(exampleModel("mlp", 4), batching(10ms));
  const MlpReference reference(*runner.model());
  std::mt19937 rng(8);
  for (int samples : {1, 3, 5, 6, 9}) {
    const std::vector<float> images = randomFloats(rng, 784 * static_cast<std::size_t>(samples), 0.f, 1.f);
    const auto start = std::chrono::steady_clock::now();
    OutputMemory out = runner.execute({{"image", constView(images)}});
    EXPECT_GE(std::chrono::steady_clock::now() - start, 10ms) << samples << " samples";
    ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(out.at("probs")), reference(images)));
  }
  std::vector<float> images(784 * 8, 0.5f);  // two whole batches: no wait needed
  ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(runner.execute({{"image", constView(images)}}).at("probs")),
                                     reference(images)));
  std::vector<float> ragged(784 + 5);
  const Error error = captureError([&] { runner.execute({{"image", constView(ragged)}}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "input 'image': expected 3136 bytes, got 3156 (a whole number of samples of that size)");
}

TEST(ModelRunnerBatchingTest, WithoutBatchingPartialBatchesAreRefused) {
  ModelRunner runner(exampleModel("add_one", 4));
  std::vector<float> x(16 * 3);
  const Error error = captureError([&] { runner.execute({{"x", constView(x)}}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "input 'x': expected 256 bytes, got 192 (or a whole multiple of it)");
}

TEST(ModelRunnerStatisticsTest, TimeTraceAndStatisticsDescribeTheRequests) {
  ModelRunnerConfig config;
  config.request_tracepoints_buffer_size = 10;
  config.replication_factor = 2;
  ModelRunner runner(exampleModel("mlp"), config);
  std::map<std::string, float> trace;
  runner.getTimeTrace(trace);
  EXPECT_TRUE(trace.empty());
  std::vector<float> image(784, 0.25f);
  for (int i = 0; i < 100; ++i) runner.execute({{"image", constView(image)}});

  runner.getTimeTrace(trace);
  ASSERT_EQ(trace.size(), 4u);
  const float total = trace.at("request_duration_us");
  EXPECT_GT(total, 0.f);
  EXPECT_GT(trace.at("computation_duration_us"), 0.f);
  EXPECT_NEAR(trace.at("read_preparation_duration_us") + trace.at("read_queue_duration_us") +
                  trace.at("computation_duration_us"),
              total, 0.01f * total + 0.01f);
  trace.clear();
  runner.getTimeTrace(trace, 0, 9);  // the oldest of the 10 kept is index 0, the last 9
  EXPECT_EQ(trace.size(), 4u);
  EXPECT_EQ(captureError([&] { runner.getTimeTrace(trace, 0, 10); }).code(), ErrorCode::InvalidArgument);

  std::map<std::string, double> p50, p99, mean, count;
  runner.getMonitoringStatisticsPercentile(p50, 0.5);
  runner.getMonitoringStatisticsPercentile(p99, 0.99);
  runner.getMonitoringStatisticsMean(mean);
  runner.getMonitoringStatisticsTotalCount(count);
  for (const char *phase : {"request", "read_preparation", "read_queue", "computation"}) {
    const std::string p = phase;
    EXPECT_LE(p50.at(p + "_monitoring_statistics_percentile_us"), p99.at(p + "_monitoring_statistics_percentile_us"));
    EXPECT_GE(mean.at(p + "_monitoring_statistics_mean_us"), 0.0);
    EXPECT_EQ(count.at(p + "_monitoring_statistics_count"), 100.0);
  }
  EXPECT_GT(mean.at("request_monitoring_statistics_mean_us"), 0.0);
  EXPECT_EQ(captureError([&] { runner.getMonitoringStatisticsPercentile(p50, 1.5); }).code(),
            ErrorCode::InvalidArgument);

  // Replica 1 served nothing.
  count.clear();
  runner.getMonitoringStatisticsTotalCount(count, 1);
  EXPECT_EQ(count.at("request_monitoring_statistics_count"), 0.0);
  mean.clear();
  runner.getMonitoringStatisticsMean(mean, 1);
  EXPECT_TRUE(mean.empty());
  EXPECT_EQ(captureError([&] { runner.getMonitoringStatisticsMean(mean, 2); }).code(), ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace mrt::runner_test
