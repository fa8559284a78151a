// max_look_ahead: a Session prepares input transfers ahead (stream prefetch
// from its QueueManager) up to the limit and no further, with the same
// results; with IO tiles the prepared transfers overlap compute, and the
// modelled device time per run falls.
#include <gtest/gtest.h>

#include <algorithm>

#include "popef/model.hpp"
#include "session_test_util.hpp"

namespace mrt {
namespace {

using namespace session_test;

constexpr int kRuns = 6;

struct LookAheadRun {
  std::uint64_t totalPrepared = 0;
  std::uint64_t mostHeld = 0;  // preparedAhead() seen while data was being read
  std::uint64_t deviceCycles = 0;
};

QueueManager *queuesFor(Session &session) {
  std::vector<const popef::Anchor *> anchors = session.getUserInputAnchors();
  for (const popef::Anchor *anchor : session.getUserOutputAnchors()) anchors.push_back(anchor);
  return session.createQueueManager(anchors, ring_size_multiplier_factory::constantRingSizeMult(kRuns));
}

// conditional: run r gets x = r and flag = r % 2, so y = flag ? 2x : x - 1.
LookAheadRun runConditional(const std::string &max_look_ahead) {
  const auto model = exampleModel("conditional");
  SessionConfig config;
  config.max_look_ahead = max_look_ahead;
  Session session(model, config);
  session.bindToDevice(smallDevice(model));
  QueueManager *queues = queuesFor(session);
  LookAheadRun result;
  std::vector<std::vector<float>> xs(kRuns), ys(kRuns, std::vector<float>(8));
  std::vector<std::int32_t> flags(kRuns);
  for (int r = 0; r < kRuns; ++r) {
    xs[r].assign(8, static_cast<float>(r));
    flags[r] = r % 2;
    const auto watch = [&] { result.mostHeld = std::max(result.mostHeld, session.preparedAhead()); };
    queues->inputQueue("x").enqueue(xs[r].data(), 32, watch);
    queues->inputQueue("flag").enqueue(&flags[r], 4, watch);
    queues->outputQueue("y").enqueue(ys[r].data(), 32);
  }
  for (int r = 0; r < kRuns; ++r) session.runMainPrograms();
  for (int r = 0; r < kRuns; ++r) {
    const float expected = r % 2 != 0 ? 2.0f * static_cast<float>(r) : static_cast<float>(r) - 1.0f;
    EXPECT_EQ(ys[r], std::vector<float>(8, expected)) << "run " << r << ", max_look_ahead " << max_look_ahead;
  }
  result.totalPrepared = session.totalPreparedAhead();
  EXPECT_EQ(session.preparedAhead(), 0u) << "the last run's prefetch found no data";
  return result;
}

TEST(LookAheadTest, PreparesHostSyncsAheadUpToTheLimitAndNoFurther) {
  // Each run has two input syncs (x, then flag). With a limit of 1, x of
  // the next run is prepared after x's transfer, and then flag finds the
  // one slot taken; with 2 both are; the last run finds nothing enqueued.
  const LookAheadRun none = runConditional("0");
  EXPECT_EQ(none.totalPrepared, 0u);
  EXPECT_EQ(none.mostHeld, 0u);
  const LookAheadRun one = runConditional("1");
  EXPECT_EQ(one.totalPrepared, static_cast<std::uint64_t>(kRuns - 1));
  EXPECT_EQ(one.mostHeld, 1u);
  const LookAheadRun two = runConditional("2");
  EXPECT_EQ(two.totalPrepared, static_cast<std::uint64_t>(2 * (kRuns - 1)));
  EXPECT_EQ(two.mostHeld, 2u);
  // "unlimited" on an executable without IO tiles: nothing would overlap,
  // so nothing is prepared ahead.
  EXPECT_EQ(runConditional("unlimited").totalPrepared, 0u);
}

// add_one on 4 tiles uses tile 0 only, so tile 3 can be an IO tile.
LookAheadRun runAddOne(const std::string &ioTiles) {
  const auto model = popef::withEngineOptions(*exampleModel("add_one"), {{"exchange.numIOTiles", ioTiles}});
  Session session(model);  // max_look_ahead "unlimited"
  session.bindToDevice(smallDevice(model));
  QueueManager *queues = queuesFor(session);
  std::vector<std::vector<float>> xs(kRuns), ys(kRuns, std::vector<float>(16));
  for (int r = 0; r < kRuns; ++r) {
    xs[r].assign(16, static_cast<float>(r));
    queues->inputQueue("x").enqueue(xs[r].data(), 64);
    queues->outputQueue("y").enqueue(ys[r].data(), 64);
  }
  session.runLoadPrograms();
  const std::uint64_t before = session.engine().deviceCycles();
  for (int r = 0; r < kRuns; ++r) session.runMainPrograms();
  for (int r = 0; r < kRuns; ++r) EXPECT_EQ(ys[r], std::vector<float>(16, static_cast<float>(r + 1)));
  LookAheadRun result;
  result.totalPrepared = session.totalPreparedAhead();
  result.deviceCycles = session.engine().deviceCycles() - before;
  return result;
}

TEST(LookAheadTest, WithIoTilesPreparedInputsOverlapComputeAndRunsTakeLess) {
  const LookAheadRun plain = runAddOne("0");
  const LookAheadRun overlapped = runAddOne("1");
  EXPECT_EQ(plain.totalPrepared, 0u);
  EXPECT_EQ(overlapped.totalPrepared, static_cast<std::uint64_t>(kRuns - 1));
  // Runs 2..6 take x from the IO tile instead of over the host link, each
  // saving at least the host sync (6000 cycles) less the exchange.
  ASSERT_LT(overlapped.deviceCycles, plain.deviceCycles);
  EXPECT_GE(plain.deviceCycles - overlapped.deviceCycles, static_cast<std::uint64_t>((kRuns - 1) * 5000));
}

TEST(LookAheadTest, AMalformedLimitIsRefused) {
  SessionConfig config;
  config.max_look_ahead = "-1";
  const Error error = captureError([&] { Session session(exampleModel("add_one"), config); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("SessionConfig.max_look_ahead '-1' is neither \"unlimited\" nor an unsigned integer"),
            std::string::npos)
      << error.what();
}

}  // namespace
}  // namespace mrt
