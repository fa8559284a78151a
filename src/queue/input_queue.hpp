// InputQueue (seed 001): packs or splits the caller's input buffers into the
// transfers the model expects. If the model's tensor is [B, ...] the caller
// may enqueue any whole number of samples per buffer: several small buffers
// are packed into one transfer, and a large one is split across transfers.
//
// Threads: one producer thread calls enqueueLock/enqueueComplete/enqueue/
// flush; one consumer (device) thread calls fillDeviceBuffer, the stream
// callback of the anchor. disconnect() may be called from any thread.
// reset() only while neither side is inside a call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "popef/tensor_info.hpp"
#include "queue/iqueue.hpp"
#include "queue/queue_data.hpp"

namespace mrt {

class InputQueue : public IQueue {
 public:
  // buffer: the ring the device side reads (its label() names the queue).
  // Normally made by QueueManager.
  InputQueue(std::shared_ptr<InputRingBuffer> buffer, const popef::TensorInfo &info);

  InputQueue(const InputQueue &) = delete;
  InputQueue &operator=(const InputQueue &) = delete;

  // ---- producer side -------------------------------------------------------

  // Returns the entry to fill, blocking while the ring is full; the same
  // entry again while it stays locked. A freshly locked entry is empty.
  // Throws Cancelled if the queue is (or gets) disconnected.
  InputData *enqueueLock();
  // Publishes the locked entry. Throws InvalidArgument (entry stays locked)
  // if its data is NULL or its size is not a positive multiple of the
  // sample size, FailedPrecondition if nothing is locked.
  void enqueueComplete();
  // enqueueLock, fill, enqueueComplete. `input` is not copied: it must stay
  // valid until read_complete_callback has run (or the queue is
  // disconnected). Arguments are checked before anything is locked.
  void enqueue(const void *input, std::int64_t data_size,
               ReadStartCallback read_start_callback = nullptr,
               ReadCompleteCallback read_complete_callback = nullptr);
  // Completes a partially enqueued transfer with zeros, or if none is
  // pending enqueues one whole transfer of zeros, so the device can run.
  // Does nothing on a disconnected queue.
  void flush();
  // flush() without blocking: false (and nothing enqueued) if the ring is
  // full now, so the caller may retry later. For the device side, which
  // must never wait on a ring it drains itself.
  bool tryFlush();
  // Empties the ring and forgets partial transfers on both sides, and
  // reconnects a disconnected queue.
  void reset();

  // ---- consumer (device) side ----------------------------------------------

  // The stream callback: copies the next tensorInfo().sizeInBytes() bytes of
  // enqueued data into device_buffer (one memcpy per entry touched), blocking
  // until enough has been enqueued. Runs the entries' callbacks. On a
  // disconnected queue it writes zeros instead and reads no user memory.
  void fillDeviceBuffer(void *device_buffer);
  // Bytes of the current transfer already filled while fillDeviceBuffer
  // waits for more (what a timeout callback may want to pad). Consumer
  // thread only.
  std::int64_t deviceBytesFilled() const noexcept { return device_bytes_filled_; }

  // True if the next transfer can start without waiting for the producer:
  // an entry is partly transferred or one is enqueued. Consumer thread only.
  bool hasPendingData() const { return current_ != nullptr || ring_->readAvailable(); }

  // ---- either side ---------------------------------------------------------

  void disconnect() override;
  bool isConnected() const { return ring_->isValid(); }
  const popef::TensorInfo &tensorInfo() const override { return info_; }
  std::int64_t numBuffers() const override { return static_cast<std::int64_t>(ring_->numBuffers()); }
  const std::string &name() const override { return ring_->label(); }
  std::int64_t sampleSize() const noexcept { return sample_bytes_; }
  const InputRingBuffer &ringBuffer() const noexcept { return *ring_; }

 private:
  void checkEntry(const void *data, std::int64_t data_size) const;
  void releaseCurrent();

  std::shared_ptr<InputRingBuffer> ring_;
  popef::TensorInfo info_;
  std::int64_t transfer_bytes_;
  std::int64_t sample_bytes_;
  std::vector<std::uint8_t> zeros_;  // flush()'s dummy data, read-only

  // Producer state.
  bool locked_ = false;
  std::int64_t enqueued_in_transfer_ = 0;  // bytes enqueued modulo transfer_bytes_

  // Consumer state: the read-locked entry being copied and how far.
  const InputData *current_ = nullptr;
  std::int64_t current_offset_ = 0;
  std::int64_t device_bytes_filled_ = 0;
};

}  // namespace mrt
