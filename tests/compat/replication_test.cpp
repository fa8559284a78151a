// Replication in the layer, per the seeds: a model saved with replication
// factor R (mrt-gen replicated: add_one with R = 2) reports it through
// popef::Metadata::replicationFactor(); ModelRunner serves its replicas
// (replication_factor x R of them, replica_id checked against that count),
// each computing y = x + 1 on its own; Session refuses the model (seed 004,
// 4.7 "Verification"), as it does not handle replication.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "compat_test_util.hpp"
#include "model_runtime/ModelRuntime.hpp"

using namespace compat_test;

namespace {

class CompatEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { usePrivateSystem(); }
};
const ::testing::Environment *const kEnvironment = ::testing::AddGlobalTestEnvironment(new CompatEnvironment);

constexpr unsigned kModelReplicas = 2;  // mrt-gen replicated

// Runs each replica on its own input (execute and executeAsync) and checks
// each replica's output is its own input plus one.
void expectEveryReplicaAddsOne(model_runtime::ModelRunner &runner, unsigned replicas) {
  const int64_t bytes = int64_t(kAddOneN * sizeof(float));
  for (unsigned replica = 0; replica < replicas; ++replica) {
    const std::vector<float> x = randomFloats(kAddOneN, 40 + replica);
    std::vector<float> y(kAddOneN, -1.0f);
    const model_runtime::InputMemoryView in{{"x", {x.data(), uint64_t(bytes)}}};
    runner.execute(in, {{"y", {y.data(), uint64_t(bytes)}}}, replica);
    for (std::size_t i = 0; i < kAddOneN; ++i) ASSERT_EQ(y[i], x[i] + 1.0f) << "replica " << replica << ", " << i;

    model_runtime::OutputFutureMemory future = runner.executeAsync(in, replica);
    const model_runtime::TensorMemory out = future.at("y").get();
    ASSERT_EQ(out.data_size_bytes, uint64_t(bytes));
    const auto *values = static_cast<const float *>(out.data.get());
    for (std::size_t i = 0; i < kAddOneN; ++i) ASSERT_EQ(values[i], x[i] + 1.0f) << "replica " << replica << ", " << i;
  }
}

void expectReplicaOutOfRange(model_runtime::ModelRunner &runner, unsigned replica_id, unsigned replicas) {
  std::vector<float> x(kAddOneN), y(kAddOneN);
  const model_runtime::InputMemoryView in{{"x", {x.data(), x.size() * sizeof(float)}}};
  const std::string expected =
      "replica_id " + std::to_string(replica_id) + " out of range: the runner has " + std::to_string(replicas);
  try {
    runner.execute(in, {{"y", {y.data(), y.size() * sizeof(float)}}}, replica_id);
    ADD_FAILURE() << "replica " << replica_id << " of " << replicas << " was accepted";
  } catch (const mrt::Error &e) {
    EXPECT_EQ(e.code(), MRT_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
  EXPECT_THROW(runner.executeAsync(in, replica_id), mrt::Error);
}

}  // namespace

TEST(CompatReplication, MetadataReportsTheModelsReplicationFactor) {
  EXPECT_EQ(popef::createModel({modelPath("replicated")})->metadata.replicationFactor(), int64_t(kModelReplicas));
  EXPECT_EQ(popef::createModel({modelPath("add_one")})->metadata.replicationFactor(), 1);
}

TEST(CompatReplication, ModelRunnerServesEachReplicaOfAReplicatedModel) {
  {
    model_runtime::ModelRunner runner(modelPath("replicated"));
    EXPECT_EQ(runner.model()->metadata.replicationFactor(), int64_t(kModelReplicas));
    expectEveryReplicaAddsOne(runner, kModelReplicas);
    expectReplicaOutOfRange(runner, kModelReplicas, kModelReplicas);
    expectEveryReplicaAddsOne(runner, 1);  // still serving
  }  // releases its device: the 4-IPU system has two devices of 2 IPUs

  // replication_factor copies of the model, each bringing its R replicas.
  model_runtime::ModelRunnerConfig config;
  config.replication_factor = 2;
  model_runtime::ModelRunner copies(modelPath("replicated"), config);
  expectEveryReplicaAddsOne(copies, 2 * kModelReplicas);
  expectReplicaOutOfRange(copies, 2 * kModelReplicas, 2 * kModelReplicas);
}

TEST(CompatReplication, SessionRefusesAReplicatedModel) {
  for (const auto &make : {+[] { return model_runtime::Session({modelPath("replicated")}); },
                           +[] { return model_runtime::Session(popef::createModel({modelPath("replicated")})); }}) {
    try {
      make();
      ADD_FAILURE() << "a Session accepted a model of replication factor 2";
    } catch (const mrt::Error &e) {
      EXPECT_EQ(e.code(), MRT_INVALID_ARGUMENT);
      EXPECT_NE(std::string(e.what()).find("has replication factor 2 (popef::Metadata::replicationFactor()); a "
                                           "Session runs models of replication factor 1 only"),
                std::string::npos)
          << e.what();
    }
  }
  // A model of replication factor 1 is accepted.
  model_runtime::Session session({modelPath("add_one")});
  EXPECT_EQ(session.model()->metadata.replicationFactor(), 1);
}
