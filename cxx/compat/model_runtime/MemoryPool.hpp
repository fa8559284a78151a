// Queue memory management (seed 001): IMemoryPool, RingMemoryPool and
// allocateQueueStorage, header-only. Where the bytes behind the pointers a
// program enqueues can come from. A pool is not thread-safe: one thread
// draws blobs from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "model_runtime/QueueManager.hpp"

namespace model_runtime {

// A common interface for all memory allocators. The pool keeps ownership of
// every blob it hands out and frees them when it is destroyed.
class IMemoryPool {
 public:
  virtual ~IMemoryPool() = default;
  // A writable blob of blobSize() bytes, owned by the pool.
  virtual void *getMemoryBlob() = 0;
  virtual int64_t blobSize() const = 0;

 protected:
  IMemoryPool() = default;
  IMemoryPool(const IMemoryPool &) = default;
  IMemoryPool &operator=(const IMemoryPool &) = default;
  IMemoryPool(IMemoryPool &&) = default;
  IMemoryPool &operator=(IMemoryPool &&) = default;
};

// Fixed-size blobs allocated at construction; each getMemoryBlob() returns
// the next and wraps around after the last, so a blob is reused num_blobs
// calls later (size the pool so it is no longer in use by then). Each blob
// starts on a 64-byte boundary (no two blobs share a cache line). Move-only.
class RingMemoryPool : public IMemoryPool {
 public:
  static constexpr std::size_t kBlobAlignment = 64;

  // Throws std::invalid_argument unless blob_size and num_blobs are positive
  // and the pool fits in the address space; std::bad_alloc if out of memory.
  RingMemoryPool(int64_t blob_size, int64_t num_blobs)
      : blob_size_(blob_size), num_blobs_(num_blobs), blob_stride_(stride(blob_size, num_blobs)) {
    memory_.reset(static_cast<std::byte *>(
        ::operator new(blob_stride_ * static_cast<std::size_t>(num_blobs), std::align_val_t{kBlobAlignment})));
  }

  int64_t numBlobs() const { return num_blobs_; }
  int64_t blobSize() const override { return blob_size_; }
  void *getMemoryBlob() override {
    std::byte *blob = memory_.get() + static_cast<std::size_t>(next_blob_) * blob_stride_;
    if (++next_blob_ == num_blobs_) next_blob_ = 0;
    return blob;
  }

 private:
  struct AlignedDelete {
    void operator()(std::byte *memory) const noexcept { ::operator delete(memory, std::align_val_t{kBlobAlignment}); }
  };
  // blob_size rounded up to kBlobAlignment, after checking the arguments.
  static std::size_t stride(int64_t blob_size, int64_t num_blobs) {
    if (blob_size <= 0 || num_blobs <= 0) {
      throw std::invalid_argument("RingMemoryPool: blob_size and num_blobs must be positive, got blob_size " +
                                  std::to_string(blob_size) + " and num_blobs " + std::to_string(num_blobs));
    }
    constexpr auto kMaxBytes = static_cast<uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
    const uint64_t rounded = (static_cast<uint64_t>(blob_size) + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment;
    if (rounded > kMaxBytes / static_cast<uint64_t>(num_blobs)) {
      throw std::invalid_argument("RingMemoryPool: " + std::to_string(num_blobs) + " blobs of " +
                                  std::to_string(blob_size) + " bytes do not fit in the address space");
    }
    return static_cast<std::size_t>(rounded);
  }

  int64_t blob_size_;
  int64_t num_blobs_;
  std::size_t blob_stride_;
  std::unique_ptr<std::byte[], AlignedDelete> memory_;
  int64_t next_blob_ = 0;
};

// A pool backing `queue`: one blob per queue buffer plus extra_buffers, each
// one transfer of the queue's tensor. Throws std::invalid_argument for a
// negative extra_buffers.
inline RingMemoryPool allocateQueueStorage(const IQueue &queue, int64_t extra_buffers = 0) {
  if (extra_buffers < 0) {
    throw std::invalid_argument("allocateQueueStorage: extra_buffers must not be negative, got " +
                                std::to_string(extra_buffers));
  }
  return RingMemoryPool(queue.tensorInfo().sizeInBytes(), queue.numBuffers() + extra_buffers);
}

}  // namespace model_runtime
