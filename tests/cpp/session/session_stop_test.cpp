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
