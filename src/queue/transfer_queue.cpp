#include "queue/transfer_queue.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>
#include <type_traits>

#include "common/error.hpp"

namespace mrt {
namespace {

template <typename Entry>
constexpr bool kIsInput = std::is_same_v<Entry, InputData>;

template <typename Entry>
constexpr const char *kDirection = kIsInput<Entry> ? "input" : "output";

void runStartCallback(const InputData &entry) {
  if (entry.readStartCallback) entry.readStartCallback();
}
void runStartCallback(const OutputData &) {}

void runCompleteCallback(const InputData &entry) {
  if (entry.readCompleteCallback) entry.readCompleteCallback();
}
void runCompleteCallback(const OutputData &entry) {
  if (entry.writeCompleteCallback) entry.writeCompleteCallback();
}

// A zero-filled block that costs no memset to create: a big one is mapped
// from the kernel's zero pages. Not calloc for those: once a big block has
// been freed, glibc serves blocks of that size from its heap, and calloc
// then memsets them (4 MiB per queue of a 1 Mi float tensor).
template <typename Free>
std::unique_ptr<std::uint8_t[], Free> zeroedScratch(std::size_t bytes) {
  constexpr std::size_t kMapFrom = std::size_t{128} << 10;  // glibc's initial mmap threshold
  if (bytes < kMapFrom) {
    std::unique_ptr<std::uint8_t[], Free> block(static_cast<std::uint8_t *>(std::calloc(bytes, 1)));
    if (!block) throw std::bad_alloc();
    return block;
  }
  void *memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::bad_alloc();
  return std::unique_ptr<std::uint8_t[], Free>(static_cast<std::uint8_t *>(memory), Free{bytes});
}

}  // namespace

template <typename Entry>
TransferQueue<Entry>::TransferQueue(std::shared_ptr<Ring> ring, const popef::TensorInfo &info,
                                    unsigned batching_dim)
    : ring_(std::move(ring)),
      info_(info),
      layout_(info, batching_dim,
              [this] { return fmt::format("{} queue '{}'", kDirection<Entry>, ring_ ? ring_->label() : std::string()); }),
      transfer_bytes_(info.sizeInBytes()) {
  if (!ring_) {
    throw Error(ErrorCode::InvalidArgument, "{}Queue: the ring buffer must not be null",
                kIsInput<Entry> ? "Input" : "Output");
  }
  if (transfer_bytes_ <= 0) {
    throw Error(ErrorCode::InvalidArgument, "{} queue '{}': tensor {} has no bytes to transfer", kDirection<Entry>,
                ring_->label(), info.toString());
  }
}

template <typename Entry>
std::uint8_t *TransferQueue<Entry>::scratch() {
  if (!scratch_) scratch_ = zeroedScratch<Free>(static_cast<std::size_t>(transfer_bytes_));
  return scratch_.get();
}

template <typename Entry>
void TransferQueue<Entry>::Free::operator()(std::uint8_t *p) const noexcept {
  if (mapped != 0) {
    ::munmap(p, mapped);
  } else {
    std::free(p);
  }
}

template <typename Entry>
void TransferQueue<Entry>::checkEntry(const void *data, std::int64_t data_size) const {
  if (data_size <= 0 || data_size % sampleSize() != 0) {
    throw Error(ErrorCode::InvalidArgument,
                "{} queue '{}': {} bytes is not a positive multiple of the sample size ({} bytes of {}{})",
                kDirection<Entry>, name(), data_size, sampleSize(), info_.toString(),
                batchingDim() == 0 ? std::string() : fmt::format(" batched along dimension {}", batchingDim()));
  }
  if (data == nullptr) {
    throw Error(ErrorCode::InvalidArgument, "{} queue '{}': data must not be NULL", kDirection<Entry>, name());
  }
}

template <typename Entry>
Entry *TransferQueue<Entry>::enqueueLock() {
  const bool relock = locked_;
  Entry *entry = ring_->writeLock();
  if (!ring_->isValid()) {
    locked_ = false;  // nothing locked is ever published on a disconnected queue
    throw Error(ErrorCode::Cancelled, "{} queue '{}' is disconnected", kDirection<Entry>, name());
  }
  if (!relock) {
    *entry = Entry{};  // drop the previous user's pointer and callbacks
    locked_ = true;
  }
  return entry;
}

template <typename Entry>
void TransferQueue<Entry>::enqueueComplete() {
  if (!locked_) {
    throw Error(ErrorCode::FailedPrecondition, "{} queue '{}': enqueueComplete() without enqueueLock()",
                kDirection<Entry>, name());
  }
  const Entry *entry = ring_->writeLock();  // the locked entry, without blocking
  if (!ring_->isValid()) {
    locked_ = false;
    throw Error(ErrorCode::Cancelled, "{} queue '{}' is disconnected", kDirection<Entry>, name());
  }
  checkEntry(entry->data, entry->data_size);
  enqueued_in_transfer_ = (enqueued_in_transfer_ + entry->data_size) % transfer_bytes_;
  locked_ = false;
  ring_->writeComplete();
  // Only this thread writes it: a plain add, published after the entry.
  enqueued_bytes_.store(enqueued_bytes_.load(std::memory_order_relaxed) + entry->data_size, std::memory_order_release);
}

template <typename Entry>
void TransferQueue<Entry>::flush() {
  if (!ring_->isValid()) return;
  try {
    std::uint8_t *dummy = scratch();
    Entry *entry = enqueueLock();
    entry->data = dummy;
    entry->data_size = transfer_bytes_ - enqueued_in_transfer_;
    enqueueComplete();
  } catch (const Error &error) {
    if (error.code() != ErrorCode::Cancelled) throw;  // disconnected meanwhile: nothing to flush
  }
}

template <typename Entry>
bool TransferQueue<Entry>::canFlushNow() noexcept {
  if (!canEnqueueNow()) return false;
  try {
    scratch();
    return true;
  } catch (const std::bad_alloc &) {
    return false;
  }
}

template <typename Entry>
bool TransferQueue<Entry>::tryFlush() {
  if (!canFlushNow()) return false;
  flush();  // cannot block now: only this producer fills the ring
  return true;
}

template <typename Entry>
void TransferQueue<Entry>::reset() {
  ring_->reset();
  locked_ = false;
  enqueued_in_transfer_ = 0;
  current_ = nullptr;
  current_offset_ = 0;
  device_bytes_done_ = 0;
  enqueued_bytes_.store(0, std::memory_order_relaxed);
  consumed_bytes_ = 0;
}

template <typename Entry>
bool TransferQueue<Entry>::tryTransfer(void *device_buffer) {
  if (!isConnected()) return false;
  if (enqueued_bytes_.load(std::memory_order_acquire) - consumed_bytes_ < transfer_bytes_) return false;
  transfer(device_buffer);
  return true;
}

template <typename Entry>
void TransferQueue<Entry>::disconnect() {
  ring_->invalidate();
}

template <typename Entry>
void TransferQueue<Entry>::releaseCurrent() {
  // Release the slot even if the callback throws, so the ring stays usable.
  const Entry &done = *current_;
  current_ = nullptr;
  current_offset_ = 0;
  struct Release {
    Ring &ring;
    ~Release() { ring.readComplete(); }
  } release{*ring_};
  runCompleteCallback(done);
}

template <typename Entry>
void TransferQueue<Entry>::transfer(void *device_buffer) {
  auto *device = static_cast<std::uint8_t *>(device_buffer);
  std::int64_t done = 0;
  while (done < transfer_bytes_) {
    if (current_ == nullptr) {
      device_bytes_done_ = done;  // for the ring's timeout callback
      const Entry &entry = ring_->readLock();
      if (!ring_->isValid()) break;
      current_ = &entry;
      current_offset_ = 0;
      runStartCallback(entry);
    }
    if (!ring_->isValid()) break;  // disconnected: the user's memory may be gone
    const std::int64_t n = std::min(transfer_bytes_ - done, current_->data_size - current_offset_);
    if constexpr (kIsInput<Entry>) {
      layout_.copy(device, transfer_bytes_, done, current_->data, current_->data_size, current_offset_, n);
    } else {
      layout_.copy(current_->data, current_->data_size, current_offset_, device, transfer_bytes_, done, n);
    }
    done += n;
    current_offset_ += n;
    consumed_bytes_ += n;
    if (current_offset_ == current_->data_size) releaseCurrent();
  }
  if (done < transfer_bytes_) {
    // Disconnected: dummy input data lets the program run to its end.
    if constexpr (kIsInput<Entry>) layout_.zero(device, transfer_bytes_, done, transfer_bytes_ - done);
    current_ = nullptr;
    current_offset_ = 0;
  }
  device_bytes_done_ = 0;
}

template class TransferQueue<InputData>;
template class TransferQueue<OutputData>;

}  // namespace mrt
