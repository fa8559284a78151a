// InputQueue (seed 001): packs or splits the caller's input buffers into the
// transfers the model expects. If the model's tensor is [B, ...] the caller
// may enqueue any whole number of samples per buffer: several small buffers
// are packed into one transfer, and a large one is split across transfers.
// With a batching dimension d other than 0 (ModelRunner's batching_dim),
// samples are the d-th dimension's slices and each buffer is a tensor of the
// model's shape with n in dimension d.
//
// Threads and the producer-side calls: see TransferQueue.
#pragma once

#include <cstdint>
#include <memory>

#include "queue/transfer_queue.hpp"

namespace mrt {

class InputQueue : public TransferQueue<InputData> {
 public:
  // buffer: the ring the device side reads (its label() names the queue).
  // Normally made by QueueManager.
  InputQueue(std::shared_ptr<InputRingBuffer> buffer, const popef::TensorInfo &info, unsigned batching_dim = 0);

  // enqueueLock, fill, enqueueComplete. `input` is not copied: it must stay
  // valid until read_complete_callback has run (or the queue is
  // disconnected). Arguments are checked before anything is locked.
  void enqueue(const void *input, std::int64_t data_size, ReadStartCallback read_start_callback = nullptr,
               ReadCompleteCallback read_complete_callback = nullptr);

  // The stream callback: copies the next tensorInfo().sizeInBytes() bytes of
  // enqueued data into device_buffer (one memcpy per entry touched, per row
  // with a batching dimension other than 0), blocking until enough has been
  // enqueued. Runs the entries' callbacks. On a disconnected queue it writes
  // zeros instead and reads no user memory.
  void fillDeviceBuffer(void *device_buffer) { transfer(device_buffer); }
  // fillDeviceBuffer if the whole transfer is enqueued already, else false:
  // the prefetch of the stream callback, which must never wait.
  bool tryFillDeviceBuffer(void *device_buffer) { return tryTransfer(device_buffer); }
  // Bytes of the current transfer already filled while fillDeviceBuffer
  // waits for more. Consumer thread only.
  std::int64_t deviceBytesFilled() const noexcept { return deviceBytesDone(); }
};

}  // namespace mrt
