// InputQueue on one thread: the test plays both the producer and the device
// (calling fillDeviceBuffer, the stream callback, itself).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "common/error.hpp"
#include "queue/input_queue.hpp"

namespace mrt {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// The model transfers F32[4,2]: 4 samples of 2 floats, 32 bytes.
popef::TensorInfo batchOf4() { return popef::TensorInfo(popef::DataType::F32, {4, 2}); }

InputQueue makeQueue(std::size_t ring_size = 8, const popef::TensorInfo &info = batchOf4()) {
  return InputQueue(std::make_shared<InputRingBuffer>(ring_size, "x"), info);
}

std::vector<float> iota(std::size_t n, float first) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), first);
  return values;
}

std::vector<float> fill(InputQueue &queue) {
  std::vector<float> device(8, -1.0F);
  queue.fillDeviceBuffer(device.data());
  return device;
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

TEST(InputQueueTest, DescribesItsTensorAndRing) {
  InputQueue queue = makeQueue(6);
  EXPECT_EQ(queue.tensorInfo(), batchOf4());
  EXPECT_EQ(queue.numBuffers(), 6);
  EXPECT_EQ(queue.name(), "x");
  EXPECT_EQ(queue.sampleSize(), 8);
  EXPECT_TRUE(queue.isConnected());
}

TEST(InputQueueTest, OneWholeBatchIsCopiedAsIs) {
  InputQueue queue = makeQueue();
  const std::vector<float> user = iota(8, 1.0F);
  queue.enqueue(user.data(), 32);
  EXPECT_EQ(fill(queue), user);
}

// The device side's flush: on a full ring it enqueues nothing and returns at
// once; once the device has made room it pads as flush() would.
TEST(InputQueueTest, TryFlushOnAFullRingReturnsFalseAndPadsOnceThereIsRoom) {
  InputQueue queue = makeQueue(2);
  const std::vector<float> a = iota(4, 1.0F), b = iota(4, 5.0F), c = iota(2, 9.0F);
  queue.enqueue(a.data(), 16);
  queue.enqueue(b.data(), 16);
  EXPECT_FALSE(queue.tryFlush());  // full: nothing enqueued, no waiting
  EXPECT_EQ(fill(queue), iota(8, 1.0F));
  queue.enqueue(c.data(), 8);
  EXPECT_TRUE(queue.tryFlush());  // room again: completes the transfer with zeros
  EXPECT_EQ(fill(queue), (std::vector<float>{9, 10, 0, 0, 0, 0, 0, 0}));
}

TEST(InputQueueTest, SmallBuffersArePackedIntoOneTransfer) {
  InputQueue queue = makeQueue();
  const std::vector<float> a = iota(2, 10.0F);  // 1 sample
  const std::vector<float> b = iota(4, 20.0F);  // 2 samples
  const std::vector<float> c = iota(2, 30.0F);  // 1 sample
  queue.enqueue(a.data(), 8);
  queue.enqueue(b.data(), 16);
  queue.enqueue(c.data(), 8);
  EXPECT_THAT(fill(queue), ElementsAre(10, 11, 20, 21, 22, 23, 30, 31));
}

TEST(InputQueueTest, LargeBuffersAreSplitAcrossTransfers) {
  InputQueue queue = makeQueue();
  const std::vector<float> big = iota(12, 0.0F);    // 6 samples: 1.5 transfers
  const std::vector<float> rest = iota(4, 100.0F);  // 2 samples: completes the second
  queue.enqueue(big.data(), 48);
  queue.enqueue(rest.data(), 16);
  EXPECT_THAT(fill(queue), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_THAT(fill(queue), ElementsAre(8, 9, 10, 11, 100, 101, 102, 103));
}

TEST(InputQueueTest, CarriesPointersAndReadsTheBytesWhenTheDeviceAsks) {
  InputQueue queue = makeQueue();
  std::vector<float> user(8, 1.0F);
  queue.enqueue(user.data(), 32);
  // Written after enqueue: a queue of bytes would have the old values.
  user.assign(8, 7.0F);
  EXPECT_EQ(fill(queue), std::vector<float>(8, 7.0F));
}

TEST(InputQueueTest, CallbacksRunAroundTheCopyOfEachBuffer) {
  InputQueue queue = makeQueue();
  std::vector<std::string> events;
  std::vector<float> big = iota(12, 0.0F);
  std::vector<float> small = iota(4, 50.0F);
  queue.enqueue(big.data(), 48, [&] { events.push_back("big start"); },
                [&] { events.push_back("big complete"); });
  queue.enqueue(small.data(), 16, [&] { events.push_back("small start"); },
                [&] { events.push_back("small complete"); });
  fill(queue);
  EXPECT_THAT(events, ElementsAre("big start"));  // big is only half copied
  fill(queue);
  EXPECT_THAT(events, ElementsAre("big start", "big complete", "small start", "small complete"));
}

TEST(InputQueueTest, EnqueueLockAndCompleteFillAnEntryInPlace) {
  InputQueue queue = makeQueue();
  const std::vector<float> user = iota(8, 3.0F);
  InputData *entry = queue.enqueueLock();
  EXPECT_EQ(entry->data, nullptr);  // a fresh entry is empty
  EXPECT_EQ(queue.enqueueLock(), entry);  // locking again gives the same entry
  entry->data = reinterpret_cast<const std::uint8_t *>(user.data());
  entry->data_size = 32;
  bool completed = false;
  entry->readCompleteCallback = [&] { completed = true; };
  queue.enqueueComplete();
  EXPECT_NE(queue.enqueueLock(), entry);  // the next lock is another entry
  EXPECT_EQ(fill(queue), user);
  EXPECT_TRUE(completed);
}

TEST(InputQueueTest, RejectsSizesThatAreNotWholeSamplesAndNullData) {
  InputQueue queue = makeQueue();
  const std::vector<float> user = iota(8, 0.0F);
  std::string message;
  EXPECT_EQ(codeOf([&] { queue.enqueue(user.data(), 12, nullptr, nullptr); }, &message),
            ErrorCode::InvalidArgument);
  EXPECT_THAT(message, HasSubstr("input queue 'x': 12 bytes is not a positive multiple of the "
                                 "sample size (8 bytes of F32[4,2])"));
  EXPECT_EQ(codeOf([&] { queue.enqueue(user.data(), 0); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf([&] { queue.enqueue(nullptr, 8); }, &message), ErrorCode::InvalidArgument);
  EXPECT_THAT(message, HasSubstr("data must not be NULL"));
  EXPECT_EQ(codeOf([&] { queue.enqueueComplete(); }, &message), ErrorCode::FailedPrecondition);
  EXPECT_THAT(message, HasSubstr("without enqueueLock"));

  // A bad entry stays locked so that it can be corrected.
  InputData *entry = queue.enqueueLock();
  entry->data = reinterpret_cast<const std::uint8_t *>(user.data());
  entry->data_size = 31;
  EXPECT_EQ(codeOf([&] { queue.enqueueComplete(); }), ErrorCode::InvalidArgument);
  entry->data_size = 32;
  queue.enqueueComplete();
  EXPECT_EQ(fill(queue), user);
}

TEST(InputQueueTest, FlushCompletesAPartialTransferWithZeros) {
  InputQueue queue = makeQueue();
  const std::vector<float> one = iota(2, 5.0F);
  queue.enqueue(one.data(), 8);
  queue.flush();
  EXPECT_THAT(fill(queue), ElementsAre(5, 6, 0, 0, 0, 0, 0, 0));
}

TEST(InputQueueTest, FlushWithNothingPendingEnqueuesAWholeDummyTransfer) {
  InputQueue queue = makeQueue();
  const std::vector<float> user = iota(8, 1.0F);
  queue.enqueue(user.data(), 32);
  queue.flush();
  EXPECT_EQ(fill(queue), user);
  EXPECT_EQ(fill(queue), std::vector<float>(8, 0.0F));
  EXPECT_FALSE(queue.ringBuffer().readAvailable());
}

// A transfer of 1 MiB: its dummy entry is mapped from zero pages rather
// than taken from calloc (see zeroedScratch), and still reads as zeros,
// twice (the device never writes an input's scratch).
TEST(InputQueueTest, FlushOfABigTransferFeedsZeros) {
  const popef::TensorInfo big(popef::DataType::F32, {4, 65536});
  InputQueue queue = makeQueue(8, big);
  std::vector<float> device(4 * 65536, -1.0F);
  for (int run = 0; run < 2; ++run) {
    queue.flush();
    queue.fillDeviceBuffer(device.data());
    EXPECT_EQ(device, std::vector<float>(4 * 65536, 0.0F)) << "run " << run;
    std::fill(device.begin(), device.end(), -1.0F);
  }
}

TEST(InputQueueTest, DisconnectFeedsZerosWithoutReadingUserMemory) {
  InputQueue queue = makeQueue();
  std::vector<float> user = iota(12, 1.0F);
  bool completed = false;
  queue.enqueue(user.data(), 48, nullptr, [&] { completed = true; });
  fill(queue);  // half of user is copied; the entry stays current
  queue.disconnect();
  user.clear();
  user.shrink_to_fit();  // ASan would catch a read of the freed buffer
  EXPECT_FALSE(queue.isConnected());
  EXPECT_EQ(fill(queue), std::vector<float>(8, 0.0F));
  EXPECT_FALSE(completed);
  std::string message;
  const std::vector<float> more = iota(2, 0.0F);
  EXPECT_EQ(codeOf([&] { queue.enqueue(more.data(), 8); }, &message), ErrorCode::Cancelled);
  EXPECT_THAT(message, HasSubstr("input queue 'x' is disconnected"));
  EXPECT_EQ(codeOf([&] { queue.enqueueLock(); }), ErrorCode::Cancelled);
  queue.flush();  // nothing to flush on a disconnected queue, and no error
}

TEST(InputQueueTest, ResetEmptiesAndReconnects) {
  InputQueue queue = makeQueue();
  const std::vector<float> stale = iota(6, 1.0F);  // 3 samples pending
  queue.enqueue(stale.data(), 24);
  queue.disconnect();
  queue.reset();
  EXPECT_TRUE(queue.isConnected());
  EXPECT_FALSE(queue.ringBuffer().readAvailable());
  // The partial transfer is forgotten too: a flush now adds a whole one.
  queue.flush();
  EXPECT_EQ(fill(queue), std::vector<float>(8, 0.0F));
  const std::vector<float> fresh = iota(8, 40.0F);
  queue.enqueue(fresh.data(), 32);
  EXPECT_EQ(fill(queue), fresh);
}

TEST(InputQueueTest, RingFullOfSingleSamplesStillMakesTransfers) {
  InputQueue queue = makeQueue(4);  // exactly one transfer of single samples
  std::vector<std::vector<float>> samples;
  for (float first : {0.0F, 10.0F, 20.0F, 30.0F}) samples.push_back(iota(2, first));
  for (int round = 0; round < 3; ++round) {
    for (const auto &sample : samples) queue.enqueue(sample.data(), 8);
    EXPECT_THAT(fill(queue), ElementsAre(0, 1, 10, 11, 20, 21, 30, 31));
  }
}

TEST(InputQueueTest, RejectsTensorsWithoutBytes) {
  EXPECT_EQ(codeOf([] { makeQueue(2, popef::TensorInfo(popef::DataType::F32, {0, 3})); }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf([] { InputQueue(nullptr, batchOf4()); }), ErrorCode::InvalidArgument);
}

TEST(InputQueueTest, ScalarTensorsAreOneSample) {
  InputQueue queue = makeQueue(2, popef::TensorInfo(popef::DataType::S32, {}));
  EXPECT_EQ(queue.sampleSize(), 4);
  const std::int32_t value = 42;
  queue.enqueue(&value, 4);
  std::int32_t device = 0;
  queue.fillDeviceBuffer(&device);
  EXPECT_EQ(device, 42);
}

// The prefetch path: fills only a transfer the producer has enqueued in
// full, never waits, and counts again from zero after reset().
TEST(InputQueueTest, TryFillMovesOnlyAWholeEnqueuedTransfer) {
  InputQueue queue = makeQueue();
  std::vector<float> device(8, -1.0F);
  EXPECT_FALSE(queue.tryFillDeviceBuffer(device.data()));  // nothing enqueued
  const std::vector<float> first = iota(6, 0.0F), second = iota(4, 6.0F);
  queue.enqueue(first.data(), 24);  // 3 of the 4 samples
  EXPECT_FALSE(queue.tryFillDeviceBuffer(device.data()));
  EXPECT_THAT(device, ElementsAreArray(std::vector<float>(8, -1.0F)));  // untouched
  queue.enqueue(second.data(), 16);  // the 4th, and one of the next transfer
  ASSERT_TRUE(queue.tryFillDeviceBuffer(device.data()));
  EXPECT_THAT(device, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
  EXPECT_FALSE(queue.tryFillDeviceBuffer(device.data()));  // 1 sample of the next is there
  const std::vector<float> third = iota(8, 20.0F);
  queue.reset();  // drops the partial sample
  queue.enqueue(third.data(), 32);
  ASSERT_TRUE(queue.tryFillDeviceBuffer(device.data()));
  EXPECT_THAT(device, ElementsAreArray(third));
  queue.enqueue(third.data(), 32);
  queue.disconnect();
  EXPECT_FALSE(queue.tryFillDeviceBuffer(device.data()));  // disconnected: no user memory is read
}

}  // namespace
}  // namespace mrt
