#include "tile_map.hpp"

#include <algorithm>

namespace hwsim::detail {

std::size_t TileMap::lowerBound(std::uint64_t element) const {
  auto it = std::upper_bound(intervals_.begin(), intervals_.end(), element,
                             [](std::uint64_t e, const MappedInterval &iv) { return e < iv.end; });
  return static_cast<std::size_t>(it - intervals_.begin());
}

void TileMap::assign(std::uint64_t begin, std::uint64_t end, std::uint32_t tile) {
  if (begin >= end) return;
  std::vector<MappedInterval> out;
  out.reserve(intervals_.size() + 2);
  std::size_t i = 0;
  // Intervals entirely before the new one, and the part of an overlapping one before it.
  for (; i < intervals_.size() && intervals_[i].begin < begin; ++i) {
    auto iv = intervals_[i];
    if (iv.end > begin) {
      MappedInterval head{iv.begin, begin, iv.tile};
      out.push_back(head);
      break;
    }
    out.push_back(iv);
  }
  out.push_back({begin, end, tile});
  for (; i < intervals_.size(); ++i) {
    auto iv = intervals_[i];
    if (iv.end <= end) continue;           // fully covered by the new interval
    if (iv.begin < end) iv.begin = end;    // keep the tail after it
    out.push_back(iv);
  }
  // Merge neighbours on the same tile so the map stays small.
  std::vector<MappedInterval> merged;
  merged.reserve(out.size());
  for (const auto &iv : out) {
    if (!merged.empty() && merged.back().end == iv.begin && merged.back().tile == iv.tile) {
      merged.back().end = iv.end;
    } else {
      merged.push_back(iv);
    }
  }
  intervals_ = std::move(merged);
}

std::optional<std::uint64_t> TileMap::firstUnmapped(std::uint64_t begin, std::uint64_t end) const {
  std::uint64_t cursor = begin;
  for (auto i = lowerBound(begin); i < intervals_.size() && cursor < end; ++i) {
    if (intervals_[i].begin > cursor) return cursor;
    cursor = intervals_[i].end;
  }
  if (cursor < end) return cursor;
  return std::nullopt;
}

}  // namespace hwsim::detail
