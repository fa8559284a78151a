// Dynamic batch sizing along a dimension other than 0 (batching_dim 1):
// time_major's tensors are [time, batch, features], so a request of n
// samples is a [4, n, 8] tensor whose samples the queues gather from (and
// scatter to) every time step. The model sums over time, so a sample taken
// from the wrong place gives wrong numbers.
#include <cstdlib>
#include <future>
#include <random>

#include <gtest/gtest.h>

#include "runner_test_util.hpp"

namespace mrt::runner_test {
namespace {

using namespace std::chrono_literals;

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

constexpr std::size_t kSteps = 4, kWidth = 8, kBatch = 4;
constexpr std::size_t kSampleFloats = kSteps * kWidth;

// time_major's math on a request of n samples: y[t] = x[0] + ... + x[t].
std::vector<float> runningSum(std::vector<float> x) {
  const std::size_t n = x.size() / kSampleFloats;
  for (std::size_t t = 1; t < kSteps; ++t) {
    for (std::size_t i = 0; i < n * kWidth; ++i) x[t * n * kWidth + i] += x[(t - 1) * n * kWidth + i];
  }
  return x;
}

ModelRunnerConfig alongDimension1(std::chrono::nanoseconds batch_timeout) {
  ModelRunnerConfig config;
  config.batching_dim = 1;
  config.timeout_ns = 0ns;
  config.batch_size_timeout_ns = batch_timeout;
  config.is_batch_size_timeout_enabled = true;
  return config;
}

TEST(ModelRunnerBatchingDimTest, AnyBatchSizeIsSplitOrMergedAlongDimension1Async) {
  for (unsigned replicas : {1u, 2u}) {
    ModelRunnerConfig config = alongDimension1(20ms);
    config.replication_factor = replicas;
    ModelRunner runner(exampleModel("time_major", kBatch), config);
    std::mt19937 rng(replicas);
    std::vector<std::vector<float>> xs;
    for (int i = 0; i < 1000; ++i) xs.push_back(randomFloats(rng, kSampleFloats * (1 + rng() % 12)));  // 1 to 3x
    std::vector<OutputFutureMemory> futures;
    for (int i = 0; i < 1000; ++i) futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}, i % replicas));
    for (int i = 0; i < 1000; ++i) {
      ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(futures[i].at("y").get()), runningSum(xs[i]))) << i;
    }
  }
}

TEST(ModelRunnerBatchingDimTest, SynchronousRequestsIntoCallerOutputsAlongDimension1) {
  ModelRunner runner(exampleModel("time_major", kBatch), alongDimension1(1ms));
  EXPECT_EQ(runner.config().batching_dim, 1u);
  std::mt19937 rng(5);
  for (std::size_t samples : {1, 2, 3, 4, 5, 8, 11, 12}) {
    const std::vector<float> x = randomFloats(rng, kSampleFloats * samples);
    std::vector<float> y(x.size(), -1.f);
    runner.execute({{"x", constView(x)}}, {{"y", view(y)}});
    ASSERT_NO_FATAL_FAILURE(expectNear(y, runningSum(x))) << samples << " samples";
  }
}

TEST(ModelRunnerBatchingDimTest, OneSampleRequestsFillABatchLargerThanDimension0) {
  // Batch 16 in dimension 1, 4 in dimension 0: the rings must hold a whole
  // batch of one-sample requests (2 x 16 entries, not 2 x 4), or the
  // producer blocks on a full output ring before the batch is complete and,
  // with no timeouts, nothing ever runs.
  constexpr std::size_t kLargeBatch = 16;
  ModelRunner runner(exampleModel("time_major", kLargeBatch), alongDimension1(std::chrono::nanoseconds::max()));
  std::mt19937 rng(11);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::vector<float>> xs;
    std::vector<OutputFutureMemory> futures;
    for (std::size_t i = 0; i < kLargeBatch; ++i) xs.push_back(randomFloats(rng, kSampleFloats));
    // Sent from another thread: a producer blocked on a full ring must fail
    // the test, not hang it (the blocked thread cannot be joined: abort).
    auto sender = std::async(std::launch::async, [&] {
      for (const auto &x : xs) futures.push_back(runner.executeAsync({{"x", constView(x)}}));
    });
    if (sender.wait_for(10s) != std::future_status::ready) {
      ADD_FAILURE() << "a producer is blocked on a full ring";
      std::abort();
    }
    sender.get();
    for (std::size_t i = 0; i < kLargeBatch; ++i) {
      ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(futures[i].at("y").get()), runningSum(xs[i]))) << i;
    }
  }
}

TEST(ModelRunnerBatchingDimTest, WrongSizesNameTheSampleSize) {
  ModelRunner runner(exampleModel("time_major", kBatch), alongDimension1(1ms));
  std::vector<float> ragged(kSampleFloats + kWidth);
  Error error = captureError([&] { runner.execute({{"x", constView(ragged)}}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "input 'x': expected 128 bytes, got 160 (a whole number of samples of that size)");
  std::vector<float> x(kSampleFloats * 2), y(kSampleFloats * 3);
  error = captureError([&] { runner.execute({{"x", constView(x)}}, {{"y", view(y)}}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "output 'y': expected 256 bytes, got 384");
  y.resize(x.size());
  runner.execute({{"x", constView(x)}}, {{"y", view(y)}});  // still serving
  EXPECT_EQ(y, runningSum(x));
}

TEST(ModelRunnerBatchingDimTest, ADimensionSomeTensorLacksIsRefused) {
  ModelRunnerConfig config = alongDimension1(1ms);
  config.batching_dim = 2;
  Error error = captureError([&] { ModelRunner runner(exampleModel("add_one", 4), config); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "batching_dim 2: input 'x': tensor F32[4,16] has no dimension 2 to batch along (it has 2)");
}

TEST(ModelRunnerBatchingDimTest, TensorsDisagreeingOnTheBatchSizeAreRefused) {
  // mlp's dimension 1 is 784 pixels in, 10 classes out: not a batch.
  Error error = captureError([&] { ModelRunner runner(exampleModel("mlp", 4), alongDimension1(1ms)); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(),
               "batching_dim 1: input 'image' is F32[4,784], 784 in that dimension, but output 'probs' is "
               "F32[4,10], 10: dynamic batch sizing needs the model's batch size in dimension 1 of every execute "
               "input and output");
}

}  // namespace
}  // namespace mrt::runner_test
