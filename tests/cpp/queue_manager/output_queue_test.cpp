// OutputQueue on one thread: the test plays both the producer and the device
// (calling drainDeviceBuffer, the stream callback, itself).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "queue/output_queue.hpp"

namespace mrt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The model produces F32[4,2]: 4 samples of 2 floats, 32 bytes.
popef::TensorInfo batchOf4() { return popef::TensorInfo(popef::DataType::F32, {4, 2}); }

OutputQueue makeQueue(std::size_t ring_size = 8) {
  return OutputQueue(std::make_shared<OutputRingBuffer>(ring_size, "y"), batchOf4());
}

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

TEST(OutputQueueTest, OneTransferIsSplitIntoTheEnqueuedBuffers) {
  OutputQueue queue = makeQueue();
  std::vector<float> a(2, -1.0F), b(4, -1.0F), c(2, -1.0F);
  std::vector<std::string> done;
  queue.enqueue(a.data(), 8, [&] { done.push_back("a"); });
  queue.enqueue(b.data(), 16, [&] { done.push_back("b"); });
  queue.enqueue(c.data(), 8, [&] { done.push_back("c"); });
  const std::vector<float> device = iota(8, 0.0F);
  queue.drainDeviceBuffer(device.data());
  EXPECT_THAT(a, ElementsAre(0, 1));
  EXPECT_THAT(b, ElementsAre(2, 3, 4, 5));
  EXPECT_THAT(c, ElementsAre(6, 7));
  EXPECT_THAT(done, ElementsAre("a", "b", "c"));
}

TEST(OutputQueueTest, ALargeBufferGathersSeveralTransfers) {
  OutputQueue queue = makeQueue();
  std::vector<float> big(12, -1.0F), rest(4, -1.0F);
  int big_done = 0;
  queue.enqueue(big.data(), 48, [&] { ++big_done; });
  queue.enqueue(rest.data(), 16);
  queue.drainDeviceBuffer(iota(8, 0.0F).data());
  EXPECT_EQ(big_done, 0);  // only 8 of its 12 floats are written
  queue.drainDeviceBuffer(iota(8, 100.0F).data());
  EXPECT_EQ(big_done, 1);
  EXPECT_THAT(big, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 100, 101, 102, 103));
  EXPECT_THAT(rest, ElementsAre(104, 105, 106, 107));
}

TEST(OutputQueueTest, WritesStraightIntoTheUserBufferEnqueued) {
  OutputQueue queue = makeQueue();
  std::vector<float> user(8, 0.0F);
  queue.enqueue(user.data(), 32);
  const std::vector<float> device = iota(8, 3.0F);
  queue.drainDeviceBuffer(device.data());
  EXPECT_EQ(user, device);
}

TEST(OutputQueueTest, FlushTakesTheDummyOutputOfAPartialTransfer) {
  OutputQueue queue = makeQueue();
  std::vector<float> user(2, -1.0F), next(8, -1.0F);
  queue.enqueue(user.data(), 8);
  queue.flush();  // the remaining 3 samples go to the scratch buffer
  queue.enqueue(next.data(), 32);
  queue.drainDeviceBuffer(iota(8, 0.0F).data());
  queue.drainDeviceBuffer(iota(8, 50.0F).data());
  EXPECT_THAT(user, ElementsAre(0, 1));
  EXPECT_EQ(next, iota(8, 50.0F));
}

TEST(OutputQueueTest, FlushWithNothingPendingTakesAWholeTransfer) {
  OutputQueue queue = makeQueue();
  std::vector<float> user(8, -1.0F);
  queue.flush();
  queue.enqueue(user.data(), 32);
  queue.drainDeviceBuffer(iota(8, 0.0F).data());  // dummy output
  queue.drainDeviceBuffer(iota(8, 20.0F).data());
  EXPECT_EQ(user, iota(8, 20.0F));
}

// A transfer of 1 MiB: the dummy output lands in scratch mapped from zero
// pages (see zeroedScratch), and the next transfer still reaches the user.
TEST(OutputQueueTest, FlushOfABigTransferTakesTheDummyOutput) {
  const std::size_t floats = 4 * 65536;
  OutputQueue queue(std::make_shared<OutputRingBuffer>(8, "y"), popef::TensorInfo(popef::DataType::F32, {4, 65536}));
  std::vector<float> user(floats, -1.0F);
  queue.flush();
  queue.enqueue(user.data(), static_cast<std::int64_t>(floats * sizeof(float)));
  queue.drainDeviceBuffer(iota(floats, 0.0F).data());  // dummy output
  EXPECT_EQ(user, std::vector<float>(floats, -1.0F));
  queue.drainDeviceBuffer(iota(floats, 7.0F).data());
  EXPECT_EQ(user, iota(floats, 7.0F));
}

// The device side's flush: on a full ring it enqueues nothing and says so
// at once (a blocking flush there would wait for the thread that drains).
TEST(OutputQueueTest, TryFlushOnAFullRingReturnsFalseAndLeavesItAlone) {
  OutputQueue queue = makeQueue(2);
  std::vector<float> first(4, -1.0F), second(4, -1.0F), later(8, -1.0F);
  queue.enqueue(first.data(), 16);
  queue.enqueue(second.data(), 16);
  EXPECT_FALSE(queue.tryFlush());  // both entries taken: returns without blocking
  queue.drainDeviceBuffer(iota(8, 0.0F).data());
  EXPECT_EQ(first, iota(4, 0.0F));
  EXPECT_EQ(second, iota(4, 4.0F));
  // Room again: the retried flush takes one whole dummy transfer, then the
  // next buffer gets the transfer after it.
  EXPECT_TRUE(queue.tryFlush());
  queue.enqueue(later.data(), 32);
  queue.drainDeviceBuffer(iota(8, 100.0F).data());
  queue.drainDeviceBuffer(iota(8, 20.0F).data());
  EXPECT_EQ(later, iota(8, 20.0F));
}

TEST(OutputQueueTest, RejectsBadEntries) {
  OutputQueue queue = makeQueue();
  std::vector<float> user(8);
  std::string message;
  EXPECT_EQ(codeOf([&] { queue.enqueue(user.data(), 4); }, &message), ErrorCode::InvalidArgument);
  EXPECT_THAT(message, HasSubstr("output queue 'y': 4 bytes is not a positive multiple of the "
                                 "sample size (8 bytes of F32[4,2])"));
  EXPECT_EQ(codeOf([&] { queue.enqueue(nullptr, 8); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(codeOf([&] { queue.enqueueComplete(); }), ErrorCode::FailedPrecondition);
}

TEST(OutputQueueTest, EnqueueLockAndComplete) {
  OutputQueue queue = makeQueue();
  std::vector<float> user(8, -1.0F);
  OutputData *entry = queue.enqueueLock();
  EXPECT_EQ(queue.enqueueLock(), entry);
  entry->data = reinterpret_cast<std::uint8_t *>(user.data());
  entry->data_size = 32;
  queue.enqueueComplete();
  queue.drainDeviceBuffer(iota(8, 1.0F).data());
  EXPECT_EQ(user, iota(8, 1.0F));
}

TEST(OutputQueueTest, DisconnectDropsTheDeviceDataAndNeverWritesUserMemory) {
  OutputQueue queue = makeQueue();
  std::vector<float> user(8, -1.0F);
  bool completed = false;
  queue.enqueue(user.data(), 32, [&] { completed = true; });
  queue.disconnect();
  queue.drainDeviceBuffer(iota(8, 0.0F).data());  // returns at once
  EXPECT_EQ(user, std::vector<float>(8, -1.0F));
  EXPECT_FALSE(completed);
  EXPECT_EQ(codeOf([&] { queue.enqueue(user.data(), 32); }), ErrorCode::Cancelled);
  queue.reset();
  EXPECT_TRUE(queue.isConnected());
  queue.enqueue(user.data(), 32);
  queue.drainDeviceBuffer(iota(8, 9.0F).data());
  EXPECT_EQ(user, iota(8, 9.0F));
}

}  // namespace
}  // namespace mrt
