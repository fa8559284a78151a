// TransferQueue<Entry>: what InputQueue and OutputQueue share. A producer
// thread enqueues entries (pointers to the caller's buffers, any whole
// number of samples each) into an SPSC ring; the device thread's stream
// callback walks them to fill or drain one model transfer at a time, packing
// small buffers into a transfer or splitting a large one across transfers,
// along the queue's batching dimension (SampleLayout).
//
// Threads: one producer thread calls enqueueLock/enqueueComplete/enqueue/
// flush/tryFlush; one consumer (device) thread calls the stream callback.
// disconnect() may be called from any thread. reset() only while neither
// side is inside a call.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "popef/tensor_info.hpp"
#include "queue/iqueue.hpp"
#include "queue/queue_data.hpp"
#include "queue/sample_layout.hpp"

namespace mrt {

template <typename Entry>
class TransferQueue : public IQueue {
 public:
  using Ring = SpscRingBuffer<Entry>;

  TransferQueue(const TransferQueue &) = delete;
  TransferQueue &operator=(const TransferQueue &) = delete;

  // ---- producer side -------------------------------------------------------

  // Returns the entry to fill, blocking while the ring is full; the same
  // entry again while it stays locked. A freshly locked entry is empty.
  // Throws Cancelled if the queue is (or gets) disconnected, dropping a
  // locked entry.
  Entry *enqueueLock();
  // The ring slot (0 .. numBuffers()-1) of the entry enqueueLock() locked,
  // or -1 while none is locked (also after reset()).
  std::int64_t lockedSlot() const noexcept {
    return locked_ ? static_cast<std::int64_t>(ring_->writeSlot()) : -1;
  }
  // Publishes the locked entry. Throws InvalidArgument (entry stays locked)
  // if its data is NULL or its size is not a positive multiple of the
  // sample size, FailedPrecondition if nothing is locked.
  void enqueueComplete();
  // Completes a partially enqueued transfer, or if none is pending enqueues
  // one whole transfer, with the queue's own scratch buffer (zeros for an
  // input; a sink for the matching dummy output), so the device can run.
  // Does nothing on a disconnected queue; std::bad_alloc if the scratch
  // buffer, made at the first flush, cannot be.
  void flush();
  // flush() without blocking: false (and nothing enqueued) if it cannot
  // flush now (canFlushNow()), so the caller may retry later. For the
  // device side, which must never wait on a ring it drains itself.
  bool tryFlush();
  // True if flush() would return at once: canEnqueueNow(), and the dummy
  // entry's memory is there (made at the first flush: false if it cannot
  // be). Stays true until this producer enqueues, so a caller can check
  // several queues before flushing any.
  bool canFlushNow() noexcept;
  // True if enqueueLock() would return at once: a slot is free, or the
  // queue is disconnected. Stays true until this producer enqueues.
  bool canEnqueueNow() { return ring_->writeAvailable(); }
  // Any thread: a snapshot of whether the ring is full (an enqueue would
  // wait for the consumer).
  bool isFull() const { return ring_->isFull(); }
  // Empties the ring and forgets partial transfers on both sides, and
  // reconnects a disconnected queue.
  void reset();
  // Throws the InvalidArgument enqueueing (data, data_size) would, without
  // touching the ring: a caller pushing into several queues can check every
  // entry first. Any thread.
  void checkEntry(const void *data, std::int64_t data_size) const;

  // ---- consumer (device) side ----------------------------------------------

  // True if the next transfer can start without waiting for the producer:
  // an entry is partly transferred or one is enqueued.
  bool hasPendingData() const { return current_ != nullptr || ring_->readAvailable(); }
  // transfer() if the producer has already enqueued all of the next
  // transfer's bytes, so that it cannot block; false (nothing moved) if not,
  // or if the queue is disconnected. For preparing a transfer ahead
  // (prefetch) without ever making the device wait for the caller.
  bool tryTransfer(void *device_buffer);

  // ---- either side ---------------------------------------------------------

  void disconnect() override;
  bool isConnected() const { return ring_->isValid(); }
  const popef::TensorInfo &tensorInfo() const override { return info_; }
  std::int64_t numBuffers() const override { return static_cast<std::int64_t>(ring_->numBuffers()); }
  const std::string &name() const override { return ring_->label(); }
  // Bytes of one sample along the batching dimension: every enqueued buffer
  // holds a positive multiple of it.
  std::int64_t sampleSize() const noexcept { return layout_.sampleBytes(); }
  // The dimension the queue packs and splits along (0 unless told).
  unsigned batchingDim() const noexcept { return layout_.batchingDim(); }
  const Ring &ringBuffer() const noexcept { return *ring_; }

 protected:
  // Throws InvalidArgument for a null ring, a tensor without bytes or
  // without dimension batching_dim.
  TransferQueue(std::shared_ptr<Ring> ring, const popef::TensorInfo &info, unsigned batching_dim);
  ~TransferQueue() override = default;

  // The stream callback: moves one transfer between device_buffer (written
  // for an input, only read for an output) and the enqueued entries, one
  // copy per entry touched, blocking until enough is enqueued; runs the
  // entries' callbacks. Disconnected: an input gets zeros, an output's
  // bytes are dropped, and no user memory is touched.
  void transfer(void *device_buffer);
  // Bytes of the current transfer already moved while transfer() waits for
  // more (what a timeout callback may want to pad). Consumer thread only.
  std::int64_t deviceBytesDone() const noexcept { return device_bytes_done_; }

 private:
  void releaseCurrent();

  std::shared_ptr<Ring> ring_;
  popef::TensorInfo info_;
  SampleLayout layout_;
  std::int64_t transfer_bytes_;
  // flush()'s dummy entry: zeros read by an input's device side, or written
  // by an output's (and never read). One transfer, from calloc, or for a
  // big one straight from the kernel's zero pages (see zeroedScratch).
  // Made by the producer at its first flush, since most queues never flush
  // and mapping a big one costs 4-5 us, a tenth of a small model's runner
  // creation (issue 14); std::bad_alloc if it cannot be.
  std::uint8_t *scratch();
  struct Free {
    std::size_t mapped = 0;  // bytes of an mmap'ed block, 0 for calloc's
    void operator()(std::uint8_t *p) const noexcept;
  };
  std::unique_ptr<std::uint8_t[], Free> scratch_;

  // Producer state.
  bool locked_ = false;
  std::int64_t enqueued_in_transfer_ = 0;  // bytes enqueued modulo transfer_bytes_
  // Bytes published to the ring since the last reset, written by the
  // producer after the entry is visible (release), read by tryTransfer.
  std::atomic<std::int64_t> enqueued_bytes_{0};
  std::int64_t consumed_bytes_ = 0;  // consumer: bytes of entries copied since the last reset

  // Consumer state: the read-locked entry being copied and how far.
  const Entry *current_ = nullptr;
  std::int64_t current_offset_ = 0;
  std::int64_t device_bytes_done_ = 0;
};

extern template class TransferQueue<InputData>;
extern template class TransferQueue<OutputData>;

}  // namespace mrt
