#include "queue/input_queue.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"

namespace mrt {

InputQueue::InputQueue(std::shared_ptr<InputRingBuffer> buffer, const popef::TensorInfo &info)
    : ring_(std::move(buffer)),
      info_(info),
      transfer_bytes_(info.sizeInBytes()),
      sample_bytes_(sampleSizeInBytes(info)) {
  if (!ring_) throw Error(ErrorCode::InvalidArgument, "InputQueue: the ring buffer must not be null");
  if (transfer_bytes_ <= 0) {
    throw Error(ErrorCode::InvalidArgument, "input queue '{}': tensor {} has no bytes to transfer",
                ring_->label(), info.toString());
  }
  zeros_.assign(static_cast<std::size_t>(transfer_bytes_), 0);
}

void InputQueue::checkEntry(const void *data, std::int64_t data_size) const {
  if (data_size <= 0 || data_size % sample_bytes_ != 0) {
    throw Error(ErrorCode::InvalidArgument,
                "input queue '{}': {} bytes is not a positive multiple of the sample size ({} "
                "bytes of {})",
                name(), data_size, sample_bytes_, info_.toString());
  }
  if (data == nullptr) {
    throw Error(ErrorCode::InvalidArgument, "input queue '{}': data must not be NULL", name());
  }
}

InputData *InputQueue::enqueueLock() {
  const bool relock = locked_;
  InputData *entry = ring_->writeLock();
  if (!ring_->isValid()) {
    throw Error(ErrorCode::Cancelled, "input queue '{}' is disconnected", name());
  }
  if (!relock) {
    *entry = InputData{};  // drop the previous user's pointer and callbacks
    locked_ = true;
  }
  return entry;
}

void InputQueue::enqueueComplete() {
  if (!locked_) {
    throw Error(ErrorCode::FailedPrecondition,
                "input queue '{}': enqueueComplete() without enqueueLock()", name());
  }
  const InputData *entry = ring_->writeLock();  // the locked entry, without blocking
  if (!ring_->isValid()) {
    locked_ = false;
    throw Error(ErrorCode::Cancelled, "input queue '{}' is disconnected", name());
  }
  checkEntry(entry->data, entry->data_size);
  enqueued_in_transfer_ = (enqueued_in_transfer_ + entry->data_size) % transfer_bytes_;
  locked_ = false;
  ring_->writeComplete();
}

void InputQueue::enqueue(const void *input, std::int64_t data_size,
                         ReadStartCallback read_start_callback,
                         ReadCompleteCallback read_complete_callback) {
  checkEntry(input, data_size);
  InputData *entry = enqueueLock();
  entry->data = static_cast<const std::uint8_t *>(input);
  entry->data_size = data_size;
  entry->readStartCallback = std::move(read_start_callback);
  entry->readCompleteCallback = std::move(read_complete_callback);
  enqueueComplete();
}

void InputQueue::flush() {
  if (!ring_->isValid()) return;
  const std::int64_t missing = transfer_bytes_ - enqueued_in_transfer_;
  try {
    enqueue(zeros_.data(), missing);
  } catch (const Error &error) {
    if (error.code() != ErrorCode::Cancelled) throw;  // disconnected meanwhile: nothing to flush
  }
}

bool InputQueue::tryFlush() {
  if (!ring_->writeAvailable()) return false;
  flush();  // cannot block now: only this producer fills the ring
  return true;
}

void InputQueue::reset() {
  ring_->reset();
  locked_ = false;
  enqueued_in_transfer_ = 0;
  current_ = nullptr;
  current_offset_ = 0;
  device_bytes_filled_ = 0;
}

void InputQueue::disconnect() { ring_->invalidate(); }

void InputQueue::releaseCurrent() {
  // Release the slot even if the callback throws, so the ring stays usable.
  const InputData &done = *current_;
  current_ = nullptr;
  current_offset_ = 0;
  struct Release {
    InputRingBuffer &ring;
    ~Release() { ring.readComplete(); }
  } release{*ring_};
  if (done.readCompleteCallback) done.readCompleteCallback();
}

void InputQueue::fillDeviceBuffer(void *device_buffer) {
  auto *out = static_cast<std::uint8_t *>(device_buffer);
  std::int64_t filled = 0;
  while (filled < transfer_bytes_) {
    if (current_ == nullptr) {
      device_bytes_filled_ = filled;  // for the ring's timeout callback
      const InputData &entry = ring_->readLock();
      if (!ring_->isValid()) break;
      current_ = &entry;
      current_offset_ = 0;
      if (entry.readStartCallback) entry.readStartCallback();
    }
    if (!ring_->isValid()) break;  // disconnected: the user's memory may be gone
    const std::int64_t n = std::min(transfer_bytes_ - filled, current_->data_size - current_offset_);
    std::memcpy(out + filled, current_->data + current_offset_, static_cast<std::size_t>(n));
    filled += n;
    current_offset_ += n;
    if (current_offset_ == current_->data_size) releaseCurrent();
  }
  if (filled < transfer_bytes_) {
    // Disconnected: dummy data lets the program run to its end.
    std::memset(out + filled, 0, static_cast<std::size_t>(transfer_bytes_ - filled));
    current_ = nullptr;
    current_offset_ = 0;
  }
  device_bytes_filled_ = 0;
}

}  // namespace mrt
