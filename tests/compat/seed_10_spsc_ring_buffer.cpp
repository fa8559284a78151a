// The seed's API reference (001), the SpscRingBuffer example: the producer's
// write with the isValid() check, as a whole program. A producer thread
// writes 10000 values through the seed's lines while this thread reads
// them; then invalidate() makes a blocked writeLock() return and the seed's
// check skip the write. Seed lines are marked "seed:", what the seed elides
// "filled:".
#include <atomic>
#include <thread>

#include "compat_test_util.hpp"
#include "model_runtime/SpscRingBuffer.hpp"

using compat_test::require;

namespace {

// filled: the function around the seed's lines; returns whether it wrote.
bool produce(model_runtime::SpscRingBuffer<long> &rb, long obj) {
  // seed:
  auto dst = rb.writeLock();
  if (!rb.isValid()) {
    // dst is not valid: don't dereference it.
    return false;
  }
  *dst = obj;
  rb.writeComplete();
  return true;  // filled
}

}  // namespace

int main() {
  // filled: a ring of 4, one producer, this thread consuming.
  constexpr long kValues = 10000;
  model_runtime::SpscRingBuffer<long> rb(4, "seed");
  std::thread producer([&rb] {
    for (long v = 1; v <= kValues; ++v) require(produce(rb, v), "every write succeeds while the ring is valid");
  });
  long sum = 0, previous = 0;
  for (long i = 0; i < kValues; ++i) {
    const long value = rb.readLock();
    require(rb.isValid() && value == previous + 1, "values arrive in order");
    previous = value;
    sum += value;
    rb.readComplete();
  }
  producer.join();
  require(sum == kValues * (kValues + 1) / 2, "every value arrived once");

  // filled: fill the ring, block a writer, invalidate: the seed's check
  // returns without writing.
  for (long v = 0; v < 4; ++v) require(produce(rb, v), "the ring takes 4");
  std::atomic<int> wrote{-1};
  std::thread blocked([&] { wrote = produce(rb, 99) ? 1 : 0; });
  rb.invalidate();
  blocked.join();
  require(wrote == 0, "invalidate() released the blocked writer without a write");
  std::printf("001 SpscRingBuffer: %ld values in order, invalidate releases the writer\n", kValues);
  return 0;
}
