#include "queue/memory_pool.hpp"

#include <limits>
#include <new>

#include "common/error.hpp"

namespace mrt {

RingMemoryPool::RingMemoryPool(std::int64_t blob_size, std::int64_t num_blobs)
    : blob_size_(blob_size), num_blobs_(num_blobs), blob_stride_(0) {
  if (blob_size <= 0 || num_blobs <= 0) {
    throw Error(ErrorCode::InvalidArgument,
                "RingMemoryPool: blob_size and num_blobs must be positive, got blob_size {} "
                "and num_blobs {}",
                blob_size, num_blobs);
  }
  constexpr auto kMaxBytes = static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());
  const std::uint64_t stride =
      (static_cast<std::uint64_t>(blob_size) + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment;
  if (stride > kMaxBytes / static_cast<std::uint64_t>(num_blobs)) {
    throw Error(ErrorCode::InvalidArgument,
                "RingMemoryPool: {} blobs of {} bytes do not fit in the address space", num_blobs,
                blob_size);
  }
  blob_stride_ = static_cast<std::size_t>(stride);
  const std::size_t total = blob_stride_ * static_cast<std::size_t>(num_blobs);
  // std::bad_alloc propagates: the C API maps it to MRT_RESOURCE_EXHAUSTED.
  memory_.reset(static_cast<std::byte *>(
      ::operator new(total, std::align_val_t{kBlobAlignment})));
}

void *RingMemoryPool::getMemoryBlob() {
  std::byte *blob = memory_.get() + static_cast<std::size_t>(next_blob_) * blob_stride_;
  if (++next_blob_ == num_blobs_) {
    next_blob_ = 0;
  }
  return blob;
}

void RingMemoryPool::AlignedDelete::operator()(std::byte *memory) const noexcept {
  ::operator delete(memory, std::align_val_t{kBlobAlignment});
}

}  // namespace mrt
