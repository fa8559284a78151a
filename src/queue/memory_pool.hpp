// Queue memory management (seed 001, "Queue memory management"): where the
// bytes behind queued InputData/OutputData pointers can come from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace mrt {

// A common interface for all memory allocators. The pool keeps ownership of
// every blob it hands out and frees them when it is destroyed.
class IMemoryPool {
 public:
  virtual ~IMemoryPool() = default;

  // A writable blob of blobSize() bytes, owned by the pool.
  virtual void *getMemoryBlob() = 0;

  virtual std::int64_t blobSize() const = 0;

 protected:
  IMemoryPool() = default;
  IMemoryPool(const IMemoryPool &) = default;
  IMemoryPool &operator=(const IMemoryPool &) = default;
  IMemoryPool(IMemoryPool &&) = default;
  IMemoryPool &operator=(IMemoryPool &&) = default;
};

// Memory pool of fixed-size blobs, allocated at construction; each
// getMemoryBlob() returns the next blob and wraps around after the last one,
// so a blob is reused num_blobs calls later (size the pool so that a blob is
// no longer in use by then, e.g. ring buffer capacity plus extra buffers).
// Each blob starts on a 64-byte boundary (cache line, SIMD, and no two blobs
// share a cache line). Not thread-safe: one thread draws blobs from a pool.
class RingMemoryPool : public IMemoryPool {
 public:
  static constexpr std::size_t kBlobAlignment = 64;

  // Throws InvalidArgument unless blob_size and num_blobs are positive and
  // their product fits in memory addresses.
  RingMemoryPool(std::int64_t blob_size, std::int64_t num_blobs);

  std::int64_t numBlobs() const { return num_blobs_; }
  std::int64_t blobSize() const override { return blob_size_; }
  void *getMemoryBlob() override;

 private:
  struct AlignedDelete {
    void operator()(std::byte *memory) const noexcept;
  };

  std::int64_t blob_size_;
  std::int64_t num_blobs_;
  std::size_t blob_stride_;  // blob_size_ rounded up to kBlobAlignment
  std::unique_ptr<std::byte[], AlignedDelete> memory_;
  std::int64_t next_blob_ = 0;
};

}  // namespace mrt
