// QueueManager: queues from anchors or a model, lookups, ring sizes, the
// stream callbacks a Session connects, flushAll/disconnectAll/resetAll and
// timeout callbacks. Single-threaded: the test calls the stream callbacks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "internal_example_models.hpp"
#include "queue/queue_manager.hpp"

namespace mrt {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<float> iota(std::size_t n, float first) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), first);
  return values;
}

template <typename F>
ErrorCode codeOf(F &&f, std::string *message = nullptr) {
  try {
    f();
  } catch (const Error &error) {
    if (message) *message = error.what();
    return error.code();
  }
  return ErrorCode::Ok;
}

// x F32[2,3] in (program 1), y F32[2,3] out (program 1), w F32[4] in (program 0).
struct Anchors {
  popef::Anchor x{"x", "h_x", popef::TensorInfo(popef::DataType::F32, {2, 3}), {1},
                  popef::TensorType::INPUT};
  popef::Anchor y{"y", "h_y", popef::TensorInfo(popef::DataType::F32, {2, 3}), {1},
                  popef::TensorType::OUTPUT};
  popef::Anchor w{"w", "h_w", popef::TensorInfo(popef::DataType::F32, {4}), {0},
                  popef::TensorType::INPUT};
  std::vector<const popef::Anchor *> all() const { return {&x, &y, &w}; }
};

TEST(QueueManagerTest, MakesOneQueuePerAnchorByDirection) {
  Anchors anchors;
  QueueManager manager(anchors.all());
  EXPECT_EQ(manager.inputs.size(), 2U);
  EXPECT_EQ(manager.outputs.size(), 1U);
  EXPECT_EQ(manager.inputQueue("x").tensorInfo(), anchors.x.tensorInfo());
  EXPECT_EQ(&manager.inputQueue("h_x"), &manager.inputQueue("x"));  // by handle too
  EXPECT_EQ(&manager.outputQueue("h_y"), &manager.outputs.at("y"));
  // Default multiplier 2 x model batch: x [2,3] -> 4, w [4] -> 8.
  EXPECT_EQ(manager.inputQueue("x").numBuffers(), 4);
  EXPECT_EQ(manager.inputQueue("w").numBuffers(), 8);
}

TEST(QueueManagerTest, UnknownNamesListTheQueues) {
  Anchors anchors;
  QueueManager manager(anchors.all());
  std::string message;
  EXPECT_EQ(codeOf([&] { manager.inputQueue("y"); }, &message), ErrorCode::NotFound);
  EXPECT_EQ(message, "no input queue named 'y' (inputs [w, x], outputs [y])");
  EXPECT_EQ(codeOf([&] { manager.outputQueue("nope"); }), ErrorCode::NotFound);
  EXPECT_EQ(codeOf([&] { manager.streamCallback("nope"); }), ErrorCode::NotFound);
}

TEST(QueueManagerTest, RejectsBadAnchorsAndMultipliers) {
  Anchors anchors;
  popef::Anchor unknown{"u", "h_u", popef::TensorInfo(), {1}, popef::TensorType::UNKNOWN};
  std::string message;
  EXPECT_EQ(codeOf([&] { QueueManager({&anchors.x, &unknown}); }, &message),
            ErrorCode::InvalidArgument);
  EXPECT_THAT(message, HasSubstr("anchor 'u' is neither an INPUT nor an OUTPUT"));
  EXPECT_EQ(codeOf([&] { QueueManager({&anchors.x, &anchors.x}); }, &message),
            ErrorCode::InvalidArgument);
  EXPECT_THAT(message, HasSubstr("two anchors are named 'x'"));
  EXPECT_EQ(codeOf([&] {
              QueueManager(anchors.all(), ring_size_multiplier_factory::constantRingSizeMult(0));
            }, &message),
            ErrorCode::InvalidArgument);
  EXPECT_THAT(message, HasSubstr("ring size multiplier must be at least 1, got 0"));
  EXPECT_EQ(codeOf([&] { QueueManager(anchors.all(), nullptr, -1ns); }),
            ErrorCode::InvalidArgument);
}

TEST(QueueManagerTest, RingSizeMultipliersForPrograms) {
  Anchors anchors;
  auto multiplier = ring_size_multiplier_factory::ringSizeMultForProgs({1}, 5, 1);
  EXPECT_EQ(multiplier(anchors.x), 5);
  EXPECT_EQ(multiplier(anchors.w), 1);
  QueueManager manager(anchors.all(), multiplier);
  EXPECT_EQ(manager.inputQueue("x").numBuffers(), 10);  // 5 x batch 2
  EXPECT_EQ(manager.outputQueue("y").numBuffers(), 10);
  EXPECT_EQ(manager.inputQueue("w").numBuffers(), 4);  // 1 x batch 4
}

TEST(QueueManagerTest, FromAModelWithMainProgramMultipliers) {
  // stateful: x (Main, user input), acc (Load, TensorData: no queue),
  // acc_out (Main output), acc_save (Save output).
  auto model = example_models::buildExampleModel("stateful", {.batch = 3});
  auto multiplier = ring_size_multiplier_factory::ringSizeMultForMainProgs(*model, 4, 1);
  QueueManager manager(*model, multiplier);
  std::vector<std::string> inputs, outputs;
  for (const auto &entry : manager.inputs) inputs.push_back(entry.first);
  for (const auto &entry : manager.outputs) outputs.push_back(entry.first);
  EXPECT_THAT(inputs, ElementsAre("x"));
  EXPECT_THAT(outputs, ElementsAre("acc_out", "acc_save"));
  EXPECT_EQ(manager.inputQueue("x").numBuffers(), 12);  // 4 x batch 3
  const popef::Anchor *save = nullptr;
  for (const auto &anchor : model->metadata.anchors()) {
    if (anchor.name() == "acc_save") save = &anchor;
  }
  ASSERT_NE(save, nullptr);
  EXPECT_EQ(multiplier(*save), 1);
  EXPECT_EQ(manager.outputQueue("acc_save").numBuffers(),
            modelBatchSize(save->tensorInfo()));
}

TEST(QueueManagerTest, StreamCallbacksMoveTheBytesBetweenUserAndDevice) {
  Anchors anchors;
  QueueManager manager(anchors.all());
  ASSERT_EQ(manager.streams().size(), 3U);
  EXPECT_EQ(manager.streams()[0].handle, "h_w");  // inputs first, by name
  EXPECT_EQ(manager.streams()[1].handle, "h_x");
  EXPECT_EQ(manager.streams()[2].handle, "h_y");
  EXPECT_EQ(manager.streams()[2].direction, popef::TensorType::OUTPUT);

  const std::vector<float> sample0 = iota(3, 1.0F), sample1 = iota(3, 4.0F);
  std::vector<float> out0(3), out1(3);
  int read_complete = 0, write_complete = 0;
  manager.inputQueue("x").enqueue(sample0.data(), 12, nullptr, [&] { ++read_complete; });
  manager.inputQueue("x").enqueue(sample1.data(), 12, nullptr, [&] { ++read_complete; });
  manager.outputQueue("y").enqueue(out0.data(), 12, [&] { ++write_complete; });
  manager.outputQueue("y").enqueue(out1.data(), 12, [&] { ++write_complete; });

  // The "device": read x, compute y = 2x, write y.
  std::vector<float> device(6);
  manager.streamCallback("h_x")(device.data());
  EXPECT_EQ(read_complete, 2);
  for (float &value : device) value *= 2;
  manager.streamCallback("h_y")(device.data());
  EXPECT_EQ(write_complete, 2);
  EXPECT_THAT(out0, ElementsAre(2, 4, 6));
  EXPECT_THAT(out1, ElementsAre(8, 10, 12));
}

TEST(QueueManagerTest, FlushAllLetsTheDeviceRunWithoutUserData) {
  Anchors anchors;
  QueueManager manager(anchors.all());
  const std::vector<float> sample = iota(3, 1.0F);
  std::vector<float> out(3, -1.0F);
  manager.inputQueue("x").enqueue(sample.data(), 12);
  manager.outputQueue("y").enqueue(out.data(), 12);
  manager.flushAll();
  std::vector<float> x(6, -1.0F), w(4, -1.0F);
  manager.streamCallback("h_x")(x.data());
  manager.streamCallback("h_w")(w.data());
  EXPECT_THAT(x, ElementsAre(1, 2, 3, 0, 0, 0));
  EXPECT_THAT(w, ElementsAre(0, 0, 0, 0));
  std::vector<float> y = iota(6, 10.0F);
  manager.streamCallback("h_y")(y.data());
  EXPECT_THAT(out, ElementsAre(10, 11, 12));
}

TEST(QueueManagerTest, DisconnectAllThenResetAll) {
  Anchors anchors;
  QueueManager manager(anchors.all());
  const std::vector<float> sample = iota(6, 1.0F);
  manager.inputQueue("x").enqueue(sample.data(), 24);
  manager.disconnectAll();
  for (const auto &[name, queue] : manager.inputs) EXPECT_FALSE(queue.isConnected()) << name;
  for (const auto &[name, queue] : manager.outputs) EXPECT_FALSE(queue.isConnected()) << name;
  // Nothing blocks: inputs get zeros, outputs are dropped.
  std::vector<float> x(6, -1.0F), w(4, -1.0F), y(6, 5.0F);
  for (const auto &stream : manager.streams()) {
    stream.callback(stream.name == "x" ? x.data() : stream.name == "w" ? w.data() : y.data());
  }
  EXPECT_EQ(x, std::vector<float>(6, 0.0F));
  EXPECT_EQ(w, std::vector<float>(4, 0.0F));
  manager.flushAll();  // a no-op on disconnected queues

  manager.resetAll();
  for (const auto &[name, queue] : manager.inputs) EXPECT_TRUE(queue.isConnected()) << name;
  manager.inputQueue("x").enqueue(sample.data(), 24);
  manager.streamCallback("x")(x.data());
  EXPECT_EQ(x, sample);
}

TEST(QueueManagerTest, TimeoutCallbackReportsWhatTheDeviceWaitsForAndCanFlush) {
  Anchors anchors;
  std::vector<std::string> timeouts;
  QueueManager *self = nullptr;
  QueueManager manager(
      anchors.all(), nullptr, 2ms,
      [&](const std::string &name, popef::TensorType direction, std::int64_t bytes_done) {
        timeouts.push_back(fmt::format("{} {} {}", name, popef::toString(direction), bytes_done));
        // Same thread as the device here, so no producer call can overlap.
        if (direction == popef::TensorType::INPUT) self->inputQueue(name).flush();
        else self->outputQueue(name).flush();
      });
  self = &manager;
  const std::vector<float> sample = iota(3, 1.0F);
  manager.inputQueue("x").enqueue(sample.data(), 12);
  std::vector<float> x(6, -1.0F);
  manager.streamCallback("x")(x.data());  // waits 2 ms for the second sample, then flushes
  EXPECT_THAT(x, ElementsAre(1, 2, 3, 0, 0, 0));
  std::vector<float> y = iota(6, 0.0F);
  manager.streamCallback("y")(y.data());  // no output buffers: times out, flush discards
  EXPECT_THAT(timeouts, ElementsAre("x INPUT 12", "y OUTPUT 0"));
}

TEST(QueueManagerTest, NoTimeoutCallbackWithoutATimeout) {
  Anchors anchors;
  int calls = 0;
  QueueManager manager(anchors.all(), nullptr, 0ns,
                       [&](const std::string &, popef::TensorType, std::int64_t) { ++calls; });
  const std::vector<float> batch = iota(6, 1.0F);
  manager.inputQueue("x").enqueue(batch.data(), 24);
  std::vector<float> x(6);
  manager.streamCallback("x")(x.data());
  EXPECT_EQ(x, batch);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace mrt
