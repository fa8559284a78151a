// mrt::ModelRunner, mrt::Future and mrt::TensorMemory: add_one and mlp
// against reference math, sync and async (std::future and raw futures),
// library-allocated outputs, errors that leave the runner serving, callbacks
// freed exactly once, moves and destruction with requests in flight.
#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "cxx_test_util.hpp"

namespace {

using mrt_cxx_test::expectNear;
using mrt_cxx_test::kAddOneN;
using mrt_cxx_test::kClasses;
using mrt_cxx_test::kImage;
using mrt_cxx_test::LiveCounter;
using mrt_cxx_test::mlpReference;
using mrt_cxx_test::modelPath;
using mrt_cxx_test::randomFloats;

TEST(CxxRunner, DescribesInputsAndOutputs) {
  mrt::ModelRunner runner(modelPath("mlp"));
  const auto inputs = runner.getExecuteInputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].name, "image");
  EXPECT_EQ(inputs[0].size_in_bytes, int64_t(kImage * sizeof(float)));
  EXPECT_EQ(inputs[0].shape, (std::vector<int64_t>{1, int64_t(kImage)}));
  EXPECT_EQ(inputs[0].data_type, mrt::DataType::F32);
  const auto outputs = runner.getExecuteOutputs();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0].name, "probs");
  EXPECT_EQ(runner.getModelInputs().size(), 5u);  // image and the four weights
  EXPECT_EQ(runner.getModelOutputs().size(), 1u);
}

TEST(CxxRunner, AddOneSyncMatchesReference) {
  mrt::ModelRunner runner(modelPath("add_one"));
  for (unsigned request = 0; request < 200; ++request) {
    const auto x = randomFloats(kAddOneN, request);
    std::vector<float> y(kAddOneN);
    runner.execute({{"x", x}}, {{"y", y}});
    for (std::size_t i = 0; i < kAddOneN; ++i) ASSERT_FLOAT_EQ(y[i], x[i] + 1.0f);
  }
  EXPECT_GE(runner.getMonitoringStatisticsTotalCount().request_us, 200.0);
  EXPECT_GT(runner.getTimeTrace().request_us, 0.0);
}

TEST(CxxRunner, MlpSyncAsyncAndAllocatedOutputsMatchReference) {
  mrt::Model model(modelPath("mlp"));
  mrt::ModelRunner runner(model);
  model.close();  // the runner keeps what it needs
  mrt::Model weights(modelPath("mlp"));
  for (unsigned request = 0; request < 4; ++request) {
    const auto image = randomFloats(kImage, 100 + request, 0.0f, 1.0f);
    const auto expected = mlpReference(weights, image);

    std::vector<float> sync(kClasses);
    runner.execute({{"image", image}}, {{"probs", sync}});
    expectNear(sync, expected, 1e-5);

    float async[kClasses] = {};
    std::future<void> done = runner.executeAsync({{"image", image}}, {{"probs", async}});
    done.get();
    expectNear(std::vector<float>(async, async + kClasses), expected, 1e-5);

    mrt::TensorMemory memory = runner.execute({{"image", image}});
    ASSERT_EQ(memory.size(), 1u);
    EXPECT_EQ(memory[0].name, "probs");
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory[0].bytes.data()) % 64, 0u);
    expectNear(memory.as<float>("probs"), expected, 1e-5);

    std::future<mrt::TensorMemory> pending = runner.executeAsync({{"image", image}});
    mrt::TensorMemory later = pending.get();
    expectNear(later.find("probs").as<float>(), expected, 1e-5);
    EXPECT_MRT_ERROR(later.find("logits"), MRT_NOT_FOUND, "logits");
  }
}

TEST(CxxRunner, WrongNameOrSizeThrowsAndTheRunnerServesOn) {
  mrt::ModelRunner runner(modelPath("add_one"));
  std::vector<float> x(kAddOneN, 1.0f), y(kAddOneN), small(kAddOneN - 1);
  EXPECT_MRT_ERROR(runner.execute({{"x", x}, {"nope", x}}, {{"y", y}}), MRT_NOT_FOUND, "unknown input 'nope'");
  EXPECT_MRT_ERROR(runner.execute({{"nope", x}}, {{"y", y}}), MRT_NOT_FOUND, "unknown input 'nope'");
  EXPECT_MRT_ERROR(runner.execute({{"x", small}}, {{"y", y}}), MRT_INVALID_ARGUMENT, "60");
  EXPECT_MRT_ERROR(runner.executeAsync({{"x", x}}, {{"y", small}}), MRT_INVALID_ARGUMENT, "");
  EXPECT_MRT_ERROR(runner.execute({{"x", x}}, {{"y", y}}, 7), MRT_INVALID_ARGUMENT, "7");
  runner.execute({{"x", x}}, {{"y", y}});
  EXPECT_FLOAT_EQ(y[0], 2.0f);
}

TEST(CxxRunner, FailedRequestsSurfaceThroughTheFuture) {
  mrt::ModelRunnerConfig config;
  config.auto_reset = true;
  mrt::ModelRunner runner(modelPath("add_one"), config);
  std::vector<float> x(kAddOneN, 3.0f), y(kAddOneN);
  runner.insertSimulatedError(mrt::SimulatedError::TILE_EXCEPTION, "Add");
  std::future<void> failed = runner.executeAsync({{"x", x}}, {{"y", y}});
  try {
    failed.get();
    FAIL() << "the request did not fail";
  } catch (const mrt::Error &e) {
    EXPECT_EQ(e.code(), MRT_DEVICE_ERROR);
    EXPECT_NE(std::string(e.what()).find("TILE_EXCEPTION"), std::string::npos) << e.what();
  }
  EXPECT_MRT_ERROR(runner.insertSimulatedError(mrt::SimulatedError::TILE_EXCEPTION, "NoSuchStep"), MRT_NOT_FOUND,
                   "NoSuchStep");
  runner.execute({{"x", x}}, {{"y", y}});  // auto_reset: served again
  EXPECT_FLOAT_EQ(y[0], 4.0f);
}

// The raw future: waits, status, and on_ready callbacks freed once each.
TEST(CxxRunner, RawFuturesAndReadyCallbacks) {
  std::atomic<int> live{0};
  std::mutex mutex;
  std::vector<mrt_status> statuses;
  {
    mrt::ModelRunner runner(modelPath("add_one"));
    std::vector<float> x(kAddOneN, 5.0f), y(kAddOneN);
    mrt::Future future = runner.submit({{"x", x}}, {{"y", y}});
    {
      LiveCounter counter(live);
      future.onReady([counter, &mutex, &statuses](mrt_status s) {
        std::lock_guard<std::mutex> lock(mutex);
        statuses.push_back(s);
      });
    }
    EXPECT_TRUE(future.waitFor(std::chrono::seconds(10)));
    future.wait();
    EXPECT_TRUE(future.isReady());
    EXPECT_EQ(future.status(), MRT_OK);
    EXPECT_EQ(future.errorMessage(), "");
    EXPECT_FLOAT_EQ(y[3], 6.0f);
    {
      LiveCounter counter(live);  // registered when ready: runs at once, here
      future.onReady([counter, &mutex, &statuses](mrt_status s) {
        std::lock_guard<std::mutex> lock(mutex);
        statuses.push_back(s);
      });
    }
    mrt::Future moved = std::move(future);
    EXPECT_MRT_ERROR(future.status(), MRT_FAILED_PRECONDITION, "mrt::Future");  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(moved.status(), MRT_OK);
  }
  // The runner and its device threads are gone: every callback has run.
  EXPECT_EQ(live.load(), 0);
  ASSERT_EQ(statuses.size(), 2u);
  EXPECT_EQ(statuses[0], MRT_OK);
  EXPECT_EQ(statuses[1], MRT_OK);
}

// Destroying a runner with requests queued cancels them: each std::future
// reports MRT_CANCELLED (or succeeded if it ran first), none is left broken.
TEST(CxxRunner, DestroyingTheRunnerCompletesPendingFutures) {
  mrt::ModelRunnerConfig config;
  config.timeout_ns = std::chrono::nanoseconds(MRT_FOREVER);
  mrt::ModelRunner runner(modelPath("add_one"), config);
  constexpr int kRequests = 16;
  std::vector<std::vector<float>> xs(kRequests, std::vector<float>(kAddOneN, 1.0f));
  std::vector<std::vector<float>> ys(kRequests, std::vector<float>(kAddOneN));
  std::vector<std::future<void>> futures;
  for (int r = 0; r < kRequests; ++r) futures.push_back(runner.executeAsync({{"x", xs[r]}}, {{"y", ys[r]}}));
  mrt::ModelRunner moved = std::move(runner);
  EXPECT_MRT_ERROR(runner.execute({{"x", xs[0]}}, {{"y", ys[0]}}), MRT_FAILED_PRECONDITION,  // NOLINT
                   "mrt::ModelRunner: used after it was moved from or closed");
  moved.close();
  int done = 0, cancelled = 0;
  for (int r = 0; r < kRequests; ++r) {
    try {
      futures[r].get();
      EXPECT_FLOAT_EQ(ys[r][0], 2.0f);
      ++done;
    } catch (const mrt::Error &e) {
      EXPECT_EQ(e.code(), MRT_CANCELLED) << e.what();
      ++cancelled;
    }
  }
  EXPECT_EQ(done + cancelled, kRequests);
}

// A flush callback given in the config is freed exactly once, with the runner.
TEST(CxxRunner, ConfigCallbackIsFreedWithTheRunner) {
  std::atomic<int> live{0};
  {
    mrt::ModelRunnerConfig config;
    {
      LiveCounter counter(live);
      config.flush_callback = [counter](std::string_view) {};
    }
    mrt::ModelRunner runner(modelPath("add_one"), config);
    config.flush_callback = nullptr;
    EXPECT_EQ(live.load(), 1) << "the runner holds its own copy";
    std::vector<float> x(kAddOneN), y(kAddOneN);
    runner.execute({{"x", x}}, {{"y", y}});
  }
  EXPECT_EQ(live.load(), 0);
  // Also when creation fails.
  {
    mrt::ModelRunnerConfig config;
    config.replication_factor = 64;  // more replicas than the system has IPUs
    {
      LiveCounter counter(live);
      config.flush_callback = [counter](std::string_view) {};
    }
    EXPECT_THROW(mrt::ModelRunner(modelPath("add_one"), config), mrt::Error);
  }
  EXPECT_EQ(live.load(), 0);
}

// flush_select_callback pads only what it adds: with only y padded, the
// device never runs on padding, so a request's own output entry sits behind
// the padded one and the request is still pending when the runner goes.
// Setting both flush callbacks is refused.
TEST(CxxRunner, FlushSelectCallbackChoosesTheQueuesPadded) {
  mrt::ModelRunnerConfig config;
  config.timeout_ns = std::chrono::milliseconds(2);
  config.ring_buffer_size_multiplier = 1;
  std::atomic<int> calls{0};
  config.flush_select_callback = [&calls](std::string_view tensor_id, mrt::FlushSelection &selection) {
    if (tensor_id == "x") selection.addOutput("y");
    ++calls;
  };
  auto runner = std::make_unique<mrt::ModelRunner>(modelPath("add_one"), config);
  while (calls.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<float> x(kAddOneN), y(kAddOneN);
  std::future<void> pending = runner->executeAsync({{"x", x}}, {{"y", y}});
  EXPECT_EQ(pending.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  runner.reset();
  EXPECT_EQ(pending.wait_for(std::chrono::seconds(0)), std::future_status::ready);

  config.flush_callback = [](std::string_view) {};
  EXPECT_MRT_ERROR(mrt::ModelRunner(modelPath("add_one"), config), MRT_INVALID_ARGUMENT,
                   "flush_select_callback are both set");
}

// With thread_safe, client threads execute concurrently on two replicas.
TEST(CxxRunner, ClientThreadsOnTwoReplicas) {
  mrt::ModelRunnerConfig config;
  config.thread_safe = true;
  config.replication_factor = 2;
  mrt::ModelRunner runner(modelPath("add_one"), config);
  constexpr unsigned kThreads = 4, kRequests = 100;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (unsigned r = 0; r < kRequests; ++r) {
        const auto x = randomFloats(kAddOneN, t * 1000 + r);
        std::vector<float> y(kAddOneN);
        if (r % 2 == 0) {
          runner.execute({{"x", x}}, {{"y", y}}, t % 2);
        } else {
          runner.executeAsync({{"x", x}}, {{"y", y}}, t % 2).get();
        }
        for (std::size_t i = 0; i < kAddOneN; ++i) wrong += y[i] != x[i] + 1.0f;
      }
    });
  }
  for (auto &thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(runner.getMonitoringStatisticsTotalCount(0).request_us + runner.getMonitoringStatisticsTotalCount(1).request_us,
            double(kThreads * kRequests));
}

}  // namespace

// Views borrow their names: a std::string name is not copied, and a
// temporary one (which would dangle) does not compile.
static_assert(!std::is_constructible_v<mrt::ConstTensorView, std::string, const std::vector<float> &>);
static_assert(!std::is_constructible_v<mrt::TensorView, std::string, std::vector<float> &>);
TEST(CxxRunner, ViewsBorrowTheirNames) {
  const std::string name = "x";
  std::vector<float> x(kAddOneN, 1.0f), y(kAddOneN);
  const mrt::ConstTensorView in(name, x);
  EXPECT_EQ(in.name, name.c_str());
  EXPECT_EQ(in.size_bytes, kAddOneN * sizeof(float));
  mrt::ModelRunner runner(modelPath("add_one"));
  runner.execute(mrt::Span<const mrt::ConstTensorView>(&in, 1), {{std::string("y").c_str(), y}});
  EXPECT_EQ(y[0], 2.0f);
}

namespace {

// A Main that copies its input stream 4 times per run (a Repeat), with rings
// of 2 transfers: a client finding them full must not run Main itself (the
// run would wait for transfers only that client would push), so the device
// thread serves, and every request gets x + 1, with no timeout to pad a run.
TEST(CxxRunner, AMainReadingItsStreamSeveralTimesPerRunServesClientsAtFullQueues) {
  constexpr int kLength = 16, kRequests = 8;
  mrt::Graph graph(mrt::Target::named("gc200", 1));
  mrt::Program main = graph.sequence({}, "main");
  mrt::Tensor x = graph.addVariable(mrt::DataType::F32, {1, kLength}, "x");
  graph.mapLinearly(x);
  mrt::Tensor one = graph.addConstantFilled(mrt::DataType::F32, {1}, 1.0, "one");
  graph.setTileMapping(one, 0);
  mrt::Program body = graph.sequence({}, "body");
  graph.add(body, graph.copy(graph.addHostToDeviceFIFO("x", mrt::DataType::F32, kLength), x));
  graph.binaryInPlace(body, "Add", x, one);
  graph.add(body, graph.copy(x, graph.addDeviceToHostFIFO("y", mrt::DataType::F32, kLength)));
  graph.add(main, graph.repeat(4, body));
  mrt::ModelBuilder builder("repeat4", graph.compile({main}));
  builder.setProgramName(0, "main");
  builder.setProgramFlow(mrt::ProgramPhase::Main, {0});
  builder.addAnchor({"x", "x", {1, kLength}, {0}, false, mrt::DataSource::NONE});
  builder.addAnchor({"y", "y", {1, kLength}, {0}, false, mrt::DataSource::NONE});
  mrt::ModelRunnerConfig config;
  config.timeout_ns = std::chrono::nanoseconds(-1);
  mrt::ModelRunner runner(builder.build(), config);
  for (int round = 0; round < 10; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the device thread sleeps
    std::vector<std::vector<float>> xs(kRequests), ys(kRequests, std::vector<float>(kLength));
    std::vector<std::future<void>> done;
    for (int i = 0; i < kRequests; ++i) {
      xs[i] = randomFloats(kLength, static_cast<unsigned>(round * kRequests + i));
      done.push_back(runner.executeAsync({{"x", xs[i]}}, {{"y", ys[i]}}));
    }
    for (int i = 0; i < kRequests; ++i) {
      ASSERT_EQ(done[i].wait_for(std::chrono::seconds(10)), std::future_status::ready) << round << " " << i;
      done[i].get();
      for (int k = 0; k < kLength; ++k) EXPECT_EQ(ys[i][k], xs[i][k] + 1.0f) << round << " " << i << " " << k;
    }
  }
}

}  // namespace
