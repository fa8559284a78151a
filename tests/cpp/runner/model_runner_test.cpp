// ModelRunner, single client thread: descriptions, execute and executeAsync
// (library-allocated and caller-provided outputs) against reference math on
// add_one and mlp with 1 and 2 replicas, whole multiples of the model batch,
// argument errors that leave the runner serving, loading from a file,
// creation that waits for no other thread, and destruction with requests in
// flight.
#include <sys/resource.h>

#include <filesystem>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "popef/writer.hpp"
#include "runner_test_util.hpp"

namespace mrt::runner_test {
namespace {

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

ModelRunnerConfig replicas(unsigned count) {
  ModelRunnerConfig config;
  config.replication_factor = count;
  return config;
}

TEST(ModelRunnerTest, DescribesExecuteAndModelTensors) {
  ModelRunner runner(exampleModel("mlp", 2));
  const std::vector<InputDesc> inputs = runner.getExecuteInputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0], DataDesc("image", 2 * 784 * 4, {2, 784}, popef::DataType::F32, false));
  const std::vector<OutputDesc> outputs = runner.getExecuteOutputs();
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_EQ(outputs[0], DataDesc("probs", 2 * 10 * 4, {2, 10}, popef::DataType::F32, false));

  std::vector<std::string> model_inputs;
  for (const InputDesc &desc : runner.getModelInputs()) {
    model_inputs.push_back(desc.name);
    EXPECT_EQ(desc.popef_contains_tensor_data, desc.name != "image") << desc.name;
  }
  EXPECT_EQ(model_inputs, (std::vector<std::string>{"b1", "b2", "image", "w1", "w2"}));
  ASSERT_EQ(runner.getModelOutputs().size(), 1u);
  EXPECT_EQ(runner.model()->metadata.executable(), "mlp");
  EXPECT_EQ(runner.config().replication_factor, 1u);
  EXPECT_EQ(runner.config().timeout_ns, std::chrono::seconds(5));
}

TEST(ModelRunnerTest, AddOneSyncLibraryAndCallerOutputsOnOneAndTwoReplicas) {
  for (unsigned count : {1u, 2u}) {
    ModelRunner runner(exampleModel("add_one"), replicas(count));
    std::mt19937 rng(count);
    for (int i = 0; i < 2000; ++i) {
      const std::vector<float> x = randomFloats(rng, 16, -100.f, 100.f);
      const unsigned replica = static_cast<unsigned>(i) % count;
      if (i % 2 == 0) {
        OutputMemory out = runner.execute({{"x", constView(x)}}, replica);
        ASSERT_EQ(out.size(), 1u);
        ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(out.at("y")), plusOne(x), 0.f));
      } else {
        std::vector<float> y(16, -7.f);
        runner.execute({{"x", constView(x)}}, {{"y", view(y)}}, replica);
        ASSERT_NO_FATAL_FAILURE(expectNear(y, plusOne(x), 0.f));
      }
    }
  }
}

// 1 MiB and 16 MiB tensors (add_one spread over tiles) through the runner,
// with library-allocated and caller outputs, sync and async.
TEST(ModelRunnerTest, LargeAddOneTensorsGoThroughTheRunner) {
  for (const std::size_t bytes : {std::size_t{1} << 20, std::size_t{16} << 20}) {
    SCOPED_TRACE(bytes);
    const std::size_t n = bytes / sizeof(float);
    ModelRunner runner(exampleModel("add_one", 1, n));
    std::mt19937 rng(static_cast<unsigned>(bytes));
    const int requests = bytes > (std::size_t{1} << 20) ? 1 : 3;  // keeps it short under sanitizers
    for (int i = 0; i < requests; ++i) {
      const std::vector<float> x = randomFloats(rng, n, -100.f, 100.f);
      const std::vector<float> want = plusOne(x);
      ASSERT_EQ(floatsOf(runner.execute({{"x", constView(x)}}).at("y")), want);
      std::vector<float> y(n, -7.f);
      runner.executeAsync({{"x", constView(x)}}, {{"y", view(y)}}).at("y").get();
      ASSERT_EQ(y, want);
    }
  }
}

TEST(ModelRunnerTest, AddOneAsyncManyInFlight) {
  for (unsigned count : {1u, 2u}) {
    ModelRunner runner(exampleModel("add_one", 2), replicas(count));
    std::mt19937 rng(10 + count);
    constexpr int kWave = 64;
    for (int wave = 0; wave < 40; ++wave) {
      std::vector<std::vector<float>> xs, ys;
      std::vector<OutputFutureMemoryView> caller;
      std::vector<OutputFutureMemory> library;
      for (int i = 0; i < kWave; ++i) xs.push_back(randomFloats(rng, 32));
      ys.assign(kWave, std::vector<float>(32));
      for (int i = 0; i < kWave; ++i) {
        const unsigned replica = static_cast<unsigned>(i) % count;
        if (i % 2) {
          caller.push_back(runner.executeAsync({{"x", constView(xs[i])}}, {{"y", view(ys[i])}}, replica));
        } else {
          library.push_back(runner.executeAsync({{"x", constView(xs[i])}}, replica));
        }
      }
      for (int i = 0, c = 0, l = 0; i < kWave; ++i) {
        if (i % 2) {
          const OutputFuture<TensorMemoryView> &future = caller[c++].at("y");
          ASSERT_TRUE(future.valid());
          EXPECT_EQ(future.get().data, ys[i].data());
          ASSERT_TRUE(future.completion()->isReady());
          ASSERT_NO_FATAL_FAILURE(expectNear(ys[i], plusOne(xs[i]), 0.f));
        } else {
          ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(library[l++].at("y").get()), plusOne(xs[i]), 0.f));
        }
      }
    }
  }
}

TEST(ModelRunnerTest, WholeMultiplesOfTheModelBatchAreSplitAcrossRuns) {
  ModelRunner runner(exampleModel("add_one", 2));
  std::mt19937 rng(3);
  for (int i = 0; i < 300; ++i) {
    const std::size_t batches = 1 + static_cast<std::size_t>(i % 3);  // 1 to 3x the model batch
    const std::vector<float> x = randomFloats(rng, batches * 2 * 16);
    OutputMemory out = runner.execute({{"x", constView(x)}});
    ASSERT_EQ(out.at("y").data_size_bytes, x.size() * sizeof(float));
    ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(out.at("y")), plusOne(x), 0.f));
  }
}

constexpr int kMlpRequests = kFullSpeedBuild ? 1000 : 150;

TEST(ModelRunnerTest, MlpMatchesReferenceSyncAndAsyncOnOneAndTwoReplicas) {
  auto model = exampleModel("mlp");
  const MlpReference reference(*model);
  for (unsigned count : {1u, 2u}) {
    ModelRunner runner(model, replicas(count));
    std::mt19937 rng(20 + count);
    for (int i = 0; i < kMlpRequests; ++i) {
      const std::vector<float> image = randomFloats(rng, 784, 0.f, 1.f);
      OutputMemory out = runner.execute({{"image", constView(image)}}, static_cast<unsigned>(i) % count);
      ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(out.at("probs")), reference(image)));
    }
    std::vector<std::vector<float>> images;
    std::vector<OutputFutureMemory> futures;
    for (int i = 0; i < kMlpRequests; ++i) images.push_back(randomFloats(rng, 784, 0.f, 1.f));
    for (int i = 0; i < kMlpRequests; ++i) {
      futures.push_back(runner.executeAsync({{"image", constView(images[i])}}, static_cast<unsigned>(i) % count));
    }
    for (int i = 0; i < kMlpRequests; ++i) {
      ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(futures[i].at("probs").get()), reference(images[i])));
    }
  }
}

// Under ThreadSanitizer pthread_create waits until the new thread runs: a
// voluntary context switch per device thread started, whoever loads.
#if defined(__SANITIZE_THREAD__)
constexpr long kSwitchesPerThreadStart = 1;
#else
constexpr long kSwitchesPerThreadStart = 0;
#endif

// The creating thread runs a single replica's Load programs itself: the
// constructor waits for no other thread (beside busy processes each such
// wait costs a time slice). Counted as the creating thread's voluntary
// context switches, which waiting for the device thread's Load made one per
// creation; a few may come from a lock met by chance. Whether the model is
// loaded all the same: the other tests' results.
TEST(ModelRunnerTest, ASingleReplicaIsCreatedWithoutWaitingForItsDeviceThread) {
  auto model = exampleModel("mlp");
  const MlpReference reference(*model);
  constexpr int kRunners = 20;
  long waits = 0;
  for (int i = 0; i < kRunners; ++i) {
    rusage before{}, after{};
    ::getrusage(RUSAGE_THREAD, &before);
    std::optional<ModelRunner> runner(std::in_place, model);
    ::getrusage(RUSAGE_THREAD, &after);
    waits += after.ru_nvcsw - before.ru_nvcsw;
    const std::vector<float> image(784, 0.5f);
    ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(runner->execute({{"image", constView(image)}}).at("probs")),
                                       reference(image)));
  }
  EXPECT_LE(waits, kRunners * kSwitchesPerThreadStart + kRunners / 4)
      << "voluntary context switches of the creating thread in " << kRunners << " creations";
}

TEST(ModelRunnerTest, BadArgumentsGiveClearErrorsAndTheRunnerKeepsServing) {
  ModelRunner runner(exampleModel("add_one"), replicas(2));
  std::vector<float> x(16, 1.f), y(16), short_x(15);
  std::vector<float> long_y(17);

  Error error = captureError([&] { runner.execute({{"z", constView(x)}}); });
  EXPECT_EQ(error.code(), ErrorCode::NotFound);
  EXPECT_STREQ(error.what(), "unknown input 'z': execute inputs are x (missing: x)");

  error = captureError([&] { runner.execute(InputMemoryView{}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "missing input 'x': execute needs x (none given)");

  error = captureError([&] { runner.execute({{"x", constView(x)}, {"z", constView(x)}}); });
  EXPECT_EQ(error.code(), ErrorCode::NotFound);
  EXPECT_STREQ(error.what(), "unknown input 'z': execute inputs are x");

  error = captureError([&] { runner.execute({{"x", constView(short_x)}}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "input 'x': expected 64 bytes, got 60 (or a whole multiple of it)");

  error = captureError([&] { runner.execute({{"x", ConstTensorMemoryView(nullptr, 64)}}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "input 'x': data is null");

  error = captureError([&] { runner.execute({{"x", constView(x)}}, {{"y", view(long_y)}}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "output 'y': expected 64 bytes, got 68");

  error = captureError([&] { runner.execute({{"x", constView(x)}}, {{"y", view(y)}, {"w", view(y)}}); });
  EXPECT_EQ(error.code(), ErrorCode::NotFound);
  EXPECT_STREQ(error.what(), "unknown output 'w': execute outputs are y");

  error = captureError([&] { runner.execute({{"x", constView(x)}}, OutputMemoryView{}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "missing output 'y': execute needs y (none given)");

  error = captureError([&] { runner.executeAsync({{"x", constView(x)}}, 2); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "replica_id 2 out of range: the runner has 2 replicas");

  for (unsigned replica : {0u, 1u}) {
    runner.execute({{"x", constView(x)}}, {{"y", view(y)}}, replica);
    EXPECT_EQ(y, plusOne(x));
  }
}

TEST(ModelRunnerTest, BadConfigsAreRefusedNamingTheOption) {
  auto model = exampleModel("add_one");
  ModelRunnerConfig config;
  config.replication_factor = 0;
  EXPECT_STREQ(captureError([&] { ModelRunner runner(model, config); }).what(),
               "ModelRunnerConfig: replication_factor must be at least 1, got 0");
  config = {};
  config.max_look_ahead = "soon";
  EXPECT_EQ(captureError([&] { ModelRunner runner(model, config); }).code(), ErrorCode::InvalidArgument);
  config = {};
  config.batching_dim = 2;  // add_one's tensors are [B, N]
  EXPECT_EQ(captureError([&] { ModelRunner runner(model, config); }).code(), ErrorCode::InvalidArgument);
  config = {};
  std::vector<float> w(3);
  config.frozen_inputs = {{"nope", constView(w)}};
  Error error = captureError([&] { ModelRunner runner(model, config); });
  EXPECT_EQ(error.code(), ErrorCode::NotFound);
  EXPECT_STREQ(error.what(), "frozen input 'nope': the model has no input of that name");
  EXPECT_EQ(captureError([&] { ModelRunner runner(std::shared_ptr<popef::Model>{}); }).code(),
            ErrorCode::InvalidArgument);
}

TEST(ModelRunnerTest, MoreReplicasThanDevicesIsUnavailable) {
  Error error = captureError([&] { ModelRunner runner(exampleModel("add_one"), replicas(5)); });
  EXPECT_EQ(error.code(), ErrorCode::Unavailable);
  // The devices of the failed runner were released.
  ModelRunner runner(exampleModel("add_one"), replicas(4));
  std::vector<float> x(16, 2.f);
  EXPECT_EQ(floatsOf(runner.execute({{"x", constView(x)}}, 3).at("y")), plusOne(x));
}

TEST(ModelRunnerTest, LoadsFromPopefFiles) {
  const std::string path = ::testing::TempDir() + "runner_add_one.popef";
  {
    popef::Writer writer(path);
    writer.writeModel(*exampleModel("add_one"));
    writer.close();
  }
  ModelRunner runner(path);
  std::vector<float> x(16, 41.f);
  EXPECT_EQ(floatsOf(runner.execute({{"x", constView(x)}}).at("y")), plusOne(x));
  std::filesystem::remove(path);
}

TEST(ModelRunnerTest, DestroyingWithRequestsInFlightCancelsThem) {
  // With batching and no timeouts a single sample of a batch-4 model never
  // runs: those requests stay pending until the runner goes.
  ModelRunnerConfig config;
  config.batching_dim = 0;
  config.timeout_ns = std::chrono::nanoseconds::zero();
  std::vector<float> x(16, 1.f);
  std::vector<OutputFutureMemory> futures;
  std::vector<std::shared_ptr<Completion>> completions;
  {
    ModelRunner runner(exampleModel("add_one", 4), config);
    for (int i = 0; i < 3; ++i) futures.push_back(runner.executeAsync({{"x", constView(x)}}));
    completions.push_back(futures[0].at("y").completion());
    EXPECT_FALSE(completions[0]->isReady());
  }
  for (const auto &future : futures) {
    const auto &completion = future.at("y").completion();
    ASSERT_TRUE(completion->isReady());
    EXPECT_EQ(completion->code(), ErrorCode::Cancelled);
    EXPECT_NE(completion->message().find("destroyed"), std::string::npos) << completion->message();
    const Error error = captureError([&] { future.at("y").get(); });
    EXPECT_EQ(error.code(), ErrorCode::Cancelled);
  }
}

TEST(ModelRunnerTest, DestroyingWhileRequestsStreamCompletesEachOkOrCancelled) {
  std::vector<std::vector<float>> xs(200, std::vector<float>(16, 5.f));
  std::vector<OutputFutureMemory> futures;
  {
    ModelRunner runner(exampleModel("add_one"));
    for (auto &x : xs) futures.push_back(runner.executeAsync({{"x", constView(x)}}));
  }
  for (std::size_t i = 0; i < futures.size(); ++i) {
    const auto &future = futures[i].at("y");
    ASSERT_TRUE(future.completion()->isReady());
    if (future.completion()->code() == ErrorCode::Ok) {
      EXPECT_EQ(floatsOf(future.get()), plusOne(xs[i]));
    } else {
      EXPECT_EQ(future.completion()->code(), ErrorCode::Cancelled);
    }
  }
}

}  // namespace
}  // namespace mrt::runner_test
