// OutputQueue (seed 001): splits or packs each transfer the model produces
// into the caller's output buffers, in the order they were enqueued. The
// caller enqueues the same number of samples as it enqueued to the matching
// InputQueue, in buffers of any whole number of samples.
//
// Threads: one producer thread calls enqueueLock/enqueueComplete/enqueue/
// flush; one consumer (device) thread calls drainDeviceBuffer, the stream
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

class OutputQueue : public IQueue {
 public:
  // buffer: the ring the device side reads (its label() names the queue).
  // Normally made by QueueManager.
  OutputQueue(std::shared_ptr<OutputRingBuffer> buffer, const popef::TensorInfo &info);

  OutputQueue(const OutputQueue &) = delete;
  OutputQueue &operator=(const OutputQueue &) = delete;

  // ---- producer side -------------------------------------------------------

  // As InputQueue::enqueueLock / enqueueComplete, for OutputData.
  OutputData *enqueueLock();
  void enqueueComplete();
  // `output` must stay valid until write_complete_callback has run (or the
  // queue is disconnected). Arguments are checked before anything is locked.
  void enqueue(void *output, std::int64_t data_size,
               WriteCompleteCallback write_complete_callback = nullptr);
  // Completes a partially enqueued transfer, or if none is pending one whole
  // transfer, with a scratch buffer that takes the dummy output of the
  // dummy input InputQueue::flush() enqueued. Nothing on a disconnected queue.
  void flush();
  // flush() without blocking: false (and nothing enqueued) if the ring is
  // full now, so the caller may retry later. For the device side, which
  // must never wait on a ring it drains itself.
  bool tryFlush();
  void reset();

  // ---- consumer (device) side ----------------------------------------------

  // The stream callback: copies tensorInfo().sizeInBytes() bytes from
  // device_buffer into the enqueued buffers (one memcpy per entry touched),
  // blocking until enough buffers are enqueued, and runs the write-complete
  // callbacks of those filled. On a disconnected queue the bytes are dropped.
  void drainDeviceBuffer(const void *device_buffer);
  std::int64_t deviceBytesDrained() const noexcept { return device_bytes_drained_; }

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
  const OutputRingBuffer &ringBuffer() const noexcept { return *ring_; }

 private:
  void checkEntry(const void *data, std::int64_t data_size) const;
  void releaseCurrent();

  std::shared_ptr<OutputRingBuffer> ring_;
  popef::TensorInfo info_;
  std::int64_t transfer_bytes_;
  std::int64_t sample_bytes_;
  std::vector<std::uint8_t> discard_;  // flush()'s sink, written by the device thread only

  bool locked_ = false;
  std::int64_t enqueued_in_transfer_ = 0;

  const OutputData *current_ = nullptr;
  std::int64_t current_offset_ = 0;
  std::int64_t device_bytes_drained_ = 0;
};

}  // namespace mrt
