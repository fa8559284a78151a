// stop() from another thread while the Main program waits in an input
// callback for data that never comes: the callback gives up once the session
// is stopped (as a queue does when stop() disconnects it), the run ends with
// Cancelled, and reload() makes the session usable again.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "session_test_util.hpp"

namespace mrt {
namespace {

using namespace session_test;

TEST(SessionStopTest, StopFromAnotherThreadThenReload) {
  const auto model = exampleModel("add_one");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  std::atomic<bool> waiting{false};
  std::atomic<bool> haveInput{false};
  std::vector<float> x(16, 3.0f), y(16);
  session.setCallbackForAnchor("x", [&](void *p) {
    waiting.store(true);
    while (!haveInput.load() && !session.isStopped()) std::this_thread::yield();
    std::memcpy(p, x.data(), 64);
  });
  session.setCallbackForAnchor("y", writeTo(y));
  std::thread stopper([&] {
    while (!waiting.load()) std::this_thread::yield();
    session.stop();
  });
  const Error error = captureError([&] { session.runMainPrograms(); });
  stopper.join();
  EXPECT_EQ(error.code(), ErrorCode::Cancelled);
  EXPECT_TRUE(session.isStopped());
  EXPECT_EQ(captureError([&] { session.runMainPrograms(); }).code(), ErrorCode::FailedPrecondition);

  session.reload();
  EXPECT_FALSE(session.isStopped());
  haveInput.store(true);
  session.runMainPrograms();
  EXPECT_EQ(y, std::vector<float>(16, 4.0f));
}

}  // namespace
}  // namespace mrt

namespace mrt {
namespace {

using namespace session_test;

// The same with the session's QueueManager: Main blocks in the input queue's
// stream callback, stop() disconnects the queues, reload() resets them.
TEST(SessionStopTest, StopDisconnectsTheQueueManager) {
  const auto model = exampleModel("add_one");
  Session session(model);
  session.bindToDevice(smallDevice(model));
  std::vector<const popef::Anchor *> anchors = session.getUserInputAnchors();
  for (const popef::Anchor *anchor : session.getUserOutputAnchors()) anchors.push_back(anchor);
  QueueManager *queues = session.createQueueManager(anchors);
  EXPECT_TRUE(session.anchorsNotConnectedToCallbacks({0}).empty());
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // let Main block on the empty queue
    session.stop();
  });
  EXPECT_EQ(captureError([&] { session.runMainPrograms(); }).code(), ErrorCode::Cancelled);
  stopper.join();

  session.reload();
  std::vector<float> x(16, 9.0f), y(16);
  queues->inputQueue("x").enqueue(x.data(), 64);
  queues->outputQueue("y").enqueue(y.data(), 64);
  session.runMainPrograms();
  EXPECT_EQ(y, std::vector<float>(16, 10.0f));
}

}  // namespace
}  // namespace mrt
