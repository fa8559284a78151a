// mrt::Session on a model compiled with replication factor 2 (replicated_t4:
// add_one, 16 floats): numReplicas(), a queue manager per replica fed while
// each replica runs Main on a thread of its own, callbacks bound per
// replica, handler factories told the replica, and the errors naming a bad
// replica.
#include <cstring>
#include <thread>
#include <vector>

#include "cxx_test_util.hpp"

namespace {

using mrt_cxx_test::boundSession;
using mrt_cxx_test::drain;
using mrt_cxx_test::feed;
using mrt_cxx_test::kAddOneN;
using mrt_cxx_test::modelPath;
using mrt_cxx_test::randomFloats;

constexpr unsigned kReplicas = 2;

void expectAddedOne(const std::vector<float> &out, const std::vector<float> &in) {
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t i = 0; i < in.size(); ++i) ASSERT_FLOAT_EQ(out[i], in[i] + 1.0f) << "element " << i;
}

TEST(CxxSessionReplicas, QueuesAndMainRunsPerReplica) {
  constexpr int kRequests = 40;
  mrt::Model model(modelPath("replicated_t4"));
  mrt::Session session = boundSession(model);
  ASSERT_EQ(session.numReplicas(), kReplicas);
  EXPECT_MRT_ERROR(session.createQueueManager(), MRT_INVALID_ARGUMENT, "each with its own queues");

  std::vector<mrt::QueueManager> managers;
  for (unsigned r = 0; r < kReplicas; ++r) managers.push_back(session.createQueueManagerForReplica(r));
  // in[r][q]: distinct for every replica and request.
  std::vector<std::vector<std::vector<float>>> in(kReplicas), out(kReplicas);
  for (unsigned r = 0; r < kReplicas; ++r) {
    for (int q = 0; q < kRequests; ++q) {
      in[r].push_back(randomFloats(kAddOneN, 100 * r + unsigned(q)));
      out[r].emplace_back(kAddOneN, -1.0f);
    }
  }
  std::vector<std::thread> devices;
  for (unsigned r = 0; r < kReplicas; ++r) {
    devices.emplace_back([&session, r] {
      for (int q = 0; q < kRequests; ++q) session.runMainPrograms(r);
    });
  }
  // This thread is every queue's one producer; each replica's thread drains its own.
  for (int q = 0; q < kRequests; ++q) {
    for (unsigned r = 0; r < kReplicas; ++r) {
      managers[r].input("x").enqueue(mrt::Span<const float>(in[r][q]));
      managers[r].output("y").enqueue(mrt::Span<float>(out[r][q]));
    }
  }
  for (std::thread &device : devices) device.join();
  for (unsigned r = 0; r < kReplicas; ++r) {
    for (int q = 0; q < kRequests; ++q) expectAddedOne(out[r][q], in[r][q]);
  }
}

TEST(CxxSessionReplicas, CallbacksAndFactoriesPerReplica) {
  mrt::Model model(modelPath("replicated_t4"));
  mrt::Session session = boundSession(model);
  std::vector<std::vector<float>> x, y(kReplicas, std::vector<float>(kAddOneN));
  for (unsigned r = 0; r < kReplicas; ++r) x.push_back(randomFloats(kAddOneN, 7 + r));
  for (unsigned r = 0; r < kReplicas; ++r) {
    session.setCallbackForAnchor("x", r, feed(x[r]));
    session.setCallbackForAnchor("y", r, drain(y[r]));
  }
  session.runMainPrograms();  // every replica together, each on its own thread
  for (unsigned r = 0; r < kReplicas; ++r) expectAddedOne(y[r], x[r]);

  // Factories are asked once per replica, told which.
  std::vector<unsigned> asked;
  session.setUserInputHandler([&](const mrt::AnchorInfo &anchor) {
    asked.push_back(anchor.replica);
    return feed(x[kReplicas - 1 - anchor.replica]);  // the replicas swap inputs
  });
  EXPECT_EQ(asked, (std::vector<unsigned>{0, 1}));
  for (unsigned r = 0; r < kReplicas; ++r) {
    session.runMainPrograms(r);
    expectAddedOne(y[r], x[kReplicas - 1 - r]);
  }

  EXPECT_MRT_ERROR(session.runMainPrograms(kReplicas), MRT_INVALID_ARGUMENT, "replica 2 out of range");
  EXPECT_MRT_ERROR(session.setCallbackForAnchor("x", kReplicas, feed(x[0])), MRT_INVALID_ARGUMENT,
                   "replica 2 out of range");
  EXPECT_MRT_ERROR(session.createQueueManagerForReplica(kReplicas), MRT_INVALID_ARGUMENT,
                   "replica 2 out of range: the session's model 'replicated' has 2 replicas");
  // The failures left the session usable.
  session.runMainPrograms(0);
  expectAddedOne(y[0], x[1]);
}

TEST(CxxSessionReplicas, AModelThatIsNotReplicatedHasReplicaZero) {
  mrt::Model model(modelPath("add_one_t4"));
  mrt::Session session = boundSession(model);
  EXPECT_EQ(session.numReplicas(), 1u);
  mrt::QueueManager queues = session.createQueueManagerForReplica(0);
  std::vector<float> in = randomFloats(kAddOneN, 3), out(kAddOneN);
  queues.input("x").enqueue(mrt::Span<const float>(in));
  queues.output("y").enqueue(mrt::Span<float>(out));
  session.runMainPrograms(0);
  expectAddedOne(out, in);
  EXPECT_MRT_ERROR(session.runMainPrograms(1), MRT_INVALID_ARGUMENT, "has 1 replica");
}

}  // namespace
