// FlatPool: the storage of many short arrays (each view's regions, each
// vertex's operands) in a few large blocks. An executable has thousands of
// them; held as a vector each, every creation made and every destruction
// freed one heap block per array, and glibc consolidated those frees at
// the next large allocation. Blocks never move, so the spans a pool hands
// out stay valid as long as the pool lives; the pool cannot be copied (the
// copies' spans would still point into the original).
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace hwsim::detail {

template <typename T>
class FlatPool {
 public:
  FlatPool() = default;
  FlatPool(const FlatPool &) = delete;
  FlatPool &operator=(const FlatPool &) = delete;

  // Makes room for `n` more elements in one block, for a producer that
  // knows its total up front (the deserializer): one allocation in all.
  void reserve(std::size_t n) {
    if (n > left_) newBlock(n);
  }

  // `n` value-initialized elements, contiguous.
  std::span<T> allocate(std::size_t n) {
    if (n == 0) return {};
    if (n > left_) newBlock(std::max(n, kBlockElements));
    const std::span<T> out(next_, n);
    next_ += n;
    left_ -= n;
    return out;
  }

  // The elements of `range` (anything with size, begin and end), each
  // passed through `convert`, as one span.
  template <typename Range, typename Convert>
  std::span<T> copy(const Range &range, Convert convert) {
    const std::span<T> out = allocate(range.size());
    std::transform(range.begin(), range.end(), out.begin(), convert);
    return out;
  }

 private:
  // Big enough that a compiled graph takes few blocks, small enough not to
  // matter for a tiny one.
  static constexpr std::size_t kBlockElements = 512;

  void newBlock(std::size_t n) {
    blocks_.push_back(std::make_unique<T[]>(n));
    next_ = blocks_.back().get();
    left_ = n;
  }

  std::vector<std::unique_ptr<T[]>> blocks_;
  T *next_ = nullptr;
  std::size_t left_ = 0;
};

}  // namespace hwsim::detail
