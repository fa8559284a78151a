// A model compiled with replication factor 2 (mrt-gen `replicated`: add_one
// on each replica) in a Session: the device it needs, each replica's own
// anchors (callbacks, handler factories, queues), replicas run together or
// each on its own thread, and the errors naming the bad value.
#include <array>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "session_test_util.hpp"

namespace mrt {
namespace {

using namespace session_test;
using ::testing::HasSubstr;

constexpr unsigned kReplicas = 2;
constexpr std::size_t kSize = 16;  // floats of x and y (batch 1)

// Replica r's input: distinct per replica and per run.
std::vector<float> inputOf(unsigned replica, int run) {
  std::vector<float> x(kSize);
  for (std::size_t i = 0; i < kSize; ++i) x[i] = static_cast<float>(100 * replica + 10 * run) + static_cast<float>(i);
  return x;
}

std::vector<float> plusOne(std::vector<float> x) {
  for (float &v : x) v += 1.0f;
  return x;
}

TEST(SessionReplicationTest, EachReplicaHasItsOwnAnchors) {
  const auto model = exampleModel("replicated");
  Session session(model);
  EXPECT_EQ(session.replicationFactor(), kReplicas);
  session.bindToDevice(smallDevice(model));  // the model's 2 IPUs: 1 per replica x 2
  std::array<std::vector<float>, kReplicas> x, y;
  for (unsigned r = 0; r < kReplicas; ++r) {
    x[r] = inputOf(r, 0);
    y[r].assign(kSize, -1.0f);
    session.setCallbackForAnchor("x", r, readFrom(x[r]));
    session.setCallbackForAnchor("y", r, writeTo(y[r]));
  }
  session.runMainPrograms();  // both replicas, together
  for (unsigned r = 0; r < kReplicas; ++r) EXPECT_EQ(y[r], plusOne(x[r])) << "replica " << r;
}

TEST(SessionReplicationTest, ReplicasRunOnTheirOwnThreads) {
  const auto model = exampleModel("replicated");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  constexpr int kRuns = 20;
  std::array<std::vector<float>, kReplicas> x, y;
  for (unsigned r = 0; r < kReplicas; ++r) {
    x[r].assign(kSize, 0.0f);
    y[r].assign(kSize, -1.0f);
    session.setCallbackForAnchor("x", r, readFrom(x[r]));
    session.setCallbackForAnchor("y", r, writeTo(y[r]));
  }
  std::array<int, kReplicas> wrong{};
  std::vector<std::thread> threads;
  for (unsigned r = 0; r < kReplicas; ++r) {
    threads.emplace_back([&, r] {
      for (int run = 0; run < kRuns; ++run) {
        x[r] = inputOf(r, run);
        session.runMainPrograms(r);
        if (y[r] != plusOne(x[r])) ++wrong[r];
      }
    });
  }
  for (auto &thread : threads) thread.join();
  for (unsigned r = 0; r < kReplicas; ++r) EXPECT_EQ(wrong[r], 0) << "replica " << r;
}

TEST(SessionReplicationTest, HandlerFactoriesAreCalledPerReplica) {
  const auto model = exampleModel("replicated");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  std::array<std::vector<float>, kReplicas> x{inputOf(0, 1), inputOf(1, 1)}, y;
  for (auto &out : y) out.assign(kSize, -1.0f);
  std::vector<unsigned> asked;
  session.setUserInputHandler([&](const CallbackInfo &info) {
    asked.push_back(info.replica);
    return readFrom(x.at(info.replica));
  });
  session.setUserOutputHandler([&](const CallbackInfo &info) { return writeTo(y.at(info.replica)); });
  EXPECT_EQ(asked, (std::vector<unsigned>{0, 1}));
  session.runMainPrograms();
  for (unsigned r = 0; r < kReplicas; ++r) EXPECT_EQ(y[r], plusOne(x[r])) << "replica " << r;
}

TEST(SessionReplicationTest, EachReplicaHasItsOwnQueueManager) {
  const auto model = exampleModel("replicated");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  std::vector<const popef::Anchor *> anchors = session.getUserInputAnchors();
  for (const popef::Anchor *anchor : session.getUserOutputAnchors()) anchors.push_back(anchor);
  const Error one = captureError([&] { session.createQueueManager(anchors); });
  EXPECT_EQ(one.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(one.what(), HasSubstr("the model has 2 replicas"));
  EXPECT_THAT(one.what(), HasSubstr("createQueueManagerForReplica"));

  std::array<QueueManager *, kReplicas> queues{};
  std::array<std::vector<float>, kReplicas> x{inputOf(0, 2), inputOf(1, 2)}, y;
  for (unsigned r = 0; r < kReplicas; ++r) {
    queues[r] = session.createQueueManagerForReplica(r, anchors);
    y[r].assign(kSize, -1.0f);
    queues[r]->inputQueue("x").enqueue(x[r].data(), static_cast<std::int64_t>(kSize * sizeof(float)));
    queues[r]->outputQueue("y").enqueue(y[r].data(), static_cast<std::int64_t>(kSize * sizeof(float)));
  }
  session.runMainPrograms();
  for (unsigned r = 0; r < kReplicas; ++r) EXPECT_EQ(y[r], plusOne(x[r])) << "replica " << r;
}

// Stream prefetch (max_look_ahead) on each replica's queues, the replicas
// on their own threads: each prepares its next x while its run goes on, the
// one limit (2) shared by both replicas holding one each.
TEST(SessionReplicationTest, EachReplicasQueuesPrepareInputsAhead) {
  const auto model = exampleModel("replicated");
  SessionConfig config;
  config.max_look_ahead = "2";
  Session session(model, config);
  session.bindToDevice(smallDevice(model));
  std::vector<const popef::Anchor *> anchors = session.getUserInputAnchors();
  for (const popef::Anchor *anchor : session.getUserOutputAnchors()) anchors.push_back(anchor);
  constexpr int kRuns = 5;
  constexpr auto kBytes = static_cast<std::int64_t>(kSize * sizeof(float));
  std::array<std::vector<std::vector<float>>, kReplicas> x, y;
  for (unsigned r = 0; r < kReplicas; ++r) {
    QueueManager *queues = session.createQueueManagerForReplica(
        r, anchors, ring_size_multiplier_factory::constantRingSizeMult(kRuns));
    for (int run = 0; run < kRuns; ++run) {
      x[r].push_back(inputOf(r, run));
      y[r].emplace_back(kSize, -1.0f);
    }
    for (int run = 0; run < kRuns; ++run) {
      queues->inputQueue("x").enqueue(x[r][run].data(), kBytes);
      queues->outputQueue("y").enqueue(y[r][run].data(), kBytes);
    }
  }
  session.runLoadPrograms();
  std::vector<std::thread> threads;
  for (unsigned r = 0; r < kReplicas; ++r) {
    threads.emplace_back([&session, r] {
      for (int run = 0; run < kRuns; ++run) session.runMainPrograms(r);
    });
  }
  for (std::thread &thread : threads) thread.join();
  for (unsigned r = 0; r < kReplicas; ++r) {
    for (int run = 0; run < kRuns; ++run) EXPECT_EQ(y[r][run], plusOne(x[r][run])) << "replica " << r << " run " << run;
  }
  // Every run's x but the first of each replica came prepared ahead.
  EXPECT_EQ(session.totalPreparedAhead(), std::uint64_t{kReplicas} * (kRuns - 1));
  EXPECT_EQ(session.preparedAhead(), 0u);
}

// hwsim pipelines one replica's runs: a replicated Main is not pipelined,
// and runMainProgramsPipelined runs it whole on every replica.
TEST(SessionReplicationTest, MainIsNotPipelinedAndRunsWholeOnEveryReplica) {
  const auto model = exampleModel("replicated");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  EXPECT_FALSE(session.mainIsPipelined());
  std::array<std::vector<float>, kReplicas> x{inputOf(0, 1), inputOf(1, 1)}, y;
  for (unsigned r = 0; r < kReplicas; ++r) {
    y[r].assign(kSize, -1.0f);
    session.setCallbackForAnchor("x", r, readFrom(x[r]));
    session.setCallbackForAnchor("y", r, writeTo(y[r]));
  }
  session.runMainProgramsPipelined(true);
  for (unsigned r = 0; r < kReplicas; ++r) EXPECT_EQ(y[r], plusOne(x[r])) << "replica " << r;
  EXPECT_FALSE(session.mainPipelineBusy());
}

TEST(SessionReplicationTest, ErrorsNameTheReplicaAndTheIpus) {
  const auto model = exampleModel("replicated");
  Session session(model);
  // A device of one replica's IPUs is too small.
  const std::shared_ptr<Device> small = ipuModelManager().createSmallIpuModelDevice(1);
  const Error tooSmall = captureError([&] { session.bindToDevice(small); });
  EXPECT_EQ(tooSmall.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(tooSmall.what(), HasSubstr("the model needs a device of 2 IPUs (1 IPU per replica x 2 replicas), "
                                         "device " + std::to_string(small->id()) + " has 1 IPU"));

  session.bindToDevice(smallDevice(model));
  const Error range = captureError([&] { session.setCallbackForAnchor("x", 2, [](void *) {}); });
  EXPECT_EQ(range.code(), ErrorCode::InvalidArgument);
  EXPECT_THAT(range.what(), HasSubstr("replica 2 out of range: the model has 2 replicas"));
  EXPECT_EQ(captureError([&] { session.runMainPrograms(2); }).code(), ErrorCode::InvalidArgument);

  // Replica 1's anchors unbound: the run says which.
  std::vector<float> x = inputOf(0, 3), y(kSize);
  session.setCallbackForAnchor("x", 0, readFrom(x));
  session.setCallbackForAnchor("y", 0, writeTo(y));
  const Error missing = captureError([&] { session.runMainPrograms(); });
  EXPECT_EQ(missing.code(), ErrorCode::FailedPrecondition);
  EXPECT_THAT(missing.what(), HasSubstr("program 0 ('main'): 'x' (replica 1), 'y' (replica 1)"));
  // Replica 0 alone runs.
  session.runMainPrograms(0);
  EXPECT_EQ(y, plusOne(x));
}

}  // namespace
}  // namespace mrt
