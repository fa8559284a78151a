#include "queue/output_queue.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"

namespace mrt {

OutputQueue::OutputQueue(std::shared_ptr<OutputRingBuffer> buffer, const popef::TensorInfo &info)
    : ring_(std::move(buffer)),
      info_(info),
      transfer_bytes_(info.sizeInBytes()),
      sample_bytes_(sampleSizeInBytes(info)) {
  if (!ring_) throw Error(ErrorCode::InvalidArgument, "OutputQueue: the ring buffer must not be null");
  if (transfer_bytes_ <= 0) {
    throw Error(ErrorCode::InvalidArgument, "output queue '{}': tensor {} has no bytes to transfer",
                ring_->label(), info.toString());
  }
  discard_.assign(static_cast<std::size_t>(transfer_bytes_), 0);
}

void OutputQueue::checkEntry(const void *data, std::int64_t data_size) const {
  if (data_size <= 0 || data_size % sample_bytes_ != 0) {
    throw Error(ErrorCode::InvalidArgument,
                "output queue '{}': {} bytes is not a positive multiple of the sample size ({} "
                "bytes of {})",
                name(), data_size, sample_bytes_, info_.toString());
  }
  if (data == nullptr) {
    throw Error(ErrorCode::InvalidArgument, "output queue '{}': data must not be NULL", name());
  }
}

OutputData *OutputQueue::enqueueLock() {
  const bool relock = locked_;
  OutputData *entry = ring_->writeLock();
  if (!ring_->isValid()) {
    throw Error(ErrorCode::Cancelled, "output queue '{}' is disconnected", name());
  }
  if (!relock) {
    *entry = OutputData{};
    locked_ = true;
  }
  return entry;
}

void OutputQueue::enqueueComplete() {
  if (!locked_) {
    throw Error(ErrorCode::FailedPrecondition,
                "output queue '{}': enqueueComplete() without enqueueLock()", name());
  }
  const OutputData *entry = ring_->writeLock();  // the locked entry, without blocking
  if (!ring_->isValid()) {
    locked_ = false;
    throw Error(ErrorCode::Cancelled, "output queue '{}' is disconnected", name());
  }
  checkEntry(entry->data, entry->data_size);
  enqueued_in_transfer_ = (enqueued_in_transfer_ + entry->data_size) % transfer_bytes_;
  locked_ = false;
  ring_->writeComplete();
}

void OutputQueue::enqueue(void *output, std::int64_t data_size,
                          WriteCompleteCallback write_complete_callback) {
  checkEntry(output, data_size);
  OutputData *entry = enqueueLock();
  entry->data = static_cast<std::uint8_t *>(output);
  entry->data_size = data_size;
  entry->writeCompleteCallback = std::move(write_complete_callback);
  enqueueComplete();
}

void OutputQueue::flush() {
  if (!ring_->isValid()) return;
  const std::int64_t missing = transfer_bytes_ - enqueued_in_transfer_;
  try {
    enqueue(discard_.data(), missing);
  } catch (const Error &error) {
    if (error.code() != ErrorCode::Cancelled) throw;
  }
}

bool OutputQueue::tryFlush() {
  if (!ring_->writeAvailable()) return false;
  flush();  // cannot block now: only this producer fills the ring
  return true;
}

void OutputQueue::reset() {
  ring_->reset();
  locked_ = false;
  enqueued_in_transfer_ = 0;
  current_ = nullptr;
  current_offset_ = 0;
  device_bytes_drained_ = 0;
}

void OutputQueue::disconnect() { ring_->invalidate(); }

void OutputQueue::releaseCurrent() {
  const OutputData &done = *current_;
  current_ = nullptr;
  current_offset_ = 0;
  struct Release {
    OutputRingBuffer &ring;
    ~Release() { ring.readComplete(); }
  } release{*ring_};
  if (done.writeCompleteCallback) done.writeCompleteCallback();
}

void OutputQueue::drainDeviceBuffer(const void *device_buffer) {
  const auto *in = static_cast<const std::uint8_t *>(device_buffer);
  std::int64_t drained = 0;
  while (drained < transfer_bytes_) {
    if (current_ == nullptr) {
      device_bytes_drained_ = drained;  // for the ring's timeout callback
      const OutputData &entry = ring_->readLock();
      if (!ring_->isValid()) break;
      current_ = &entry;
      current_offset_ = 0;
    }
    if (!ring_->isValid()) break;  // disconnected: the user's memory may be gone
    const std::int64_t n =
        std::min(transfer_bytes_ - drained, current_->data_size - current_offset_);
    std::memcpy(current_->data + current_offset_, in + drained, static_cast<std::size_t>(n));
    drained += n;
    current_offset_ += n;
    if (current_offset_ == current_->data_size) releaseCurrent();
  }
  if (drained < transfer_bytes_) {
    current_ = nullptr;
    current_offset_ = 0;
  }
  device_bytes_drained_ = 0;
}

}  // namespace mrt
