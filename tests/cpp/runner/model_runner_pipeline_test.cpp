// ModelRunner on pipeline2 (the mlp split over two IPUs, docs/hwsim.md
// "Pipelining"): its Main streams through two stages, the first stage of a
// request running while the second stage of the one before does, and every
// request, sync or async, many in flight or one at a time, gets the mlp's
// outputs.
#include <thread>

#include <gtest/gtest.h>

#include <hwsim/pipeline.hpp>

#include "popef/executable_check.hpp"
#include "runner_test_util.hpp"

namespace mrt::runner_test {
namespace {

const auto *const kSystem = ::testing::AddGlobalTestEnvironment(new SimulatedSystem(4));

TEST(ModelRunnerPipelineTest, Pipeline2MainIsTwoStagesAndTheMlpIsOne) {
  for (const char *name : {"pipeline2", "mlp"}) {
    auto model = exampleModel(name, 2);
    const hwsim::Executable exe = popef::readExecutable(*model);
    const auto main = static_cast<unsigned>(model->metadata.programFlow().main().at(0));
    const hwsim::PipelinePlan plan = hwsim::pipelinePlan(exe, main);
    EXPECT_EQ(plan.stages.size(), std::string(name) == "mlp" ? 1u : 2u) << name << ": " << plan.reason;
    EXPECT_EQ(plan.reason, "") << name;
    if (plan.pipelined()) {
      EXPECT_LT(plan.intervalCycles(), plan.latencyCycles()) << name;
    }
  }
}

TEST(ModelRunnerPipelineTest, Pipeline2ServesTheMlpsOutputsSyncAndAsync) {
  auto model = exampleModel("pipeline2", 2);
  const MlpReference reference(*model);
  ModelRunner runner(model);
  std::mt19937 rng(7);
  for (int i = 0; i < 40; ++i) {
    const std::vector<float> images = randomFloats(rng, 2 * 784, 0.f, 1.f);
    OutputMemory out = runner.execute({{"image", constView(images)}});
    ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(out.at("probs")), reference(images)));
  }
  for (int wave = 0; wave < 4; ++wave) {
    std::vector<std::vector<float>> images;
    std::vector<OutputFutureMemory> futures;
    for (int i = 0; i < 50; ++i) images.push_back(randomFloats(rng, 2 * 784, 0.f, 1.f));
    for (const auto &image : images) futures.push_back(runner.executeAsync({{"image", constView(image)}}));
    for (std::size_t i = 0; i < images.size(); ++i) {
      ASSERT_NO_FATAL_FAILURE(expectNear(floatsOf(futures[i].at("probs").get()), reference(images[i])));
    }
  }
}

TEST(ModelRunnerPipelineTest, Pipeline2ServesClientsOnSeveralThreads) {
  auto model = exampleModel("pipeline2", 1);
  const MlpReference reference(*model);
  ModelRunnerConfig config;
  config.thread_safe = true;
  ModelRunner runner(model, config);
  std::vector<std::thread> clients;
  std::vector<int> bad(3, 0);
  for (unsigned c = 0; c < bad.size(); ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 rng(100 + c);
      for (int i = 0; i < 30; ++i) {
        const std::vector<float> image = randomFloats(rng, 784, 0.f, 1.f);
        const std::vector<float> got = floatsOf(runner.execute({{"image", constView(image)}}).at("probs"));
        const std::vector<float> want = reference(image);
        for (std::size_t k = 0; k < want.size(); ++k) bad[c] += std::abs(got[k] - want[k]) > 1e-5f;
      }
    });
  }
  for (auto &t : clients) t.join();
  EXPECT_EQ(bad, std::vector<int>(bad.size(), 0));
}

}  // namespace
}  // namespace mrt::runner_test
