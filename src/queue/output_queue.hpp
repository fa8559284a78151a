// OutputQueue (seed 001): splits or packs each transfer the model produces
// into the caller's output buffers, in the order they were enqueued. The
// caller enqueues the same number of samples as it enqueued to the matching
// InputQueue, in buffers of any whole number of samples (along the queue's
// batching dimension, as InputQueue).
//
// Threads and the producer-side calls: see TransferQueue. flush() enqueues
// a scratch buffer that takes the dummy output of the dummy input
// InputQueue::flush() enqueued.
#pragma once

#include <cstdint>
#include <memory>

#include "queue/transfer_queue.hpp"

namespace mrt {

class OutputQueue : public TransferQueue<OutputData> {
 public:
  // buffer: the ring the device side reads (its label() names the queue).
  // Normally made by QueueManager.
  OutputQueue(std::shared_ptr<OutputRingBuffer> buffer, const popef::TensorInfo &info, unsigned batching_dim = 0);

  // `output` must stay valid until write_complete_callback has run (or the
  // queue is disconnected). Arguments are checked before anything is locked.
  void enqueue(void *output, std::int64_t data_size, WriteCompleteCallback write_complete_callback = nullptr);

  // The stream callback: copies tensorInfo().sizeInBytes() bytes from
  // device_buffer into the enqueued buffers (one memcpy per entry touched,
  // per row with a batching dimension other than 0), blocking until enough
  // buffers are enqueued, and runs the write-complete callbacks of those
  // filled. On a disconnected queue the bytes are dropped.
  void drainDeviceBuffer(const void *device_buffer) {
    transfer(const_cast<void *>(device_buffer));  // an output's transfer only reads it
  }
  std::int64_t deviceBytesDrained() const noexcept { return deviceBytesDone(); }
};

}  // namespace mrt
