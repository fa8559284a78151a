// mrt::SpscRingBuffer across threads: parked sides wake on data, on free
// space, on invalidate() and on readReset(); the read timeout callback; and a
// two-thread stress run checked item by item. Runs under TSan in CI.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "queue/spsc_ring_buffer.hpp"

namespace {

using namespace std::chrono_literals;
using Ring = mrt::SpscRingBuffer<std::int64_t>;

// Test-side polling (the ring itself never sleeps in a loop): true once
// `condition` holds, false after 20 s.
template <typename Condition>
bool eventually(Condition condition) {
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) {
      return false;
    }
    std::this_thread::sleep_for(100us);
  }
  return true;
}

bool consumerParked(const Ring &ring) {
  return ring.getState("").find("consumer parked yes") != std::string::npos;
}
bool producerParked(const Ring &ring) {
  return ring.getState("").find("producer parked yes") != std::string::npos;
}

TEST(SpscRingBufferThreads, ParkedReaderWakesWhenDataArrives) {
  Ring ring(4, "wake-read");
  std::atomic<std::int64_t> got{-1};
  std::thread consumer([&] {
    got = ring.readLock();
    ring.readComplete();
  });
  ASSERT_TRUE(eventually([&] { return consumerParked(ring); }));
  ring.write(42);
  consumer.join();
  EXPECT_EQ(got, 42);
  EXPECT_TRUE(ring.isValid());
  EXPECT_FALSE(consumerParked(ring));
}

TEST(SpscRingBufferThreads, ParkedWriterWakesWhenABufferIsReleased) {
  Ring ring(2, "wake-write");
  ring.write(1);
  ring.write(2);
  std::atomic<bool> written{false};
  std::thread producer([&] {
    ring.write(3);  // full: blocks until the consumer releases a buffer
    written = true;
  });
  ASSERT_TRUE(eventually([&] { return producerParked(ring); }));
  EXPECT_FALSE(written);
  EXPECT_EQ(ring.readLock(), 1);
  ring.readComplete();
  producer.join();
  EXPECT_TRUE(written);
  EXPECT_EQ(ring.readLock(), 2);
  EXPECT_EQ(ring.readLock(), 3);
}

TEST(SpscRingBufferThreads, WriterTakesASingleFreedBufferWhenTheReaderNeedsMoreData) {
  // A writer facing a full ring prefers to wait for several free buffers, but
  // here the reader frees one and then needs the next item before it frees
  // any other: the writer must fill that one buffer.
  constexpr std::int64_t kBuffers = 16;
  Ring ring(kBuffers, "one-freed");
  std::thread producer([&] {
    for (std::int64_t value = 0; value <= kBuffers; ++value) {
      ring.write(value);
    }
  });
  for (std::int64_t value = 0; value < kBuffers; ++value) {
    EXPECT_EQ(ring.readLock(), value);
  }
  ring.readComplete();
  EXPECT_EQ(ring.readLock(), kBuffers) << "the last item fits in the one freed buffer";
  producer.join();
}

TEST(SpscRingBufferThreads, InvalidateWakesABlockedReader) {
  Ring ring(4, "kill-read");
  std::atomic<bool> returned{false};
  std::atomic<bool> valid_after{true};
  std::thread consumer([&] {
    (void)ring.readLock();
    valid_after = ring.isValid();
    returned = true;
  });
  ASSERT_TRUE(eventually([&] { return consumerParked(ring); }));
  EXPECT_FALSE(returned);
  ring.invalidate();
  consumer.join();
  EXPECT_TRUE(returned);
  EXPECT_FALSE(valid_after);
}

TEST(SpscRingBufferThreads, InvalidateWakesABlockedWriter) {
  Ring ring(1, "kill-write");
  ring.write(1);
  std::atomic<bool> returned{false};
  std::atomic<bool> valid_after{true};
  std::thread producer([&] {
    (void)ring.writeLock();
    valid_after = ring.isValid();
    returned = true;
  });
  ASSERT_TRUE(eventually([&] { return producerParked(ring); }));
  EXPECT_FALSE(returned);
  ring.invalidate();
  producer.join();
  EXPECT_TRUE(returned);
  EXPECT_FALSE(valid_after);
  EXPECT_EQ(ring.readLock(), 1) << "the published item is untouched";
}

TEST(SpscRingBufferThreads, InvalidateWakesBothSidesOfAPair) {
  Ring requests(1, "pair-requests");
  Ring replies(1, "pair-replies");
  requests.write(1);  // full, so the producer below blocks
  std::thread blocked_writer([&] { requests.write(2); });
  std::thread blocked_reader([&] { (void)replies.readLock(); });
  ASSERT_TRUE(eventually([&] { return producerParked(requests) && consumerParked(replies); }));
  requests.invalidate();
  replies.invalidate();
  blocked_writer.join();
  blocked_reader.join();
  EXPECT_FALSE(requests.isValid());
  EXPECT_FALSE(replies.isValid());
}

TEST(SpscRingBufferThreads, ReadResetFromAnotherThreadWakesABlockedReadLock) {
  Ring ring(4, "reset-wake");
  ring.write(5);
  std::atomic<std::int64_t> first{-1};
  std::atomic<std::int64_t> second{-1};
  std::thread consumer([&] {
    first = ring.readLock();
    second = ring.readLock();  // nothing more written: blocks until readReset()
    ring.readComplete();
  });
  ASSERT_TRUE(eventually([&] { return consumerParked(ring); }));
  EXPECT_EQ(first, 5);
  ring.readReset();
  consumer.join();
  EXPECT_EQ(second, 5) << "the read-locked buffer came back to the front";
  EXPECT_TRUE(ring.isValid());
  EXPECT_FALSE(ring.readAvailable());
}

TEST(SpscRingBufferThreads, TimeoutCallbackFiresWhileWaitingAndStopsOnceDataArrives) {
  constexpr auto kTimeout = 2ms;
  std::atomic<int> calls{0};
  std::atomic<Ring *> passed{nullptr};
  std::atomic<std::int64_t> first_call_after_ns{-1};
  std::chrono::steady_clock::time_point wait_start;
  Ring ring(
      4, "timeout",
      [&](Ring *ring_arg) {
        if (calls.fetch_add(1) == 0) {
          first_call_after_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - wait_start)
                                    .count();
        }
        passed = ring_arg;
      },
      kTimeout);
  std::atomic<std::int64_t> got{-1};
  std::atomic<bool> started{false};
  std::thread consumer([&] {
    wait_start = std::chrono::steady_clock::now();
    started = true;
    got = ring.readLock();
    ring.readComplete();
  });
  ASSERT_TRUE(eventually([&] { return calls.load() >= 3; })) << "called repeatedly while waiting";
  EXPECT_EQ(passed.load(), &ring);
  EXPECT_GE(first_call_after_ns.load(), std::chrono::nanoseconds(kTimeout).count())
      << "not before timeout_ns of waiting";
  ring.write(9);
  consumer.join();
  EXPECT_EQ(got, 9);
  const int calls_when_data_arrived = calls;
  std::this_thread::sleep_for(10 * kTimeout);
  EXPECT_EQ(calls.load(), calls_when_data_arrived) << "no more calls once data arrived";
  ASSERT_TRUE(started);
}

TEST(SpscRingBufferThreads, TimeoutCallbackIsNotCalledWhenDataIsAlreadyThere) {
  std::atomic<int> calls{0};
  Ring ring(4, "timeout-idle", [&](Ring *) { ++calls; }, 1ns);
  ring.write(1);
  EXPECT_EQ(ring.readLock(), 1);
  EXPECT_EQ(calls.load(), 0);
}

TEST(SpscRingBufferThreads, TimeoutCallbackCanFlushDataIntoTheRing) {
  // What a queue's flush does: on timeout, the consumer's thread feeds the
  // ring itself (here the producer thread is idle, so there is one writer).
  std::atomic<int> calls{0};
  Ring ring(
      4, "timeout-flush",
      [&](Ring *self) {
        if (++calls == 2) {
          self->write(-1);
        }
      },
      1ms);
  EXPECT_EQ(ring.readLock(), -1);
  EXPECT_EQ(calls.load(), 2);
  EXPECT_TRUE(ring.isValid());
}

TEST(SpscRingBufferThreads, TimeoutCallbackCanInvalidateToEndTheWait) {
  Ring ring(4, "timeout-kill", [](Ring *self) { self->invalidate(); }, 1ms);
  (void)ring.readLock();
  EXPECT_FALSE(ring.isValid());
}

// The number of stress items: MRT_STRESS_ITEMS if set, else 10 million.
std::int64_t stressItems() {
  const char *text = std::getenv("MRT_STRESS_ITEMS");
  return text != nullptr ? std::strtoll(text, nullptr, 10) : 10'000'000;
}

struct Item {  // two words, so a torn or stale read shows up as a bad check
  std::int64_t sequence = -1;
  std::uint64_t check = 0;
};

std::uint64_t checkOf(std::int64_t sequence) {
  return ~static_cast<std::uint64_t>(sequence) * 0x9E3779B97F4A7C15ull;
}

// Producer mixes write() and writeLock()/writeComplete(); consumer holds up to
// three read locks at a time, with a readReset() now and then, and checks
// every item in order. A small ring keeps both sides hitting full and empty.
void runStress(mrt::SpscRingBuffer<Item>::WakeFences fences, std::int64_t items) {
  mrt::SpscRingBuffer<Item> ring(64, "stress", nullptr, std::chrono::nanoseconds::zero(), fences);
  std::thread producer([&] {
    for (std::int64_t sequence = 0; sequence < items; ++sequence) {
      if (sequence % 2 == 0) {
        ring.write(Item{sequence, checkOf(sequence)});
      } else {
        Item *slot = ring.writeLock();
        slot->sequence = sequence;
        slot->check = checkOf(sequence);
        ring.writeComplete();
      }
    }
  });
  std::int64_t expected = 0;
  std::int64_t mismatches = 0;
  std::int64_t last_reread = -1;
  while (expected < items) {
    const std::int64_t batch = std::min<std::int64_t>(1 + expected % 3, items - expected);
    for (std::int64_t i = 0; i < batch; ++i) {
      const Item &item = ring.readLock();
      mismatches += item.sequence != expected + i || item.check != checkOf(expected + i);
    }
    if (expected % 1001 == 0 && expected != last_reread) {  // read this batch once more
      ring.readReset();
      last_reread = expected;
      continue;
    }
    for (std::int64_t i = 0; i < batch; ++i) {
      ring.readComplete();
    }
    expected += batch;
    if (mismatches != 0) {
      break;
    }
  }
  producer.join();
  EXPECT_EQ(mismatches, 0) << "first bad item near " << expected;
  EXPECT_EQ(expected, items);
  EXPECT_FALSE(ring.readAvailable());
  EXPECT_TRUE(ring.isValid());
}

TEST(SpscRingBufferThreads, StressItemsArriveInOrderIntact) {
  runStress(mrt::SpscRingBuffer<Item>::WakeFences::Automatic, stressItems());
}

TEST(SpscRingBufferThreads, StressWithSymmetricFences) {
  runStress(mrt::SpscRingBuffer<Item>::WakeFences::Symmetric, stressItems() / 10);
}

}  // namespace
