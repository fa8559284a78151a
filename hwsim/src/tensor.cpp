#include "hwsim/tensor.hpp"

#include <algorithm>

#include "fail.hpp"

namespace hwsim {

using detail::fail;

namespace {
void appendMerged(std::vector<Region> &out, const Region &r) {
  if (r.begin == r.end) return;
  if (!out.empty() && out.back().var == r.var && out.back().end == r.begin) {
    out.back().end = r.end;
  } else {
    out.push_back(r);
  }
}

// Finds the regions covering any range of a view's flat elements by binary
// search over where each region starts: views made of many small regions
// (a broadcast, a transpose) are then sliced and joined in O(log regions)
// per range, not by walking every region from the start each time.
class RegionIndex {
 public:
  explicit RegionIndex(const std::vector<Region> &regions) : regions_(regions) {
    starts_.reserve(regions.size());
    std::uint64_t pos = 0;
    for (const auto &r : regions) {
      starts_.push_back(pos);
      pos += r.size();
    }
  }

  // Appends the regions covering flat elements [begin, end).
  void appendRange(std::uint64_t begin, std::uint64_t end, std::vector<Region> &out) const {
    auto i = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), begin) - starts_.begin());
    i = i == 0 ? 0 : i - 1;
    for (; i < regions_.size() && starts_[i] < end; ++i) {
      const Region &r = regions_[i];
      const std::uint64_t from = begin > starts_[i] ? begin - starts_[i] : 0;
      const std::uint64_t to = std::min<std::uint64_t>(r.size(), end - starts_[i]);
      if (from < to) appendMerged(out, {r.var, r.begin + from, r.begin + to});
    }
  }

 private:
  const std::vector<Region> &regions_;
  std::vector<std::uint64_t> starts_;
};
}  // namespace

std::size_t Tensor::dim(unsigned d) const {
  if (d >= shape_.size()) fail(ErrorKind::InvalidArgument, "dimension {} out of range for rank {}", d, shape_.size());
  return shape_[d];
}

Tensor Tensor::slice(std::size_t begin, std::size_t end, unsigned d) const {
  if (!valid()) fail(ErrorKind::InvalidArgument, "slice of an invalid tensor");
  if (d >= rank()) fail(ErrorKind::InvalidArgument, "slice dimension {} out of range for rank {}", d, rank());
  if (begin > end || end > shape_[d]) {
    fail(ErrorKind::InvalidArgument, "slice [{}, {}) out of range for dimension {} of size {}", begin, end, d, shape_[d]);
  }
  std::size_t outer = 1, inner = 1;
  for (unsigned i = 0; i < d; ++i) outer *= shape_[i];
  for (std::size_t i = d + 1; i < rank(); ++i) inner *= shape_[i];
  std::vector<Region> regions;
  const RegionIndex index(regions_);
  if (d == 0 || end > begin) {
    for (std::size_t o = 0; o < outer; ++o) {
      const std::uint64_t base = (o * shape_[d]) * inner;
      index.appendRange(base + begin * inner, base + end * inner, regions);
    }
  }
  Shape shape = shape_;
  shape[d] = end - begin;
  return Tensor(graphId_, type_, std::move(shape), std::move(regions));
}

Tensor Tensor::operator[](std::size_t i) const {
  Tensor t = slice(i, i + 1, 0);
  t.shape_.erase(t.shape_.begin());
  return t;
}

Tensor Tensor::reshape(const Shape &shape) const {
  if (!valid()) fail(ErrorKind::InvalidArgument, "reshape of an invalid tensor");
  if (numElementsOf(shape) != numElements()) {
    fail(ErrorKind::InvalidArgument, "reshape of {} elements to a shape of {}", numElements(), numElementsOf(shape));
  }
  return Tensor(graphId_, type_, shape, regions_);
}

Tensor Tensor::transpose() const {
  if (rank() != 2) fail(ErrorKind::InvalidArgument, "transpose needs rank 2, got {}", rank());
  const std::size_t rows = shape_[0], cols = shape_[1];
  std::vector<Region> regions;
  regions.reserve(rows * cols);
  const RegionIndex index(regions_);
  for (std::size_t c = 0; c < cols; ++c) {
    for (std::size_t r = 0; r < rows; ++r) index.appendRange(r * cols + c, r * cols + c + 1, regions);
  }
  return Tensor(graphId_, type_, {cols, rows}, std::move(regions));
}

Tensor concat(const std::vector<Tensor> &parts, unsigned d) {
  if (parts.empty()) fail(ErrorKind::InvalidArgument, "concat of no tensors");
  const Tensor &first = parts.front();
  if (!first.valid()) fail(ErrorKind::InvalidArgument, "concat of an invalid tensor");
  if (d >= first.rank()) fail(ErrorKind::InvalidArgument, "concat dimension {} out of range for rank {}", d, first.rank());
  Shape shape = first.shape();
  shape[d] = 0;
  for (const auto &p : parts) {
    if (p.graphId() != first.graphId() || p.elementType() != first.elementType() || p.rank() != first.rank()) {
      fail(ErrorKind::InvalidArgument, "concat of tensors from different graphs, types or ranks");
    }
    for (std::size_t i = 0; i < p.rank(); ++i) {
      if (i != d && p.shape()[i] != first.shape()[i]) {
        fail(ErrorKind::InvalidArgument, "concat along {}: dimension {} differs ({} vs {})", d, i, p.shape()[i], first.shape()[i]);
      }
    }
    shape[d] += p.shape()[d];
  }
  std::size_t outer = 1;
  for (unsigned i = 0; i < d; ++i) outer *= shape[i];
  std::vector<Region> regions;
  std::vector<RegionIndex> indexes;
  indexes.reserve(parts.size());
  for (const auto &p : parts) indexes.emplace_back(p.regions_);
  for (std::size_t o = 0; o < outer; ++o) {
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const std::uint64_t block = parts[i].numElements() / (outer == 0 ? 1 : outer);
      indexes[i].appendRange(o * block, (o + 1) * block, regions);
    }
  }
  return Tensor(first.graphId(), first.elementType(), std::move(shape), std::move(regions));
}

}  // namespace hwsim
