// TileMap: which tile holds each element of a variable, as sorted disjoint
// intervals (a 1M-element tensor spread over 1472 tiles is 1472 entries, not
// 1M), with overwrite-on-assign semantics like Graph::setTileMapping.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace hwsim::detail {

struct MappedInterval {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint32_t tile = 0;
  bool operator==(const MappedInterval &) const = default;
};

class TileMap {
 public:
  // Maps elements [begin, end) to tile, replacing any previous mapping.
  void assign(std::uint64_t begin, std::uint64_t end, std::uint32_t tile);
  // The first element of [begin, end) not mapped to any tile.
  std::optional<std::uint64_t> firstUnmapped(std::uint64_t begin, std::uint64_t end) const;
  // Calls fn(begin, end, tile) for each mapped run intersecting [begin, end), in order.
  template <typename Fn>
  void forEach(std::uint64_t begin, std::uint64_t end, Fn &&fn) const {
    for (auto i = lowerBound(begin); i < intervals_.size() && intervals_[i].begin < end; ++i) {
      const auto &iv = intervals_[i];
      const auto b = iv.begin > begin ? iv.begin : begin;
      const auto e = iv.end < end ? iv.end : end;
      if (b < e) fn(b, e, iv.tile);
    }
  }
  const std::vector<MappedInterval> &intervals() const { return intervals_; }
  void setIntervals(std::vector<MappedInterval> intervals) { intervals_ = std::move(intervals); }

 private:
  // Index of the first interval whose end is > element.
  std::size_t lowerBound(std::uint64_t element) const;
  std::vector<MappedInterval> intervals_;
};

}  // namespace hwsim::detail
