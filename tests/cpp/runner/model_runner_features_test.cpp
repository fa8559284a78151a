// ModelRunnerConfig options at work: frozen inputs overriding TensorData,
// Save programs run at destruction, conditional routing, timeouts that flush
// dummy data (with flush_on_waiting_outputs and a flush_callback), and
// simulated device errors with and without auto_reset.
#include <atomic>
#include <future>
#include <memory>
#include <random>

#include <gtest/gtest.h>

#include "runner_test_util.hpp"
#include "thread_test_support.hpp"

namespace mrt::runner_test {
namespace {

using namespace std::chrono_literals;

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

TEST(ModelRunnerFeaturesTest, FrozenInputsOverrideTensorData) {
  auto model = exampleModel("mlp");
  std::mt19937 rng(5);
  std::vector<float> w1 = randomFloats(rng, 784 * 128, -0.1f, 0.1f), b1 = randomFloats(rng, 128);
  std::vector<float> w2 = randomFloats(rng, 128 * 10), b2 = randomFloats(rng, 10);
  ModelRunnerConfig config;
  config.frozen_inputs = {{"w1", constView(w1)}, {"b1", constView(b1)}, {"w2", constView(w2)}, {"b2", constView(b2)}};
  ModelRunner runner(model, config);
  // The runner copied the frozen data: changing ours afterwards changes nothing.
  const MlpReference frozen(w1, b1, w2, b2);
  std::fill(w1.begin(), w1.end(), 0.f);
  const MlpReference original(*model);
  for (int i = 0; i < 50; ++i) {
    const std::vector<float> image = randomFloats(rng, 784, 0.f, 1.f);
    const std::vector<float> probs = floatsOf(runner.execute({{"image", constView(image)}}).at("probs"));
    ASSERT_NO_FATAL_FAILURE(expectNear(probs, frozen(image)));
    if (i == 0) {
      EXPECT_GT(std::abs(probs[0] - original(image)[0]) + std::abs(probs[1] - original(image)[1]), 1e-4f);
    }
  }
  ASSERT_EQ(runner.getExecuteInputs().size(), 1u);

  std::vector<float> short_w1(10);
  config.frozen_inputs = {{"w1", constView(short_w1)}};
  const Error error = captureError([&] { ModelRunner bad(model, config); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "frozen input 'w1': expected 401408 bytes, got 40");
}

TEST(ModelRunnerFeaturesTest, FrozenExecuteInputIsNoLongerAnExecuteInput) {
  auto model = exampleModel("conditional");
  const std::int32_t flag = 1;
  ModelRunnerConfig config;
  config.frozen_inputs = {{"flag", ConstTensorMemoryView(&flag, sizeof(flag))}};
  ModelRunner runner(model, config);
  ASSERT_EQ(runner.getExecuteInputs().size(), 1u);
  EXPECT_EQ(runner.getExecuteInputs()[0].name, "x");
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(floatsOf(runner.execute({{"x", constView(x)}}).at("y")),
            (std::vector<float>{2, 4, 6, 8, 10, 12, 14, 16}));
}

TEST(ModelRunnerFeaturesTest, FrozenInputFillsARemoteBufferAlsoAfterADeviceReset) {
  auto model = exampleModel("remote_buffer", 2);
  const std::vector<float> w = {1, 2, 3, 4, 5, 6, 7, 8};
  ModelRunnerConfig config;
  config.replication_factor = 2;
  config.auto_reset = true;
  config.frozen_inputs = {{"w", constView(w)}};
  ModelRunner runner(model, config);
  EXPECT_EQ(runner.getExecuteInputs().size(), 1u);  // x
  std::mt19937 rng(3);
  const auto expectXPlusW = [&](unsigned replica) {
    const std::vector<float> x = randomFloats(rng, 16);
    std::vector<float> expected(16);
    for (std::size_t i = 0; i < 16; ++i) expected[i] = x[i] + w[i % 8];
    EXPECT_EQ(floatsOf(runner.execute({{"x", constView(x)}}, replica).at("y")), expected) << "replica " << replica;
  };
  for (unsigned replica : {0u, 1u}) expectXPlusW(replica);
  // A device error resets the device and reloads the executable: the
  // remote buffer must come back with the frozen data, not the TensorData.
  runner.insertSimulatedError(hwsim::DeviceErrorCode::TileException, "fetch_w", 0);
  std::vector<float> x(16, 0.f);
  EXPECT_EQ(captureError([&] { runner.execute({{"x", constView(x)}}, 0); }).code(), ErrorCode::DeviceError);
  for (int i = 0; i < 3; ++i) expectXPlusW(0);
  expectXPlusW(1);

  std::vector<float> short_w(3);
  config.frozen_inputs = {{"w", constView(short_w)}};
  const Error error = captureError([&] { ModelRunner bad(model, config); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "frozen input 'w': expected 32 bytes, got 12");
}

TEST(ModelRunnerFeaturesTest, SaveProgramsWriteTheStateAfterDestruction) {
  std::mt19937 rng(9);
  for (unsigned replicas : {1u, 2u}) {
    std::vector<std::vector<float>> saved(replicas, std::vector<float>(4, -1.f));
    std::vector<std::vector<float>> sums(replicas, std::vector<float>(4, 0.f));
    ModelRunnerConfig config;
    config.replication_factor = replicas;
    config.run_save_programs = true;
    for (unsigned r = 0; r < replicas; ++r) config.replica_to_save_programs_outputs[r] = {{"acc_save", view(saved[r])}};
    {
      ModelRunner runner(exampleModel("stateful", 2), config);
      EXPECT_EQ(runner.getExecuteOutputs().size(), 1u);  // acc_out; acc_save is a Save output
      EXPECT_EQ(runner.getModelOutputs().size(), 2u);
      for (int i = 0; i < 100; ++i) {
        const unsigned r = static_cast<unsigned>(i) % replicas;
        const std::vector<float> x = randomFloats(rng, 8);
        for (int s = 0; s < 2; ++s) {
          for (int k = 0; k < 4; ++k) sums[r][k] += x[s * 4 + k];
        }
        const std::vector<float> acc = floatsOf(runner.execute({{"x", constView(x)}}, r).at("acc_out"));
        ASSERT_NO_FATAL_FAILURE(expectNear(acc, sums[r], 1e-4f));
      }
      EXPECT_EQ(saved[0], std::vector<float>(4, -1.f));  // not yet
    }
    for (unsigned r = 0; r < replicas; ++r) ASSERT_NO_FATAL_FAILURE(expectNear(saved[r], sums[r], 1e-4f));
  }
}

TEST(ModelRunnerFeaturesTest, WithoutRunSaveProgramsNothingIsSaved) {
  std::vector<float> saved(4, -1.f);
  ModelRunnerConfig config;
  config.replica_to_save_programs_outputs[0] = {{"acc_save", view(saved)}};
  {
    ModelRunner runner(exampleModel("stateful"), config);
    std::vector<float> x{1, 2, 3, 4};
    runner.execute({{"x", constView(x)}});
  }
  EXPECT_EQ(saved, std::vector<float>(4, -1.f));
  config.replica_to_save_programs_outputs[0] = {{"acc_out", view(saved)}};
  EXPECT_EQ(captureError([&] { ModelRunner runner(exampleModel("stateful"), config); }).code(), ErrorCode::NotFound);
}

TEST(ModelRunnerFeaturesTest, ConditionalRoutingFollowsTheFlag) {
  ModelRunner runner(exampleModel("conditional"));
  std::mt19937 rng(2);
  for (int i = 0; i < 500; ++i) {
    const std::vector<float> x = randomFloats(rng, 8, -10.f, 10.f);
    const std::int32_t flag = static_cast<std::int32_t>(rng() % 3);  // 0, 1 or 2
    const std::vector<float> y =
        floatsOf(runner.execute({{"x", constView(x)}, {"flag", ConstTensorMemoryView(&flag, sizeof(flag))}}).at("y"));
    for (int k = 0; k < 8; ++k) ASSERT_EQ(y[k], flag != 0 ? 2 * x[k] : x[k] - 1) << "flag " << flag;
  }
  const std::int64_t wide_flag = 1;
  std::vector<float> x(8);
  const Error error = captureError(
      [&] { runner.execute({{"x", constView(x)}, {"flag", ConstTensorMemoryView(&wide_flag, sizeof(wide_flag))}}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "input 'x': holds 1 batches but input 'flag' holds 2");
}

// A batch-4 model given single samples only runs when a timeout pads the
// batch with dummy data.
TEST(ModelRunnerFeaturesTest, TimeoutFlushesDummyDataSoThePartialBatchRuns) {
  ModelRunnerConfig config;
  config.batching_dim = 0;
  config.timeout_ns = 20ms;
  config.flush_on_waiting_outputs = true;
  std::atomic<int> flushes{0};
  std::string waited_for;
  config.flush_callback = [&](const std::string &tensor_id, const InputMemoryView *&, const OutputMemoryView *&) {
    if (flushes++ == 0) waited_for = tensor_id;
  };
  ModelRunner runner(exampleModel("add_one", 4), config);
  std::mt19937 rng(4);
  for (int i = 0; i < 3; ++i) {
    const std::vector<float> x = randomFloats(rng, 16);
    OutputMemory out = runner.execute({{"x", constView(x)}});
    // One sample of a batch of 4 completes only through a flush. (Not timed:
    // the device may have waited out the timeout before the request came,
    // when this thread was descheduled, and then flushes at once.)
    EXPECT_GE(flushes.load(), i + 1);
    EXPECT_EQ(floatsOf(out.at("y")), plusOne(x));
  }
  EXPECT_GE(flushes.load(), 3);
  EXPECT_EQ(waited_for, "x");
}

TEST(ModelRunnerFeaturesTest, FlushOnWaitingOutputsLeavesAnIdleDeviceAlone) {
  ModelRunnerConfig config;
  config.timeout_ns = 5ms;
  config.flush_on_waiting_outputs = true;
  std::atomic<int> flushes{0};
  config.flush_callback = [&](const std::string &, const InputMemoryView *&, const OutputMemoryView *&) { ++flushes; };
  ModelRunner runner(exampleModel("add_one"), config);
  std::this_thread::sleep_for(50ms);  // idle: nobody waits for outputs
  EXPECT_EQ(flushes.load(), 0);
  std::map<std::string, double> counts;
  runner.getMonitoringStatisticsTotalCount(counts);
  EXPECT_EQ(counts.at("request_monitoring_statistics_count"), 0.0);
}

TEST(ModelRunnerFeaturesTest, WithoutFlushOnWaitingOutputsTheIdleDeviceRunsDummyData) {
  ModelRunnerConfig config;
  config.timeout_ns = 5ms;
  std::atomic<int> flushes{0};
  config.flush_callback = [&](const std::string &, const InputMemoryView *&, const OutputMemoryView *&) { ++flushes; };
  ModelRunner runner(exampleModel("add_one"), config);
  while (flushes.load() < 3) std::this_thread::sleep_for(1ms);
  std::vector<float> x(16, 3.f);
  EXPECT_EQ(floatsOf(runner.execute({{"x", constView(x)}}).at("y")), plusOne(x));
}

// A runner nobody sends requests has not started its device thread
// (Replica::start); the watchdog starts it ahead of the idle device's first
// timeout, which then comes on time: 300 ms, between the watchdog's ticks
// of 250 ms (a thread started only at the tick after the timeout would
// flush at 500 ms at the earliest).
TEST(ModelRunnerFeaturesTest, AnIdleRunnersFirstFlushComesAtItsTimeout) {
  ModelRunnerConfig config;
  config.timeout_ns = 300ms;
  std::atomic<std::chrono::steady_clock::time_point> first_flush{};
  config.flush_callback = [&](const std::string &, const InputMemoryView *&, const OutputMemoryView *&) {
    std::chrono::steady_clock::time_point none{};
    first_flush.compare_exchange_strong(none, std::chrono::steady_clock::now());
  };
  const auto before = std::chrono::steady_clock::now();
  ModelRunner runner(exampleModel("add_one"), config);
  // The watchdog's ticks count from within the construction.
  const auto created = std::chrono::steady_clock::now();
  ASSERT_TRUE(test::eventually([&] { return first_flush.load() != std::chrono::steady_clock::time_point{}; }));
  EXPECT_GE(first_flush.load() - before, 300ms);
  EXPECT_LT(first_flush.load() - created, 490ms);
}

// Regression: a timeout flush on the device thread met a full output ring
// and blocked in OutputQueue::flush - forever, since that thread is the one
// that drains the ring - while holding the replica's producer mutex, so every
// later request hung. Made deterministic: one-entry rings (multiplier 1,
// batch 1) and a flush_callback that names only the output queue, so while
// the idle device waits for input, the first flush fills the output ring
// with padding nobody drains and the second finds it full. It must be put
// off, not waited for: a request submitted afterwards gets through.
TEST(ModelRunnerFeaturesTest, TimeoutFlushNeverBlocksOnAFullRingWhileHoldingTheReplica) {
  ModelRunnerConfig config;
  config.timeout_ns = 2ms;
  config.flush_on_waiting_outputs = false;
  config.ring_buffer_size_multiplier = 1;
  std::vector<float> sink(16);
  const OutputMemoryView only_output{{"y", TensorMemoryView(sink.data(), sink.size() * sizeof(float))}};
  std::atomic<int> flushes{0};
  config.flush_callback = [&](const std::string &, const InputMemoryView *&, const OutputMemoryView *&outputs) {
    outputs = &only_output;
    ++flushes;
  };
  auto runner = std::make_unique<ModelRunner>(exampleModel("add_one"), config);
  while (flushes.load() < 2) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(20ms);  // several more periods: the put-off flush is retried, never waited for

  std::vector<float> x(16, 1.f), y(16);
  auto submitted = std::async(std::launch::async, [&] {
    return runner->executeAsync({{"x", constView(x)}}, {{"y", TensorMemoryView(y.data(), y.size() * sizeof(float))}});
  });
  const bool got_through = submitted.wait_for(10s) == std::future_status::ready;
  if (!got_through) runner.reset();  // disconnects the rings, which frees the blocked flush
  ASSERT_TRUE(got_through) << "executeAsync blocked on the replica held by the device thread's flush";
  const OutputFutureMemoryView futures = submitted.get();
  EXPECT_EQ(flushes.load(), 2);  // the put-off flush is retried without asking flush_callback again
  // The request's output sits behind the padding the callback asked for, so
  // it is still waiting when the runner goes, and destruction resolves it.
  runner.reset();
  ASSERT_EQ(futures.at("y").wait_for(5s), std::future_status::ready);
  const ErrorCode code = futures.at("y").completion()->code();
  EXPECT_TRUE(code == ErrorCode::Cancelled || code == ErrorCode::Ok) << static_cast<int>(code);
}

// Device errors in the middle of a stream of async requests.
struct StreamOutcome {
  int ok = 0;
  int device_errors = 0;
  int other = 0;
};

StreamOutcome streamWithError(ModelRunner &runner, int requests, int error_at) {
  std::vector<std::vector<float>> xs;
  std::mt19937 rng(static_cast<unsigned>(error_at));
  for (int i = 0; i < requests; ++i) xs.push_back(randomFloats(rng, 16));
  std::vector<std::shared_ptr<Completion>> completions;
  std::vector<OutputFutureMemory> futures;
  StreamOutcome outcome;
  for (int i = 0; i < requests; ++i) {
    if (i == error_at) runner.insertSimulatedError(hwsim::DeviceErrorCode::TileException, "Add");
    try {
      futures.push_back(runner.executeAsync({{"x", constView(xs[i])}}));
    } catch (const Error &error) {
      futures.emplace_back();
      ++(error.code() == ErrorCode::DeviceError ? outcome.device_errors : outcome.other);
    }
  }
  for (int i = 0; i < requests; ++i) {
    if (futures[i].empty()) continue;
    const auto &future = futures[i].at("y");
    EXPECT_EQ(future.wait_for(10s), std::future_status::ready) << "request " << i << " hangs";
    switch (future.completion()->code()) {
      case ErrorCode::Ok:
        ++outcome.ok;
        EXPECT_EQ(floatsOf(future.get()), plusOne(xs[i]));
        break;
      case ErrorCode::DeviceError:
        ++outcome.device_errors;
        EXPECT_NE(future.completion()->message().find("TILE_EXCEPTION"), std::string::npos)
            << future.completion()->message();
        break;
      default:
        ++outcome.other;
        ADD_FAILURE() << future.completion()->message();
    }
  }
  return outcome;
}

TEST(ModelRunnerFeaturesTest, AutoResetRecoversFromDeviceErrorsMidStream) {
  ModelRunnerConfig config;
  config.auto_reset = true;
  ModelRunner runner(exampleModel("add_one"), config);
  for (int round = 0; round < 5; ++round) {
    const StreamOutcome outcome = streamWithError(runner, 400, 100 + 50 * round);
    EXPECT_EQ(outcome.ok + outcome.device_errors, 400);
    EXPECT_GE(outcome.device_errors, 1);
    EXPECT_EQ(outcome.other, 0);
    // Serving goes on.
    std::vector<float> x(16, 9.f);
    EXPECT_EQ(floatsOf(runner.execute({{"x", constView(x)}}).at("y")), plusOne(x));
  }
}

TEST(ModelRunnerFeaturesTest, WithoutAutoResetPendingAndLaterRequestsFail) {
  ModelRunner runner(exampleModel("add_one"));
  const StreamOutcome outcome = streamWithError(runner, 300, 100);
  EXPECT_EQ(outcome.ok + outcome.device_errors, 300);
  EXPECT_GE(outcome.device_errors, 1);
  std::vector<float> x(16, 9.f);
  const Error error = captureError([&] { runner.execute({{"x", constView(x)}}); });
  EXPECT_EQ(error.code(), ErrorCode::DeviceError);
  EXPECT_NE(std::string(error.what()).find("out of service"), std::string::npos) << error.what();
  EXPECT_NE(std::string(error.what()).find("TILE_EXCEPTION"), std::string::npos) << error.what();
  EXPECT_EQ(captureError([&] { runner.insertSimulatedError(hwsim::DeviceErrorCode::TileException, "nope"); }).code(),
            ErrorCode::NotFound);
}

}  // namespace
}  // namespace mrt::runner_test

namespace mrt {
namespace {

using namespace runner_test;

// On a model with IO tiles each replica prepares the next request's input
// while the current one computes (max_look_ahead "unlimited"); requests in
// flight, one at a time and after an idle pause all come back right, and a
// limit of 0 serves the same.
TEST(ModelRunnerFeaturesTest, InputsPreparedAheadOnIoTilesServeEveryRequest) {
  const auto model = popef::withEngineOptions(*exampleModel("add_one"), {{"exchange.numIOTiles", "32"}});
  for (const char *look_ahead : {"unlimited", "0"}) {
    ModelRunnerConfig config;
    config.max_look_ahead = look_ahead;
    ModelRunner runner(model, config);
    std::mt19937 rng(5);
    for (int wave = 0; wave < 20; ++wave) {
      constexpr int kInFlight = 8;
      std::vector<std::vector<float>> xs, ys(kInFlight, std::vector<float>(16));
      std::vector<OutputFutureMemoryView> futures;
      for (int i = 0; i < kInFlight; ++i) {
        xs.push_back(randomFloats(rng, 16, -5.f, 5.f));
        futures.push_back(runner.executeAsync({{"x", constView(xs.back())}}, {{"y", view(ys[i])}}));
      }
      for (int i = 0; i < kInFlight; ++i) {
        futures[i].at("y").get();
        for (int k = 0; k < 16; ++k) ASSERT_EQ(ys[i][k], xs[i][k] + 1) << look_ahead << " wave " << wave << " request " << i;
      }
      const std::vector<float> x = randomFloats(rng, 16, -5.f, 5.f);
      const std::vector<float> y = floatsOf(runner.execute({{"x", constView(x)}}).at("y"));
      for (int k = 0; k < 16; ++k) ASSERT_EQ(y[k], x[k] + 1) << look_ahead << " wave " << wave;
    }
  }
}

}  // namespace
}  // namespace mrt
