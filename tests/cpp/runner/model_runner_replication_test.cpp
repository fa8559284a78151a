// ModelRunner serving a model compiled with replication factor 2 (mrt-gen
// `replicated`: add_one on each replica): replica ids over the in-model
// replicas of every copy, each request on the replica it names with its own
// data, per-replica statistics, and the errors of replica ids and devices.
#include <random>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "device/device_manager.hpp"
#include "runner_test_util.hpp"

namespace mrt::runner_test {
namespace {

using ::testing::HasSubstr;

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

constexpr unsigned kModelReplicas = 2;

ModelRunnerConfig copies(unsigned count) {
  ModelRunnerConfig config;
  config.replication_factor = count;
  config.thread_safe = true;
  return config;
}

double requestsOf(ModelRunner &runner, unsigned replica) {
  std::map<std::string, double> counts;
  runner.getMonitoringStatisticsTotalCount(counts, replica);
  return counts["request_monitoring_statistics_count"];
}

TEST(ModelRunnerReplicationTest, OneCopyServesBothInModelReplicas) {
  ModelRunner runner(exampleModel("replicated"));
  ASSERT_EQ(runner.numReplicas(), kModelReplicas);
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    const unsigned replica = static_cast<unsigned>(i) % kModelReplicas;
    // Each replica's data is its own: values around 1000 x replica.
    const float base = 1000.f * static_cast<float>(replica);
    const std::vector<float> x = randomFloats(rng, 16, base - 10.f, base + 10.f);
    if (i % 2 == 0) {
      OutputMemory out = runner.execute({{"x", constView(x)}}, replica);
      ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(out.at("y")), plusOne(x), 0.f));
    } else {
      std::vector<float> y(16, -7.f);
      runner.execute({{"x", constView(x)}}, {{"y", view(y)}}, replica);
      ASSERT_NO_FATAL_FAILURE(expectNear(y, plusOne(x), 0.f));
    }
  }
  EXPECT_EQ(requestsOf(runner, 0), 100.0);
  EXPECT_EQ(requestsOf(runner, 1), 100.0);
}

TEST(ModelRunnerReplicationTest, TwoCopiesServeFourReplicasConcurrently) {
  ModelRunner runner(exampleModel("replicated"), copies(2));  // 2 devices of 2 IPUs
  const unsigned replicas = runner.numReplicas();
  ASSERT_EQ(replicas, 2 * kModelReplicas);
  constexpr int kPerReplica = 50;
  // One client thread per replica, each with a window of requests in flight.
  std::vector<int> wrong(replicas, 0);
  std::vector<std::thread> clients;
  for (unsigned r = 0; r < replicas; ++r) {
    clients.emplace_back([&, r] {
      std::mt19937 rng(r);
      std::vector<std::vector<float>> xs, ys;
      std::vector<OutputFutureMemoryView> futures;
      for (int i = 0; i < kPerReplica; ++i) {
        xs.push_back(randomFloats(rng, 16, 1000.f * static_cast<float>(r), 1000.f * static_cast<float>(r) + 10.f));
        ys.emplace_back(16, -7.f);
      }
      for (int i = 0; i < kPerReplica; ++i) {
        futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}, {{"y", view(ys[i])}}, r));
      }
      for (int i = 0; i < kPerReplica; ++i) {
        futures[i].at("y").get();
        if (ys[i] != plusOne(xs[i])) ++wrong[r];
      }
    });
  }
  for (auto &client : clients) client.join();
  for (unsigned r = 0; r < replicas; ++r) {
    EXPECT_EQ(wrong[r], 0) << "replica " << r;
    EXPECT_EQ(requestsOf(runner, r), static_cast<double>(kPerReplica)) << "replica " << r;
  }
}

TEST(ModelRunnerReplicationTest, ReplicaIdsAndDevicesAreChecked) {
  const auto model = exampleModel("replicated");
  {
    ModelRunner runner(model);
    const std::vector<float> x(16, 1.f);
    const Error range = captureError([&] { runner.execute({{"x", constView(x)}}, 2); });
    EXPECT_EQ(range.code(), ErrorCode::InvalidArgument);
    EXPECT_THAT(range.what(), HasSubstr("replica_id 2 out of range: the runner has 2 replicas"));
    // Simulated errors would hit both replicas' concurrent runs on the engine.
    const Error inject =
        captureError([&] { runner.insertSimulatedError(hwsim::DeviceErrorCode::TileException, "Add", 0); });
    EXPECT_EQ(inject.code(), ErrorCode::FailedPrecondition);
    EXPECT_THAT(inject.what(), HasSubstr("in-model replication"));
    // Still serving.
    std::vector<float> y(16);
    runner.execute({{"x", constView(x)}}, {{"y", view(y)}}, 1);
    EXPECT_EQ(y, plusOne(x));
  }
  // A device serves a whole copy: it is given for the copy's first replica.
  ModelRunnerConfig config;
  config.replica_to_device[1] = DeviceManager().createSmallIpuModelDevice(model);
  const Error shared = captureError([&] { ModelRunner runner(model, config); });
  EXPECT_EQ(shared.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(shared.what(), HasSubstr("replica_to_device names replica 1, which shares the device of replica 0"));
  config.replica_to_device.clear();
  config.replica_to_device[2] = DeviceManager().createSmallIpuModelDevice(model);
  const Error beyond = captureError([&] { ModelRunner runner(model, config); });
  EXPECT_THAT(beyond.what(), HasSubstr("replication_factor is 1 x the model's 2 replicas = 2"));
}

TEST(ModelRunnerReplicationTest, AGivenDeviceMustHoldEveryReplica) {
  const auto model = exampleModel("replicated");
  ModelRunnerConfig config;
  const std::shared_ptr<Device> one = DeviceManager().createSmallIpuModelDevice(1);
  config.replica_to_device[0] = one;
  const Error error = captureError([&] { ModelRunner runner(model, config); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(error.what(), HasSubstr("the model needs a device of 2 IPUs (1 IPU per replica x 2 replicas), device " +
                                      std::to_string(one->id()) + " has 1 IPU"));
}

}  // namespace
}  // namespace mrt::runner_test
