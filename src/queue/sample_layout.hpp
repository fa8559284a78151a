// SampleLayout: where the samples of a batched tensor lie in memory, so the
// queues can pack several requests into one model transfer, or split one
// across transfers, along any dimension of the shape (ModelRunnerConfig's
// batching_dim).
//
// A tensor batched along dimension d has the shape [outer..., batch,
// inner...]. Seen as `rows` = product(outer) rows, sample s holds the s-th
// stretch of `row_bytes` = product(inner) x element size bytes in every row.
// Along dimension 0 there is one row and a sample is one contiguous block,
// the common case, which stays a single memcpy.
#pragma once

#include <cstdint>
#include <cstring>
#include "common/lazy_text.hpp"
#include "popef/tensor_info.hpp"

namespace mrt {

class SampleLayout {
 public:
  // Throws mrt::Error(InvalidArgument) if the tensor has no dimension
  // `batching_dim` (a scalar counts as one sample along dimension 0); the
  // message starts with `owner()` (e.g. "input queue 'x'") when given.
  SampleLayout(const popef::TensorInfo &info, unsigned batching_dim, LazyText owner = {});

  // Samples in one model transfer (the shape's size in batching_dim).
  std::int64_t batchSize() const noexcept { return batch_size_; }
  std::int64_t sampleBytes() const noexcept { return rows_ * row_bytes_; }
  unsigned batchingDim() const noexcept { return batching_dim_; }

  // Copies `bytes` worth of whole samples from the buffer `src` of src_size
  // bytes, starting src_offset bytes in, to `dst` (dst_size bytes) at
  // dst_offset. Sizes and offsets count as if the buffers were batched
  // along dimension 0, so they are multiples of sampleBytes(); each row of a
  // buffer holds size / rows bytes.
  void copy(std::uint8_t *dst, std::int64_t dst_size, std::int64_t dst_offset, const std::uint8_t *src,
            std::int64_t src_size, std::int64_t src_offset, std::int64_t bytes) const noexcept {
    if (rows_ == 1) {
      std::memcpy(dst + dst_offset, src + src_offset, static_cast<std::size_t>(bytes));
      return;
    }
    copyRows(dst, dst_size, dst_offset, src, src_size, src_offset, bytes);
  }
  // Zeroes the bytes of `dst` that copy() would write `bytes` to at
  // dst_offset (an input's dummy data once its queue is disconnected).
  void zero(std::uint8_t *dst, std::int64_t dst_size, std::int64_t dst_offset, std::int64_t bytes) const noexcept {
    if (rows_ == 1) {
      std::memset(dst + dst_offset, 0, static_cast<std::size_t>(bytes));
      return;
    }
    zeroRows(dst, dst_size, dst_offset, bytes);
  }

 private:
  void copyRows(std::uint8_t *dst, std::int64_t dst_size, std::int64_t dst_offset, const std::uint8_t *src,
                std::int64_t src_size, std::int64_t src_offset, std::int64_t bytes) const noexcept;
  void zeroRows(std::uint8_t *dst, std::int64_t dst_size, std::int64_t dst_offset, std::int64_t bytes) const noexcept;

  unsigned batching_dim_;
  std::int64_t batch_size_ = 1;
  std::int64_t rows_ = 1;
  std::int64_t row_bytes_ = 0;
};

}  // namespace mrt
