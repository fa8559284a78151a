// An ONNX model compiled with IO tiles (OnnxOptions::numIOTiles,
// mrt_onnx_options.num_io_tiles): the operators keep off the IO tiles, the
// option is recorded in the model, and a Session serving queued requests
// prepares each next input ahead onto the IO tiles (max_look_ahead
// "unlimited"), so every run after the first takes less modelled time than
// without IO tiles, with the same outputs. Internal API: the Session's
// engine gives the modelled cycles of a Session's runs.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <hwsim/pipeline.hpp>

#include "common/error.hpp"
#include "device/device_manager.hpp"
#include "onnx/frontend.hpp"
#include "onnx_matmul_model.hpp"
#include "queue/ring_size_multiplier.hpp"
#include "session/session.hpp"

namespace mrt {
namespace {

constexpr onnx_test::MatMulShape kShape{32, 64, 64};  // on the small IPU model's 4 tiles
constexpr int kRuns = 6;

std::shared_ptr<popef::Model> compile(unsigned ioTiles) {
  const std::string bytes = onnx_test::matMulModel("MatMul", kShape, false);
  onnx::OnnxOptions options;
  options.target = hwsim::Target::smallIpuModel();
  options.numIOTiles = ioTiles;
  return onnx::compileOnnxMemory(bytes.data(), bytes.size(), options);
}

struct Served {
  std::uint64_t cycles = 0;      // of the kRuns Main runs
  std::uint64_t mainLatency = 0;  // Main's steps, one run alone (static)
  std::uint64_t inputCopy = 0;    // the stream copy of x (static)
};

// kRuns Main runs of requests queued up front, the outputs checked against
// the reference.
Served serve(unsigned ioTiles) {
  const std::shared_ptr<const popef::Model> model = compile(ioTiles);
  hwsim::SystemConfig system;
  system.numIpus = 0;  // IPU Model devices only
  Session session(model);  // max_look_ahead "unlimited"
  session.bindToDevice(DeviceManager(system).createSmallIpuModelDevice(model));
  std::vector<const popef::Anchor *> anchors = session.getUserInputAnchors();
  for (const popef::Anchor *anchor : session.getUserOutputAnchors()) anchors.push_back(anchor);
  QueueManager *queues = session.createQueueManager(anchors, ring_size_multiplier_factory::constantRingSizeMult(kRuns));
  const std::vector<float> x = onnx_test::values(kShape.m * kShape.k, onnx_test::xAt);
  const auto bytes = static_cast<std::int64_t>(x.size() * sizeof(float));
  std::vector<std::vector<float>> ys(kRuns, std::vector<float>(kShape.m * kShape.n));
  for (auto &y : ys) {
    queues->inputQueue("x").enqueue(x.data(), bytes);
    queues->outputQueue("y").enqueue(y.data(), static_cast<std::int64_t>(y.size() * sizeof(float)));
  }
  session.runLoadPrograms();
  const std::uint64_t before = session.engine().deviceCycles();
  for (int r = 0; r < kRuns; ++r) session.runMainPrograms();
  const std::vector<double> want = onnx_test::matMulReference("MatMul", kShape);
  for (int r = 0; r < kRuns; ++r) {
    double worst = 0.0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(ys[r][i] - want[i]));
    EXPECT_LT(worst, 1e-4) << "run " << r << " with " << ioTiles << " IO tiles";
  }
  Served served;
  served.cycles = session.engine().deviceCycles() - before;
  const hwsim::Executable &exe = session.engine().getExecutable();
  served.mainLatency = hwsim::pipelinePlan(exe, 1).latencyCycles();
  for (const auto &step : exe.programSteps()) {
    if (step.name == "input/x") served.inputCopy = step.cycles;
  }
  return served;
}

TEST(OnnxIoTiles, PreparedInputsLandOnTheIoTilesAndRunsTakeLess) {
  const std::shared_ptr<popef::Model> model = compile(1);
  const auto &options = model->metadata.engineOptions();
  ASSERT_EQ(options.count("exchange.numIOTiles"), 1u);
  EXPECT_EQ(options.at("exchange.numIOTiles"), "1");
  const Served plain = serve(0), io = serve(1);
  // Without IO tiles every run costs Main's steps.
  EXPECT_EQ(plain.cycles, kRuns * plain.mainLatency);
  // With them (docs/hwsim.md "Overlapped I/O"), run n + 1's x leaves the
  // host when run n's copy of x is done and lands H (the stream copy's
  // cost) later, while the rest of run n (R = Main - H) computes. Run n + 1
  // then waits max(0, H - R) for it and takes it from the IO tile in X
  // cycles (the one IO tile sends all 8 KiB at 4 B/cycle, then a sync):
  // every run after the first costs max(0, H - R) + X + R = max(H, R) + X
  // instead of H + R.
  const std::uint64_t H = io.inputCopy, R = io.mainLatency - io.inputCopy;
  const std::uint64_t X = kShape.m * kShape.k * sizeof(float) / 4 + 150;
  EXPECT_EQ(io.cycles, io.mainLatency + (kRuns - 1) * (std::max(H, R) + X));
  EXPECT_LT(io.cycles, plain.cycles);
}

TEST(OnnxIoTiles, IoTilesLeavingNoComputeTileAreRefused) {
  try {
    compile(4);
    ADD_FAILURE() << "compiled with every tile an IO tile";
  } catch (const Error &e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find(
                  "num_io_tiles is 4; it must leave compute tiles: the IPUs of IPU-Model small have 4 tiles"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mrt
