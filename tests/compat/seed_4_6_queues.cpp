// The seed's User Guide, section 4.6 "Managing queues of tensor data", as
// one program: createQueueManager, a producer thread enqueueing add_one's
// inputs and output buffers while this thread runs the Main programs. Seed
// lines are marked "seed:", what the seed elides "filled:".
#include <atomic>
#include <thread>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using compat_test::require;

int main() {
  compat_test::usePrivateSystem();
  // filled: "Assuming there is a session (Session) already created".
  auto model = popef::createModel({compat_test::modelPath("add_one")});
  model_runtime::SessionConfig config{model_runtime::LaunchPolicy::Immediate};
  model_runtime::Session session(std::move(model), config);

  // seed:
  model_runtime::QueueManager *queue_manager = session.createQueueManager();

  // filled: the queues, their descriptions, and a producer.
  require(queue_manager->inputs.size() == 1 && queue_manager->outputs.size() == 1, "one queue each way");
  model_runtime::InputQueue &in = queue_manager->inputQueue("x");
  model_runtime::OutputQueue &out = queue_manager->outputQueue("y");
  require(in.tensorInfo().sizeInBytes() == int64_t(compat_test::kAddOneN * sizeof(float)), "x's size");
  require(in.numBuffers() >= 1 && out.numBuffers() >= 1, "the rings have room");
  bool refused = false;
  try {
    queue_manager->inputQueue("nope");
  } catch (const std::out_of_range &e) {
    refused = std::string(e.what()).find("nope") != std::string::npos;
  }
  require(refused, "an unknown queue is named");

  constexpr int kRounds = 8;
  std::vector<std::vector<float>> xs(kRounds), ys(kRounds, std::vector<float>(compat_test::kAddOneN));
  for (int r = 0; r < kRounds; ++r) xs[r] = compat_test::randomFloats(compat_test::kAddOneN, unsigned(r));
  std::atomic<int> written{0};
  std::thread producer([&] {
    for (int r = 0; r < kRounds; ++r) {
      in.enqueue(xs[r].data(), int64_t(xs[r].size() * sizeof(float)));
      out.enqueue(ys[r].data(), int64_t(ys[r].size() * sizeof(float)), [&written] { ++written; });
    }
  });
  for (int r = 0; r < kRounds; ++r) session.runMainPrograms();
  producer.join();
  require(written == kRounds, "every output's write callback ran");
  for (int r = 0; r < kRounds; ++r) {
    for (std::size_t i = 0; i < compat_test::kAddOneN; ++i) require(ys[r][i] == xs[r][i] + 1.0f, "y = x + 1");
  }
  std::printf("4.6: %d rounds through the session's queues\n", kRounds);
  return 0;
}
