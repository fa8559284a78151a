// Queues batched along a dimension other than 0 (ModelRunner's
// batching_dim): a sample is the d-th dimension's slice, so packing and
// splitting requests gathers and scatters rows. The test plays both the
// producer and the device (calling the stream callbacks itself) and checks
// every byte against index arithmetic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "queue/input_queue.hpp"
#include "queue/output_queue.hpp"
#include "queue/queue_manager.hpp"
#include "queue/sample_layout.hpp"

namespace mrt {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// A time-major tensor F32[T, B, F] batched along dimension 1.
constexpr std::size_t kT = 2, kB = 4, kF = 3;
popef::TensorInfo timeMajor() { return popef::TensorInfo(popef::DataType::F32, {kT, kB, kF}); }

// A request of n samples, [T, n, F], with values that name their place:
// request r, time t, sample j, feature f.
std::vector<float> request(int r, std::size_t n) {
  std::vector<float> values(kT * n * kF);
  for (std::size_t t = 0; t < kT; ++t) {
    for (std::size_t j = 0; j < n; ++j) {
      for (std::size_t f = 0; f < kF; ++f) values[(t * n + j) * kF + f] = float(r * 1000 + t * 100 + j * 10 + f);
    }
  }
  return values;
}

// The samples of `requests` in order, each [T][F].
std::vector<std::vector<float>> samplesOf(const std::vector<std::vector<float>> &requests) {
  std::vector<std::vector<float>> samples;
  for (const auto &req : requests) {
    const std::size_t n = req.size() / (kT * kF);
    for (std::size_t j = 0; j < n; ++j) {
      std::vector<float> sample(kT * kF);
      for (std::size_t t = 0; t < kT; ++t) {
        for (std::size_t f = 0; f < kF; ++f) sample[t * kF + f] = req[(t * n + j) * kF + f];
      }
      samples.push_back(sample);
    }
  }
  return samples;
}

// Model transfer k as the device must see it: [T, B, F] of samples kB*k...
// (zeros past the last sample).
std::vector<float> expectedTransfer(const std::vector<std::vector<float>> &samples, std::size_t k) {
  std::vector<float> device(kT * kB * kF, 0.0F);
  for (std::size_t b = 0; b < kB && k * kB + b < samples.size(); ++b) {
    for (std::size_t t = 0; t < kT; ++t) {
      for (std::size_t f = 0; f < kF; ++f) device[(t * kB + b) * kF + f] = samples[k * kB + b][t * kF + f];
    }
  }
  return device;
}

std::int64_t bytesOf(const std::vector<float> &v) { return static_cast<std::int64_t>(v.size() * sizeof(float)); }

TEST(SampleLayoutTest, DescribesRowsAndSamplesOfEachDimension) {
  const popef::TensorInfo info = timeMajor();
  const SampleLayout first(info, 0);
  EXPECT_EQ(first.batchSize(), 2);
  EXPECT_EQ(first.sampleBytes(), 4 * 3 * 4);
  const SampleLayout middle(info, 1);
  EXPECT_EQ(middle.batchSize(), 4);
  EXPECT_EQ(middle.sampleBytes(), 2 * 3 * 4);
  const SampleLayout last(info, 2);
  EXPECT_EQ(last.batchSize(), 3);
  EXPECT_EQ(last.sampleBytes(), 2 * 4 * 4);
  EXPECT_EQ(SampleLayout(popef::TensorInfo(popef::DataType::F32, {}), 0).sampleBytes(), 4);
}

TEST(SampleLayoutTest, RejectsADimensionTheTensorDoesNotHave) {
  try {
    SampleLayout layout(timeMajor(), 3);
    FAIL() << "no error";
  } catch (const Error &error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("has no dimension 3 to batch along (it has 3)"));
  }
}

TEST(SampleLayoutTest, CopiesSamplesAlongTheLastDimension) {
  // [2, 3] batched along dimension 1: samples are columns.
  const SampleLayout columns(popef::TensorInfo(popef::DataType::U8, {2, 3}), 1);
  const std::vector<std::uint8_t> src = {1, 2, 3, 4, 5, 6};  // two rows of 3 columns
  std::vector<std::uint8_t> dst(4, 0);                        // two rows of 2 columns
  // Columns 1 and 2 of src into columns 0 and 1 of dst (offsets as if
  // batched along dimension 0: 2 bytes a sample).
  columns.copy(dst.data(), 4, 0, src.data(), 6, 2, 4);
  EXPECT_THAT(dst, ElementsAreArray({2, 3, 5, 6}));
}

InputQueue inputQueue(std::size_t ring = 8) {
  return InputQueue(std::make_shared<InputRingBuffer>(ring, "x"), timeMajor(), 1);
}

OutputQueue outputQueue(std::size_t ring = 8) {
  return OutputQueue(std::make_shared<OutputRingBuffer>(ring, "y"), timeMajor(), 1);
}

TEST(BatchingDimQueueTest, SampleSizeIsOneSliceOfTheBatchingDimension) {
  InputQueue queue = inputQueue();
  EXPECT_EQ(queue.sampleSize(), static_cast<std::int64_t>(kT * kF * sizeof(float)));
  EXPECT_EQ(queue.batchingDim(), 1U);
  std::vector<float> half(kF);
  try {
    queue.enqueue(half.data(), bytesOf(half));
    FAIL() << "no error";
  } catch (const Error &error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("input queue 'x': 12 bytes is not a positive multiple of the sample size "
                                        "(24 bytes of F32[2,4,3] batched along dimension 1)"));
  }
}

TEST(BatchingDimQueueTest, InputQueuePacksSmallRequestsAndSplitsLargeOnes) {
  InputQueue queue = inputQueue();
  // 1 + 6 + 1 samples: the 6 are split across the first and second
  // transfers, the last 1 completes the second.
  const std::vector<std::vector<float>> requests = {request(1, 1), request(2, 6), request(3, 1)};
  for (const auto &req : requests) queue.enqueue(req.data(), bytesOf(req));
  const auto samples = samplesOf(requests);
  for (std::size_t k = 0; k < 2; ++k) {
    std::vector<float> device(kT * kB * kF, -1.0F);
    queue.fillDeviceBuffer(device.data());
    EXPECT_THAT(device, ElementsAreArray(expectedTransfer(samples, k))) << "transfer " << k;
  }
  EXPECT_FALSE(queue.hasPendingData());
}

TEST(BatchingDimQueueTest, FlushPadsAPartialBatchWithZerosInEveryRow) {
  InputQueue queue = inputQueue();
  const std::vector<std::vector<float>> requests = {request(1, 3)};
  queue.enqueue(requests[0].data(), bytesOf(requests[0]));
  queue.flush();
  std::vector<float> device(kT * kB * kF, -1.0F);
  queue.fillDeviceBuffer(device.data());
  EXPECT_THAT(device, ElementsAreArray(expectedTransfer(samplesOf(requests), 0)));
}

TEST(BatchingDimQueueTest, DisconnectedMidTransferTheInputQueueZeroesTheRestOfEveryRow) {
  // The device copies the two samples enqueued, then waits for more; the
  // ring's timeout callback (on the device thread) disconnects the queue,
  // which ends the transfer with zeros in the other samples' places.
  InputQueue *self = nullptr;
  auto ring = std::make_shared<InputRingBuffer>(
      8, "x", [&self](InputRingBuffer *) { self->disconnect(); }, std::chrono::milliseconds(1));
  InputQueue queue(ring, timeMajor(), 1);
  self = &queue;
  const std::vector<std::vector<float>> requests = {request(1, 2)};
  queue.enqueue(requests[0].data(), bytesOf(requests[0]));
  std::vector<float> device(kT * kB * kF, -1.0F);
  queue.fillDeviceBuffer(device.data());
  EXPECT_THAT(device, ElementsAreArray(expectedTransfer(samplesOf(requests), 0)));
  EXPECT_FALSE(queue.isConnected());
}

TEST(BatchingDimQueueTest, OutputQueueScattersEachTransferIntoTheCallersBuffers) {
  OutputQueue queue = outputQueue();
  // Two device transfers whose samples are numbered; outputs of 3, 4 and 1
  // samples receive them in order.
  std::vector<std::vector<float>> outputs = {std::vector<float>(kT * 3 * kF, -1.0F),
                                             std::vector<float>(kT * 4 * kF, -1.0F),
                                             std::vector<float>(kT * 1 * kF, -1.0F)};
  int completed = 0;
  for (auto &out : outputs) queue.enqueue(out.data(), bytesOf(out), [&] { ++completed; });
  const std::vector<std::vector<float>> produced = {request(7, kB), request(8, kB)};
  for (const auto &device : produced) queue.drainDeviceBuffer(device.data());
  EXPECT_EQ(completed, 3);
  EXPECT_EQ(samplesOf(outputs), samplesOf(produced));
}

TEST(BatchingDimQueueTest, QueueManagerNamesTheQueueWhoseTensorLacksTheDimension) {
  const popef::Anchor x("x", "x", popef::TensorInfo(popef::DataType::F32, {kT, kB, kF}), {0},
                        popef::TensorType::INPUT);
  const popef::Anchor bias("bias", "bias", popef::TensorInfo(popef::DataType::F32, {kF}), {0},
                           popef::TensorType::INPUT);
  EXPECT_NO_THROW(QueueManager({&x}, ring_size_multiplier_factory::constantRingSizeMult(2),
                               std::chrono::nanoseconds::zero(), nullptr, 1));
  try {
    QueueManager manager({&x, &bias}, ring_size_multiplier_factory::constantRingSizeMult(2),
                         std::chrono::nanoseconds::zero(), nullptr, 1);
    FAIL() << "no error";
  } catch (const Error &error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr("input queue 'bias': tensor F32[3] has no dimension 1 to batch along"));
  }
}

}  // namespace
}  // namespace mrt
