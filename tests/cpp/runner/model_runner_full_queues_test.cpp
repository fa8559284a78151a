// A client whose request finds its replica's queues full (more requests in
// flight than they hold) runs the device itself while no other thread does
// (Replica::serveWhileFull), instead of waiting for the device thread; the
// device thread then leaves the device to the clients for a while
// (Replica::deferToClients) but still completes what nobody serves. Every
// output is checked against the model's math, whoever served it.
#include <atomic>
#include <future>
#include <memory>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "runner_test_util.hpp"

namespace mrt::runner_test {
namespace {

using namespace std::chrono_literals;

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

constexpr int kRequestsPerThread = kFullSpeedBuild ? 2000 : 300;
// Far more than a ring of ModelRunner's default depth (2 x the batch) holds.
constexpr int kWindow = 8;

TEST(ModelRunnerFullQueuesTest, ASubmitFacingFullQueuesServesTheDeviceWhileItsThreadSleeps) {
  ModelRunnerConfig config;
  config.ring_buffer_size_multiplier = 2;
  ModelRunner runner(exampleModel("add_one"), config);
  std::mt19937 rng(11);
  const auto submitter = std::this_thread::get_id();
  int served_while_submitting = 0;
  for (int round = 0; round < 40; ++round) {
    std::this_thread::sleep_for(2ms);  // the device thread stops polling for work and sleeps
    // Shared with the callbacks, which may run after this round.
    struct Watch {
      std::atomic<bool> submitting{true};
      std::atomic<bool> registering{false};  // a callback of a request already done runs inline: not counted
      std::atomic<int> served{0};
    };
    auto watch = std::make_shared<Watch>();
    std::vector<std::vector<float>> xs(kWindow);
    std::vector<OutputFutureMemory> futures;
    for (int i = 0; i < kWindow; ++i) {
      xs[i] = randomFloats(rng, 16);
      futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}));
      watch->registering.store(true);
      futures.back().at("y").completion()->onReady([watch, submitter](ErrorCode, const std::string &) {
        if (std::this_thread::get_id() == submitter && watch->submitting.load() && !watch->registering.load())
          ++watch->served;
      });
      watch->registering.store(false);
    }
    watch->submitting.store(false);
    for (int i = 0; i < kWindow; ++i) EXPECT_EQ(floatsOf(futures[i].at("y").get()), plusOne(xs[i])) << round;
    served_while_submitting += watch->served.load() > 0;
  }
  // The device thread, woken by the first request, may win the race now and
  // then, but its wake-up takes far longer than this thread needs to fill
  // the rings.
  EXPECT_GT(served_while_submitting, 0);
}

// `threads` clients on `replicas` replicas, each keeping kWindow add_one
// requests in flight; every output checked.
void addOneClients(ModelRunner &runner, unsigned replicas, int threads) {
  std::atomic<int> mismatches{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < threads; ++t) {
    clients.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(200 + t));
      std::vector<std::vector<float>> xs(kWindow), ys(kWindow, std::vector<float>(16));
      std::vector<OutputFutureMemoryView> futures(kWindow);
      const auto check = [&](int slot) {
        futures[slot].at("y").get();
        if (ys[slot] != plusOne(xs[slot])) ++mismatches;
      };
      // The last kWindow rounds only collect.
      for (int i = 0; i < kRequestsPerThread + kWindow; ++i) {
        const int slot = i % kWindow;
        if (futures[slot].count("y")) check(slot);
        if (i >= kRequestsPerThread) continue;
        xs[slot] = randomFloats(rng, 16);
        futures[slot] = runner.executeAsync({{"x", constView(xs[slot])}}, {{"y", view(ys[slot])}},
                                            static_cast<unsigned>(t) % replicas);
      }
    });
  }
  for (auto &client : clients) client.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ModelRunnerFullQueuesTest, ClientsWithMoreInFlightThanTheQueuesHoldGetTheirOwnOutputs) {
  // Two clients on a replica each (as bench_handoffs' BM_TwoClientsVsOne),
  // and three sharing one: producers that serve while another pushes.
  for (const auto &[replicas, threads] : {std::pair{2u, 2}, std::pair{1u, 3}}) {
    ModelRunnerConfig config;
    config.thread_safe = true;
    config.replication_factor = replicas;
    ModelRunner runner(exampleModel("add_one"), config);
    addOneClients(runner, replicas, threads);
    double total = 0;
    for (unsigned r = 0; r < replicas; ++r) {
      std::map<std::string, double> counts;
      runner.getMonitoringStatisticsTotalCount(counts, r);
      total += counts.at("request_monitoring_statistics_count");
    }
    EXPECT_EQ(total, static_cast<double>(threads * kRequestsPerThread)) << replicas << " replica(s)";
  }
}

TEST(ModelRunnerFullQueuesTest, RequestsNobodyServesAfterAClientServedAreCompletedByTheDeviceThread) {
  // The client serves at full queues, then stops submitting and only polls
  // (polls never serve): the device thread, which left the device to the
  // client meanwhile, completes the requests left in the queues.
  ModelRunner runner(exampleModel("add_one"));
  std::mt19937 rng(12);
  for (int round = 0; round < 10; ++round) {
    std::vector<std::vector<float>> xs(kWindow);
    std::vector<OutputFutureMemory> futures;
    for (int i = 0; i < kWindow; ++i) {
      xs[i] = randomFloats(rng, 16);
      futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}));
    }
    for (int i = 0; i < kWindow; ++i) {
      ASSERT_EQ(futures[i].at("y").wait_for(10s), std::future_status::ready) << round << " " << i;
      EXPECT_EQ(floatsOf(futures[i].at("y").get()), plusOne(xs[i])) << round << " " << i;
    }
  }
}

TEST(ModelRunnerFullQueuesTest, APipelinedMainServedAtFullQueuesGivesEveryRequestItsOutputs) {
  ModelRunnerConfig config;
  config.thread_safe = true;
  ModelRunner runner(exampleModel("pipeline2", 1), config);
  const MlpReference reference(*runner.model());
  std::mt19937 rng(13);
  std::vector<std::vector<float>> images(kWindow), probs(kWindow, std::vector<float>(10));
  std::vector<OutputFutureMemoryView> futures(kWindow);
  const auto check = [&](int slot) {
    futures[slot].at("probs").get();
    ASSERT_NO_FATAL_FAILURE(expectNear(probs[slot], reference(images[slot])));
  };
  for (int i = 0; i < 20 * kWindow; ++i) {
    const int slot = i % kWindow;
    if (futures[slot].count("probs")) check(slot);
    images[slot] = randomFloats(rng, 784, 0.f, 1.f);
    futures[slot] = runner.executeAsync({{"image", constView(images[slot])}}, {{"probs", view(probs[slot])}});
  }
  for (int slot = 0; slot < kWindow; ++slot) check(slot);
}

}  // namespace
}  // namespace mrt::runner_test
