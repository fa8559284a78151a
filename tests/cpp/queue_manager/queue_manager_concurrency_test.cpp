// QueueManager across threads: a producer thread enqueues user buffers of
// varying sample counts while a "device" thread calls the stream callbacks
// (read x, compute y = x * 3 + 1, write y), as a Session's engine would.
// Every output sample is checked; disconnectAll from a third thread releases
// a device thread blocked waiting for data.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "queue/queue_manager.hpp"

namespace mrt {
namespace {

using namespace std::chrono_literals;

constexpr std::int64_t kBatch = 4;   // samples per model transfer
constexpr std::int64_t kWidth = 3;   // floats per sample
constexpr std::int64_t kSamples = 20000;

struct Model {
  popef::Anchor x{"x", "x", popef::TensorInfo(popef::DataType::F32, {kBatch, kWidth}), {1},
                  popef::TensorType::INPUT};
  popef::Anchor y{"y", "y", popef::TensorInfo(popef::DataType::F32, {kBatch, kWidth}), {1},
                  popef::TensorType::OUTPUT};
};

float inputValue(std::int64_t sample, std::int64_t i) {
  return static_cast<float>(sample * kWidth + i) * 0.5F;
}

TEST(QueueManagerConcurrencyTest, ProducerAndDeviceThreadsMoveEverySampleOnce) {
  Model model;
  QueueManager manager({&model.x, &model.y});
  InputQueue &in = manager.inputQueue("x");
  OutputQueue &out = manager.outputQueue("y");
  // User memory for every sample, so no buffer is reused while in flight.
  std::vector<float> inputs(kSamples * kWidth), outputs(kSamples * kWidth, -1.0F);
  for (std::int64_t s = 0; s < kSamples; ++s) {
    for (std::int64_t i = 0; i < kWidth; ++i) inputs[s * kWidth + i] = inputValue(s, i);
  }
  std::atomic<std::int64_t> read_done{0}, written{0};

  std::thread device([&] {
    const std::int64_t transfers = kSamples / kBatch;
    std::vector<float> buffer(kBatch * kWidth);
    for (std::int64_t t = 0; t < transfers; ++t) {
      manager.streamCallback("x")(buffer.data());
      for (float &v : buffer) v = v * 3 + 1;
      manager.streamCallback("y")(buffer.data());
    }
  });
  // Buffers of 1, 2, ... 7 samples: packed and split across transfers.
  std::int64_t sample = 0;
  for (std::int64_t count = 1; sample < kSamples; count = count % 7 + 1) {
    const std::int64_t n = std::min(count, kSamples - sample);
    const std::int64_t bytes = n * kWidth * static_cast<std::int64_t>(sizeof(float));
    out.enqueue(&outputs[sample * kWidth], bytes, [&written, n] { written += n; });
    in.enqueue(&inputs[sample * kWidth], bytes, nullptr, [&read_done, n] { read_done += n; });
    sample += n;
  }
  device.join();
  EXPECT_EQ(read_done.load(), kSamples);
  EXPECT_EQ(written.load(), kSamples);
  for (std::int64_t s = 0; s < kSamples; ++s) {
    for (std::int64_t i = 0; i < kWidth; ++i) {
      ASSERT_EQ(outputs[s * kWidth + i], inputValue(s, i) * 3 + 1) << "sample " << s;
    }
  }
}

TEST(QueueManagerConcurrencyTest, DisconnectAllReleasesABlockedDeviceThread) {
  Model model;
  QueueManager manager({&model.x, &model.y});
  std::atomic<bool> returned{false};
  std::vector<float> buffer(kBatch * kWidth, -1.0F);
  std::thread device([&] {
    manager.streamCallback("x")(buffer.data());  // nothing enqueued: blocks
    returned = true;
  });
  std::this_thread::sleep_for(20ms);  // let it park; the result does not depend on it
  EXPECT_FALSE(returned.load());
  manager.disconnectAll();
  device.join();
  EXPECT_TRUE(returned.load());
  EXPECT_EQ(buffer, std::vector<float>(kBatch * kWidth, 0.0F));
}

TEST(QueueManagerConcurrencyTest, DisconnectAllReleasesABlockedProducer) {
  Model model;
  QueueManager manager({&model.x, &model.y});
  InputQueue &in = manager.inputQueue("x");
  std::vector<float> sample(kWidth, 1.0F);
  for (std::int64_t i = 0; i < in.numBuffers(); ++i) {
    in.enqueue(sample.data(), kWidth * 4);
  }
  std::atomic<int> code{-1};
  std::thread producer([&] {
    try {
      in.enqueue(sample.data(), kWidth * 4);  // ring full: blocks
      code = 0;
    } catch (const Error &error) {
      code = static_cast<int>(error.code());
    }
  });
  std::this_thread::sleep_for(20ms);
  manager.disconnectAll();
  producer.join();
  EXPECT_EQ(code.load(), static_cast<int>(ErrorCode::Cancelled));
}

TEST(QueueManagerConcurrencyTest, TimeoutFlushFromTheDeviceThreadPadsAPartialBatch) {
  // The pattern of batch_size_timeout_ns: the producer enqueued 1 sample of a
  // batch of 4 and stops; the device times out and the callback flushes,
  // serialised with the producer by a mutex.
  Model model;
  std::mutex producer_mutex;
  QueueManager *self = nullptr;
  std::atomic<int> timeouts{0};
  QueueManager manager({&model.x, &model.y}, nullptr, 1ms,
                       [&](const std::string &name, popef::TensorType, std::int64_t) {
                         ++timeouts;
                         std::lock_guard lock(producer_mutex);
                         self->inputQueue(name).flush();
                       });
  self = &manager;
  std::vector<float> sample(kWidth, 2.0F);
  {
    std::lock_guard lock(producer_mutex);
    manager.inputQueue("x").enqueue(sample.data(), kWidth * 4);
  }
  std::vector<float> buffer(kBatch * kWidth, -1.0F);
  std::thread device([&] { manager.streamCallback("x")(buffer.data()); });
  device.join();
  EXPECT_EQ(timeouts.load(), 1);
  std::vector<float> expected(kBatch * kWidth, 0.0F);
  std::fill(expected.begin(), expected.begin() + kWidth, 2.0F);
  EXPECT_EQ(buffer, expected);
}

}  // namespace
}  // namespace mrt
