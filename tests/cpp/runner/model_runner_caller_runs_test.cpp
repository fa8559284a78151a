// Caller-runs for asynchronous requests (Replica::Link::serveWaiter): a
// thread waiting without a bound for a request whose replica's device thread
// sleeps runs the device itself, as a synchronous execute does; bounded
// waits and polls never do. Whoever serves, every output is the model's
// (checked against reference math), with clients on several threads, one
// replica or two, a pipelined Main, a partial batch padded after its
// timeout, a device error with auto_reset, and futures waited for while and
// after their runner is destroyed. A runner that only synchronous callers
// serve never starts its device thread (Replica::start).
#include <sched.h>

#include <atomic>
#include <future>
#include <memory>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "common/reused_thread.hpp"
#include "runner_test_util.hpp"

namespace mrt::runner_test {
namespace {

using namespace std::chrono_literals;

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

constexpr int kRequestsPerThread = kFullSpeedBuild ? 400 : 100;

// Which thread completed a request, told apart from a callback registered
// after the request was already done (which runs inline on the registering
// thread, before the wait). Shared with the callback: callbacks run after
// the request is marked ready, so the waiter may be gone by then.
struct CompletedOn {
  std::atomic<bool> waiting{false};
  std::atomic<bool> on_waiter{false};
  std::atomic<bool> on_other{false};

  static std::shared_ptr<CompletedOn> watch(Completion &completion) {
    auto completed = std::make_shared<CompletedOn>();
    const auto waiter = std::this_thread::get_id();
    completion.onReady([completed, waiter](ErrorCode, const std::string &) {
      if (!completed->waiting.load()) return;  // inline: done before the wait
      (std::this_thread::get_id() == waiter ? completed->on_waiter : completed->on_other).store(true);
    });
    completed->waiting.store(true);
    return completed;
  }
};

TEST(ModelRunnerCallerRunsTest, AnUnboundedWaitServesTheDeviceWhileItsThreadSleeps) {
  ModelRunner runner(exampleModel("add_one"));
  std::mt19937 rng(1);
  int served_by_waiter = 0;
  for (int round = 0; round < 40; ++round) {
    std::this_thread::sleep_for(2ms);  // the device thread stops polling for work and sleeps
    const std::vector<float> x = randomFloats(rng, 16);
    OutputFutureMemory futures = runner.executeAsync({{"x", constView(x)}});
    const auto completed = CompletedOn::watch(*futures.at("y").completion());
    EXPECT_EQ(floatsOf(futures.at("y").get()), plusOne(x)) << round;
    served_by_waiter += completed->on_waiter.load();
  }
  // The device thread, woken by the request, may win the race now and then,
  // but it needs a wake-up, which takes far longer than this thread needs
  // to start the run.
  EXPECT_GT(served_by_waiter, 0);
}

// Creation and synchronous requests take no thread from the cache of
// device threads (common/reused_thread.hpp); the first request left to the
// device thread does. Without timeouts: an idle device's first timeout
// would start the thread too.
TEST(ModelRunnerCallerRunsTest, TheDeviceThreadStartsAtTheFirstRequestLeftToIt) {
  ModelRunnerConfig config;
  config.timeout_ns = 0ns;
  std::mt19937 rng(7);
  {
    ModelRunner warm(exampleModel("add_one"), config);
    std::vector<float> x = randomFloats(rng, 16);
    OutputFutureMemory futures = warm.executeAsync({{"x", constView(x)}});
    ASSERT_EQ(futures.at("y").wait_for(10s), std::future_status::ready);
  }
  // The warm runner's device thread waits in the cache now (for 2 s).
  const std::size_t waiting = detail::ReusedThread::waitingThreads();
  ASSERT_GE(waiting, 1U);
  ModelRunner runner(exampleModel("add_one"), config);
  for (int i = 0; i < 10; ++i) {
    const std::vector<float> x = randomFloats(rng, 16);
    EXPECT_EQ(floatsOf(runner.execute({{"x", constView(x)}}).at("y")), plusOne(x)) << i;
  }
  EXPECT_EQ(detail::ReusedThread::waitingThreads(), waiting) << "creation or execute() started the device thread";
  const std::vector<float> x = randomFloats(rng, 16);
  OutputFutureMemory futures = runner.executeAsync({{"x", constView(x)}});
  ASSERT_EQ(futures.at("y").wait_for(10s), std::future_status::ready) << "no device thread served the request";
  EXPECT_EQ(floatsOf(futures.at("y").get()), plusOne(x));
  EXPECT_EQ(detail::ReusedThread::waitingThreads(), waiting - 1);
}

// Started by a client pinned to another CPU, the device thread still runs
// on the CPUs of the thread that created the runner (common/thread_cpus.hpp).
TEST(ModelRunnerCallerRunsTest, TheDeviceThreadRunsOnTheCpusOfTheRunnersCreator) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (cpus.size() < 2) GTEST_SKIP() << "needs two CPUs";
  const auto pinTo = [](int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one) == 0;
  };
  ModelRunnerConfig config;
  config.timeout_ns = 0ns;  // the first request starts the device thread
  std::unique_ptr<ModelRunner> runner;
  std::thread([&] {
    ASSERT_TRUE(pinTo(cpus[0]));
    runner = std::make_unique<ModelRunner>(exampleModel("add_one"), config);
  }).join();
  ASSERT_TRUE(runner);
  std::atomic<int> device_cpus{-1}, device_first_cpu{-1};
  std::thread([&] {
    ASSERT_TRUE(pinTo(cpus[1]));
    std::mt19937 rng(8);
    const auto client = std::this_thread::get_id();
    for (int round = 0; round < 50 && device_cpus.load() < 0; ++round) {
      const std::vector<float> x = randomFloats(rng, 16);
      OutputFutureMemory futures = runner->executeAsync({{"x", constView(x)}});
      futures.at("y").completion()->onReady([&, client](ErrorCode, const std::string &) {
        if (std::this_thread::get_id() == client) return;  // done before the callback was registered
        cpu_set_t mine;
        CPU_ZERO(&mine);
        if (sched_getaffinity(0, sizeof mine, &mine) != 0) return;
        int first = -1;
        for (int cpu = 0; cpu < CPU_SETSIZE && first < 0; ++cpu) first = CPU_ISSET(cpu, &mine) ? cpu : -1;
        device_first_cpu = first;
        device_cpus = CPU_COUNT(&mine);
      });
      ASSERT_EQ(futures.at("y").wait_for(10s), std::future_status::ready);  // bounded: left to the device thread
      EXPECT_EQ(floatsOf(futures.at("y").get()), plusOne(x));
    }
  }).join();
  runner.reset();
  ASSERT_GE(device_cpus.load(), 0) << "no request was completed on the device thread";
  EXPECT_EQ(device_cpus.load(), 1);
  EXPECT_EQ(device_first_cpu.load(), cpus[0]) << "the device thread took the mask of the client that started it";
}

TEST(ModelRunnerCallerRunsTest, BoundedWaitsAndPollsLeaveTheDeviceToItsThread) {
  ModelRunner runner(exampleModel("add_one"));
  std::mt19937 rng(2);
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(2ms);
    const std::vector<float> x = randomFloats(rng, 16);
    OutputFutureMemory futures = runner.executeAsync({{"x", constView(x)}});
    const auto &future = futures.at("y");
    const auto completed = CompletedOn::watch(*future.completion());
    if (round % 2) {
      ASSERT_EQ(future.wait_for(10s), std::future_status::ready) << round;
    } else {
      while (future.wait_for(0ns) != std::future_status::ready) std::this_thread::yield();
    }
    EXPECT_EQ(floatsOf(future.get()), plusOne(x)) << round;
    EXPECT_FALSE(completed->on_waiter.load()) << round;
  }
}

// A waiter that served leaves the device thread asleep until a short
// deadline (Replica::deferDeviceThreadToClients), so that its next submit
// needs no wake-up; a request submitted then and never waited for without a
// bound is still completed, by the device thread once the deadline passes.
TEST(ModelRunnerCallerRunsTest, ARequestNobodyServesRightAfterAServedWaitIsCompletedByTheDeviceThread) {
  ModelRunner runner(exampleModel("add_one"));
  std::mt19937 rng(3);
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(2ms);
    const std::vector<float> served = randomFloats(rng, 16), left = randomFloats(rng, 16);
    OutputFutureMemory first = runner.executeAsync({{"x", constView(served)}});
    EXPECT_EQ(floatsOf(first.at("y").get()), plusOne(served)) << round;
    OutputFutureMemory second = runner.executeAsync({{"x", constView(left)}});
    const auto &future = second.at("y");
    const auto completed = CompletedOn::watch(*future.completion());
    ASSERT_EQ(future.wait_for(10s), std::future_status::ready) << round;
    EXPECT_EQ(floatsOf(future.get()), plusOne(left)) << round;
    EXPECT_FALSE(completed->on_waiter.load()) << round;
  }
}

void mlpClients(ModelRunner &runner, unsigned replicas, int threads) {
  const MlpReference reference(*runner.model());
  std::atomic<int> mismatches{0};
  std::vector<std::thread> clients;
  for (int t = 0; t < threads; ++t) {
    clients.emplace_back([&, t] {
      std::mt19937 rng(static_cast<unsigned>(100 + t));
      // Even threads keep one request in flight, odd ones two.
      const int window = 1 + t % 2;
      std::vector<std::vector<float>> images(window), probs(window, std::vector<float>(10));
      std::vector<OutputFutureMemoryView> futures(window);
      const auto check = [&](int slot) {
        futures[slot].at("probs").get();
        const std::vector<float> expected = reference(images[slot]);
        for (std::size_t k = 0; k < expected.size(); ++k) {
          if (std::abs(probs[slot][k] - expected[k]) > 1e-5f) {
            ++mismatches;
            return;
          }
        }
      };
      for (int i = 0; i < kRequestsPerThread; ++i) {
        const int slot = i % window;
        if (futures[slot].count("probs")) check(slot);
        images[slot] = randomFloats(rng, 784, 0.f, 1.f);
        futures[slot] = runner.executeAsync({{"image", constView(images[slot])}}, {{"probs", view(probs[slot])}},
                                            static_cast<unsigned>(t) % replicas);
      }
      for (int slot = 0; slot < window; ++slot) {
        if (futures[slot].count("probs")) check(slot);
      }
    });
  }
  for (auto &client : clients) client.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(ModelRunnerCallerRunsTest, ClientsOnSeveralThreadsGetTheirOwnOutputs) {
  for (unsigned replicas : {1u, 2u}) {
    ModelRunnerConfig config;
    config.thread_safe = true;
    config.replication_factor = replicas;
    ModelRunner runner(exampleModel("mlp"), config);
    mlpClients(runner, replicas, 4);
    std::map<std::string, double> counts;
    double total = 0;
    for (unsigned r = 0; r < replicas; ++r) {
      counts.clear();
      runner.getMonitoringStatisticsTotalCount(counts, r);
      total += counts.at("request_monitoring_statistics_count");
    }
    EXPECT_EQ(total, 4.0 * kRequestsPerThread) << replicas << " replica(s)";
  }
}

TEST(ModelRunnerCallerRunsTest, APipelinedMainServedByWaitersGivesEveryRequestItsOutputs) {
  auto model = exampleModel("pipeline2", 1);
  ModelRunnerConfig config;
  config.thread_safe = true;
  ModelRunner runner(model, config);
  mlpClients(runner, 1, 2);
}

TEST(ModelRunnerCallerRunsTest, APartialBatchIsPaddedAfterItsTimeoutForAWaiterToo) {
  ModelRunnerConfig config;
  config.batching_dim = 0;
  config.timeout_ns = 0ns;
  config.batch_size_timeout_ns = 10ms;
  config.is_batch_size_timeout_enabled = true;
  ModelRunner runner(exampleModel("mlp", 4), config);
  const MlpReference reference(*runner.model());
  std::mt19937 rng(3);
  for (int samples : {1, 3, 6}) {
    std::this_thread::sleep_for(2ms);
    const std::vector<float> images = randomFloats(rng, 784 * static_cast<std::size_t>(samples), 0.f, 1.f);
    const auto start = std::chrono::steady_clock::now();
    OutputFutureMemory futures = runner.executeAsync({{"image", constView(images)}});
    const TensorMemory &probs = futures.at("probs").get();
    EXPECT_GE(std::chrono::steady_clock::now() - start, 10ms) << samples << " samples";
    ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(probs), reference(images)));
  }
}

TEST(ModelRunnerCallerRunsTest, WaitersSeeADeviceErrorAndAutoResetServesOn) {
  ModelRunnerConfig config;
  config.auto_reset = true;
  ModelRunner runner(exampleModel("add_one"), config);
  std::mt19937 rng(4);
  int ok = 0, device_errors = 0;
  for (int i = 0; i < 60; ++i) {
    if (i == 20) runner.insertSimulatedError(hwsim::DeviceErrorCode::TileException, "Add");
    const std::vector<float> x = randomFloats(rng, 16);
    OutputFutureMemory futures = runner.executeAsync({{"x", constView(x)}});
    const auto &future = futures.at("y");
    future.wait();
    if (future.completion()->code() == ErrorCode::Ok) {
      ++ok;
      EXPECT_EQ(floatsOf(future.get()), plusOne(x)) << i;
    } else {
      ++device_errors;
      EXPECT_EQ(future.completion()->code(), ErrorCode::DeviceError) << i;
      EXPECT_NE(future.completion()->message().find("TILE_EXCEPTION"), std::string::npos)
          << future.completion()->message();
    }
  }
  EXPECT_EQ(device_errors, 1);
  EXPECT_EQ(ok, 59);
}

// A request waited for after (or while) its runner is destroyed: done with
// its outputs, or cancelled; never a hang or a touch of the freed replica.
void expectDoneOrCancelled(const OutputFuture<TensorMemoryView> &future, const std::vector<float> &x,
                           const std::vector<float> &y) {
  future.wait();
  const Completion &completion = *future.completion();
  if (completion.code() == ErrorCode::Ok) {
    EXPECT_EQ(y, plusOne(x));
  } else {
    EXPECT_EQ(completion.code(), ErrorCode::Cancelled);
    EXPECT_EQ(completion.message(), "replica 0: the runner was destroyed before the request ran");
  }
}

TEST(ModelRunnerCallerRunsTest, FuturesWaitedForAfterTheirRunnerIsDestroyedReturn) {
  constexpr int kRequests = 8;
  std::mt19937 rng(5);
  std::vector<std::vector<float>> xs(kRequests), ys(kRequests, std::vector<float>(16));
  std::vector<OutputFutureMemoryView> futures;
  {
    ModelRunner runner(exampleModel("add_one"));
    for (int i = 0; i < kRequests; ++i) {
      xs[i] = randomFloats(rng, 16);
      futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}, {{"y", view(ys[i])}}));
    }
  }
  for (int i = 0; i < kRequests; ++i) expectDoneOrCancelled(futures[i].at("y"), xs[i], ys[i]);
}

TEST(ModelRunnerCallerRunsTest, WaitersRacingTheRunnersDestructionReturn) {
  constexpr int kWaiters = 3;
  std::mt19937 rng(6);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::vector<float>> xs(kWaiters), ys(kWaiters, std::vector<float>(16));
    std::vector<OutputFutureMemoryView> futures;
    std::vector<std::thread> waiters;
    {
      ModelRunnerConfig config;
      config.thread_safe = true;
      config.run_save_programs = round % 2 == 0;
      ModelRunner runner(exampleModel("add_one"), config);
      for (int i = 0; i < kWaiters; ++i) {
        xs[i] = randomFloats(rng, 16);
        futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}, {{"y", view(ys[i])}}));
      }
      for (int i = 0; i < kWaiters; ++i) {
        waiters.emplace_back([&, i] { expectDoneOrCancelled(futures[i].at("y"), xs[i], ys[i]); });
      }
      if (round % 4 == 1) std::this_thread::sleep_for(100us);
    }
    for (auto &waiter : waiters) waiter.join();
  }
}

}  // namespace
}  // namespace mrt::runner_test
