// Single-threaded behaviour of mrt::SpscRingBuffer: ordering, locking rules,
// readReset, invalidate, reset, state and errors. The multi-threaded
// behaviour (blocking, waking, timeouts, stress) is in
// spsc_ring_buffer_concurrency_test.cpp.
#include <cstdint>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "queue/spsc_ring_buffer.hpp"

namespace {

using mrt::ErrorCode;
using Ring = mrt::SpscRingBuffer<std::int64_t>;
using ::testing::HasSubstr;

template <typename Call>
void expectError(Call &&call, ErrorCode code, const std::string &message_part) {
  try {
    call();
    ADD_FAILURE() << "expected mrt::Error with code " << static_cast<int>(code);
  } catch (const mrt::Error &error) {
    EXPECT_EQ(error.code(), code);
    EXPECT_THAT(error.what(), HasSubstr(message_part));
  }
}

TEST(SpscRingBuffer, ReadsComeOutInWriteOrderAcrossManyWrapArounds) {
  Ring ring(3, "order");
  std::int64_t next_read = 0;
  for (std::int64_t value = 0; value < 100; ++value) {
    ring.write(value * 7);
    if (value % 3 == 2) {  // drain in bursts so the ring runs full, then empty
      while (ring.readAvailable()) {
        EXPECT_EQ(ring.readLock(), next_read * 7);
        ring.readComplete();
        ++next_read;
      }
    }
  }
  while (ring.readAvailable()) {
    EXPECT_EQ(ring.readLock(), next_read * 7);
    ring.readComplete();
    ++next_read;
  }
  EXPECT_EQ(next_read, 100);
  EXPECT_TRUE(ring.isValid());
}

TEST(SpscRingBuffer, WriteLockReturnsTheSameBufferUntilWriteComplete) {
  Ring ring(4, "wl");
  std::int64_t *first = ring.writeLock();
  EXPECT_EQ(ring.writeLock(), first);
  *first = 11;
  EXPECT_FALSE(ring.readAvailable()) << "nothing is readable before writeComplete";
  ring.writeComplete();
  EXPECT_TRUE(ring.readAvailable());
  std::int64_t *second = ring.writeLock();
  EXPECT_NE(second, first);
  *second = 12;
  ring.writeComplete();
  EXPECT_EQ(ring.readLock(), 11);
  EXPECT_EQ(ring.readLock(), 12);
}

TEST(SpscRingBuffer, WriteAvailableSaysWhetherWriteLockWouldBlock) {
  Ring ring(2, "ring");
  EXPECT_TRUE(ring.writeAvailable());
  ring.write(1);
  ring.write(2);
  EXPECT_FALSE(ring.writeAvailable());  // full
  EXPECT_EQ(ring.readLock(), 1);
  EXPECT_FALSE(ring.writeAvailable());  // read-locked is not released yet
  ring.readComplete();
  EXPECT_TRUE(ring.writeAvailable());
  *ring.writeLock() = 3;
  EXPECT_TRUE(ring.writeAvailable());  // the locked buffer is returned again
  ring.writeComplete();
  EXPECT_FALSE(ring.writeAvailable());
  ring.invalidate();
  EXPECT_TRUE(ring.writeAvailable());  // writeLock no longer blocks
}

TEST(SpscRingBuffer, SeveralReadLocksAreReleasedOldestFirst) {
  Ring ring(4, "multi");
  for (std::int64_t value = 1; value <= 4; ++value) {
    ring.write(value);
  }
  EXPECT_THAT(ring.getState(""), HasSubstr("free 0"));
  const std::int64_t &a = ring.readLock();
  const std::int64_t &b = ring.readLock();
  const std::int64_t &c = ring.readLock();
  EXPECT_EQ(a, 1);
  EXPECT_EQ(b, 2);
  EXPECT_EQ(c, 3);
  EXPECT_NE(&a, &b);
  EXPECT_NE(&b, &c);
  EXPECT_THAT(ring.getState(""), HasSubstr("read-locked 3, read-completed 0, unread 1, free 0"));

  ring.readComplete();  // releases the buffer holding 1: the producer reuses exactly that one
  EXPECT_THAT(ring.getState(""), HasSubstr("read-locked 2, read-completed 1, unread 1, free 1"));
  std::int64_t *reused = ring.writeLock();
  EXPECT_EQ(reused, &a);
  *reused = 5;
  ring.writeComplete();
  EXPECT_EQ(b, 2) << "still read-locked, so not overwritten";
  EXPECT_EQ(c, 3);

  ring.readComplete();
  ring.readComplete();
  EXPECT_EQ(ring.readLock(), 4);
  EXPECT_EQ(ring.readLock(), 5);
  ring.readComplete();
  ring.readComplete();
  EXPECT_FALSE(ring.readAvailable());
  EXPECT_THAT(ring.getState(""), HasSubstr("read-locked 0, read-completed 5, unread 0, free 4"));
}

TEST(SpscRingBuffer, ReadResetPutsReadLockedBuffersBackAtTheFront) {
  Ring ring(4, "rr");
  for (std::int64_t value = 10; value < 13; ++value) {
    ring.write(value);
  }
  EXPECT_EQ(ring.readLock(), 10);
  EXPECT_EQ(ring.readLock(), 11);
  ring.readComplete();  // 10 is done for good
  EXPECT_EQ(ring.readLock(), 12);
  EXPECT_FALSE(ring.readAvailable());

  ring.readReset();  // 11 and 12 go back to the front, in order
  EXPECT_TRUE(ring.readAvailable());
  EXPECT_THAT(ring.getState(""), HasSubstr("read reset pending yes"));
  EXPECT_EQ(ring.readLock(), 11);
  EXPECT_THAT(ring.getState(""), HasSubstr("read-locked 1, read-completed 1, unread 1"));
  EXPECT_EQ(ring.readLock(), 12);
  ring.readComplete();
  ring.readComplete();
  EXPECT_FALSE(ring.readAvailable());
  expectError([&] { ring.readComplete(); }, ErrorCode::FailedPrecondition, "'rr'");
}

TEST(SpscRingBuffer, ReadResetWithNothingReadLockedChangesNothing) {
  Ring ring(2, "rr0");
  ring.write(1);
  ring.readReset();
  EXPECT_EQ(ring.readLock(), 1);
  ring.readComplete();
  ring.readReset();
  EXPECT_FALSE(ring.readAvailable());
  ring.write(2);
  EXPECT_EQ(ring.readLock(), 2);
}

TEST(SpscRingBuffer, CompletingWithoutALockIsAnErrorNamingTheRing) {
  Ring ring(3, "lonely");
  expectError([&] { ring.readComplete(); }, ErrorCode::FailedPrecondition,
              "SpscRingBuffer 'lonely': readComplete() called with no read-locked buffer");
  expectError([&] { ring.writeComplete(); }, ErrorCode::FailedPrecondition,
              "SpscRingBuffer 'lonely': writeComplete() called without a write-locked buffer");
  ring.write(1);
  ring.write(2);
  (void)ring.readLock();
  ring.readComplete();
  expectError([&] { ring.readComplete(); }, ErrorCode::FailedPrecondition, "(1 of 3 buffers readable)");
}

TEST(SpscRingBuffer, ConstructionRejectsZeroBuffersAndNegativeTimeouts) {
  expectError([] { Ring ring(0, "empty"); }, ErrorCode::InvalidArgument,
              "SpscRingBuffer 'empty': num_buffers must be at least 1, got 0");
  expectError([] { Ring ring(2, "neg", [](Ring *) {}, std::chrono::nanoseconds(-5)); },
              ErrorCode::InvalidArgument, "SpscRingBuffer 'neg': timeout_ns must not be negative, got -5");
}

TEST(SpscRingBuffer, SingleBufferRingAlternatesWriteAndRead) {
  Ring ring(1, "one");
  for (std::int64_t value = 0; value < 5; ++value) {
    ring.write(value);
    EXPECT_THAT(ring.getState(""), HasSubstr("free 0"));
    EXPECT_EQ(ring.readLock(), value);
    ring.readComplete();
  }
}

TEST(SpscRingBuffer, InvalidatedRingNeverBlocksAndHandsOutScratchBuffers) {
  Ring ring(2, "dead");
  ring.write(1);
  ring.write(2);  // full
  ring.invalidate();
  EXPECT_FALSE(ring.isValid());

  std::int64_t *scratch = ring.writeLock();  // full: would block on a valid ring
  EXPECT_FALSE(ring.isValid());
  *scratch = 99;  // harmless: not one of the ring's buffers
  ring.writeComplete();  // no-op after invalidate instead of an error
  ring.write(3);  // dropped

  EXPECT_EQ(ring.readLock(), 1) << "already published data may still be read-locked";
  EXPECT_EQ(ring.readLock(), 2);
  const std::int64_t &empty_read = ring.readLock();  // empty: would block on a valid ring
  EXPECT_EQ(empty_read, 0) << "the scratch buffer, not the 99 written to the producer's scratch";
  ring.readComplete();
  ring.readComplete();
  ring.readComplete();  // nothing locked: no-op after invalidate instead of an error
  EXPECT_FALSE(ring.readAvailable()) << "the dropped write was never published";
  EXPECT_THAT(ring.getState("> "), HasSubstr("> SpscRingBuffer 'dead': invalidated"));
}

TEST(SpscRingBuffer, ResetReturnsToTheInitialState) {
  Ring ring(3, "again");
  std::int64_t *first_buffer = ring.writeLock();
  *first_buffer = 1;
  ring.writeComplete();
  ring.write(2);
  (void)ring.readLock();
  (void)ring.writeLock();  // left write-locked
  ring.readReset();
  ring.invalidate();

  ring.reset();
  EXPECT_TRUE(ring.isValid());
  EXPECT_FALSE(ring.readAvailable());
  EXPECT_THAT(ring.getState(""),
              HasSubstr("valid, 3 buffers, written 0, read-locked 0, read-completed 0, unread 0, "
                        "free 3, write-locked no, read reset pending no"));
  expectError([&] { ring.readComplete(); }, ErrorCode::FailedPrecondition, "'again'");
  std::int64_t *after_reset = ring.writeLock();
  EXPECT_EQ(after_reset, first_buffer) << "writing starts at the first buffer again";
  EXPECT_EQ(*after_reset, 0) << "buffers are default-constructed again";
  *after_reset = 7;
  ring.writeComplete();
  ring.write(8);
  EXPECT_EQ(ring.readLock(), 7);
  EXPECT_EQ(ring.readLock(), 8);
}

TEST(SpscRingBuffer, ReportsItsSizeLabelAndState) {
  Ring ring(5, "input 'x' replica 0");
  EXPECT_EQ(ring.numBuffers(), 5u);
  EXPECT_EQ(ring.label(), "input 'x' replica 0");
  ring.write(1);
  ring.write(2);
  (void)ring.writeLock();
  (void)ring.readLock();
  EXPECT_EQ(ring.getState("[dbg] "),
            "[dbg] SpscRingBuffer 'input 'x' replica 0': valid, 5 buffers, written 2, "
            "read-locked 1, read-completed 0, unread 1, free 3, write-locked yes, "
            "read reset pending no, consumer parked no, producer parked no");
  ring.printState("[dbg] ");  // must not throw; goes to the library's logger
}

TEST(SpscRingBuffer, SymmetricFencesBehaveTheSame) {
  Ring ring(2, "sym", nullptr, std::chrono::nanoseconds::zero(), Ring::WakeFences::Symmetric);
  for (std::int64_t value = 0; value < 10; ++value) {
    ring.write(value);
    EXPECT_EQ(ring.readLock(), value);
    ring.readComplete();
  }
}

struct Payload {  // shaped like InputData: a pointer, a size and a callback
  const std::uint8_t *data = nullptr;
  std::int64_t data_size = 0;
  std::function<void()> on_read;
};

TEST(SpscRingBuffer, HoldsStructsWithCallbacksByValue) {
  mrt::SpscRingBuffer<Payload> ring(2, "payload");
  const std::uint8_t bytes[3] = {1, 2, 3};
  int calls = 0;
  ring.write(Payload{bytes, 3, [&calls] { ++calls; }});
  const Payload &read = ring.readLock();
  EXPECT_EQ(read.data, bytes);
  EXPECT_EQ(read.data_size, 3);
  read.on_read();
  EXPECT_EQ(calls, 1);
  ring.readComplete();
}

}  // namespace
