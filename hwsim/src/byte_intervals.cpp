#include "byte_intervals.hpp"

#include <algorithm>

namespace hwsim::detail {

bool sortDisjoint(std::vector<ByteInterval> &v) {
  std::sort(v.begin(), v.end(), [](const ByteInterval &a, const ByteInterval &b) { return a.begin < b.begin; });
  for (std::size_t i = 1; i < v.size(); ++i) {
    if (v[i].begin < v[i - 1].end) return false;
  }
  return true;
}

std::vector<ByteInterval> mergedIntervals(std::vector<ByteInterval> v) {
  std::sort(v.begin(), v.end(), [](const ByteInterval &a, const ByteInterval &b) { return a.begin < b.begin; });
  std::vector<ByteInterval> out;
  for (const ByteInterval &i : v) {
    if (!out.empty() && i.begin <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

bool overlapsAny(const std::vector<ByteInterval> &sorted, ByteInterval r) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), r.begin,
                             [](std::uint64_t b, const ByteInterval &x) { return b < x.end; });
  return it != sorted.end() && it->begin < r.end;
}

}  // namespace hwsim::detail
