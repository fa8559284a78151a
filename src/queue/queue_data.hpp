// InputData / OutputData: what the queues carry (seed 001, "Queue
// management"). Each entry is a POINTER to the caller's memory and a size,
// never tensor bytes: the one copy per direction of DESIGN.md 3 happens in the
// stream callback, straight between the caller's buffer and the device's.
#pragma once

#include <cstdint>
#include <functional>

#include "queue/spsc_ring_buffer.hpp"

namespace mrt {

// Called on the device thread just before the first byte of an InputData is
// copied to the device.
using ReadStartCallback = std::function<void(void)>;
// Called on the device thread once the last byte of an InputData has been
// copied to the device: the caller's buffer is no longer needed.
using ReadCompleteCallback = ReadStartCallback;
// Called on the device thread once an OutputData has been filled completely.
using WriteCompleteCallback = std::function<void(void)>;

struct InputData {
  const std::uint8_t *data = {nullptr};  // the caller's bytes; must stay valid until read
  std::int64_t data_size = {0};          // a positive multiple of the sample size
  ReadStartCallback readStartCallback = {nullptr};
  ReadCompleteCallback readCompleteCallback = {nullptr};
};

struct OutputData {
  std::uint8_t *data = {nullptr};  // where the device's bytes go; valid until written
  std::int64_t data_size = {0};    // a positive multiple of the sample size
  WriteCompleteCallback writeCompleteCallback = {nullptr};
};

using InputRingBuffer = SpscRingBuffer<InputData>;
using OutputRingBuffer = SpscRingBuffer<OutputData>;

}  // namespace mrt
