// ModelRunner with thread_safe: 8 client threads each sending thousands of
// requests, sync and async, to one or two replicas; every output is checked
// against reference math (each request carries values unique to it, so a
// mixed-up buffer cannot go unnoticed).
#include <atomic>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "runner_test_util.hpp"

namespace mrt::runner_test {
namespace {

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

constexpr int kRequestsPerThread = kFullSpeedBuild ? 10000 : 2000;
constexpr int kThreads = 8;

void runClients(ModelRunner &runner, unsigned replicas, bool async) {
  std::atomic<int> mismatches{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(t));
      constexpr int kWindow = 16;  // async requests in flight per thread
      std::vector<std::vector<float>> xs(kWindow), ys(kWindow, std::vector<float>(16));
      std::vector<OutputFutureMemoryView> futures(kWindow);
      for (int i = 0; i < kRequestsPerThread; ++i) {
        const int slot = i % kWindow;
        const unsigned replica = static_cast<unsigned>(i + t) % replicas;
        if (async && futures[slot].count("y")) {
          futures[slot].at("y").get();
          if (ys[slot] != plusOne(xs[slot])) ++mismatches;
        }
        xs[slot] = randomFloats(rng, 16, -1000.f, 1000.f);
        xs[slot][0] = static_cast<float>(t * kRequestsPerThread + i);  // unique per request
        if (async) {
          futures[slot] = runner.executeAsync({{"x", constView(xs[slot])}}, {{"y", view(ys[slot])}}, replica);
        } else if (i % 2) {
          runner.execute({{"x", constView(xs[slot])}}, {{"y", view(ys[slot])}}, replica);
          if (ys[slot] != plusOne(xs[slot])) ++mismatches;
        } else {
          OutputMemory out = runner.execute({{"x", constView(xs[slot])}}, replica);
          if (floatsOf(out.at("y")) != plusOne(xs[slot])) ++mismatches;
        }
      }
      for (int slot = 0; async && slot < kWindow; ++slot) {
        if (!futures[slot].count("y")) continue;
        futures[slot].at("y").get();
        if (ys[slot] != plusOne(xs[slot])) ++mismatches;
      }
    });
  }
  for (auto &client : clients) client.join();
  EXPECT_EQ(mismatches.load(), 0);
  std::map<std::string, double> counts;
  double total = 0;
  for (unsigned r = 0; r < replicas; ++r) {
    counts.clear();
    runner.getMonitoringStatisticsTotalCount(counts, r);
    total += counts.at("request_monitoring_statistics_count");
  }
  EXPECT_EQ(total, double(kThreads) * kRequestsPerThread);
}

ModelRunnerConfig threadSafe(unsigned replicas) {
  ModelRunnerConfig config;
  config.thread_safe = true;
  config.replication_factor = replicas;
  return config;
}

TEST(ModelRunnerThreadsTest, EightClientsSyncOneReplica) {
  ModelRunner runner(exampleModel("add_one"), threadSafe(1));
  runClients(runner, 1, false);
}

TEST(ModelRunnerThreadsTest, EightClientsAsyncTwoReplicas) {
  ModelRunner runner(exampleModel("add_one"), threadSafe(2));
  runClients(runner, 2, true);
}

TEST(ModelRunnerThreadsTest, EightClientsSyncTwoReplicas) {
  ModelRunner runner(exampleModel("add_one"), threadSafe(2));
  runClients(runner, 2, false);
}

}  // namespace
}  // namespace mrt::runner_test
