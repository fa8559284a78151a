#include "queue/sample_layout.hpp"

#include "common/error.hpp"

namespace mrt {

SampleLayout::SampleLayout(const popef::TensorInfo &info, unsigned batching_dim, LazyText owner)
    : batching_dim_(batching_dim) {
  const auto &shape = info.shape();
  if (shape.empty() && batching_dim == 0) {
    row_bytes_ = info.sizeInBytes();
    return;
  }
  if (batching_dim >= shape.size()) {
    throw Error(ErrorCode::InvalidArgument, "{}{}tensor {} has no dimension {} to batch along (it has {})", owner(),
                owner.empty() ? "" : ": ", info.toString(), batching_dim, shape.size());
  }
  // A zero-sized batch dimension moves no bytes; count it as one sample so
  // sizes stay well defined (the queues refuse such tensors).
  batch_size_ = shape[batching_dim] > 0 ? shape[batching_dim] : 1;
  for (unsigned d = 0; d < batching_dim; ++d) rows_ *= shape[d];
  if (rows_ <= 0) rows_ = 1;
  row_bytes_ = info.sizeInBytes() / rows_ / batch_size_;
}

void SampleLayout::copyRows(std::uint8_t *dst, std::int64_t dst_size, std::int64_t dst_offset,
                            const std::uint8_t *src, std::int64_t src_size, std::int64_t src_offset,
                            std::int64_t bytes) const noexcept {
  // Row r of a buffer of n samples starts at r * n * row_bytes_; the
  // dimension-0 offsets divide by rows_ into offsets within each row.
  const std::int64_t dst_row = dst_size / rows_;
  const std::int64_t src_row = src_size / rows_;
  const auto stretch = static_cast<std::size_t>(bytes / rows_);
  dst += dst_offset / rows_;
  src += src_offset / rows_;
  for (std::int64_t r = 0; r < rows_; ++r) std::memcpy(dst + r * dst_row, src + r * src_row, stretch);
}

void SampleLayout::zeroRows(std::uint8_t *dst, std::int64_t dst_size, std::int64_t dst_offset,
                            std::int64_t bytes) const noexcept {
  const std::int64_t dst_row = dst_size / rows_;
  const auto stretch = static_cast<std::size_t>(bytes / rows_);
  dst += dst_offset / rows_;
  for (std::int64_t r = 0; r < rows_; ++r) std::memset(dst + r * dst_row, 0, stretch);
}

}  // namespace mrt
