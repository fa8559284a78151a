// Half-open byte intervals [begin, end) of a replica's arena, for the plans
// that check which operands of a compute set share bytes (elementwise runs,
// MatMul rows).
#pragma once

#include <cstdint>
#include <vector>

namespace hwsim::detail {

struct ByteInterval {
  std::uint64_t begin, end;
};

// Sorts v by begin; whether no two of its intervals overlap.
bool sortDisjoint(std::vector<ByteInterval> &v);

// v sorted, the intervals that overlap or touch merged into one.
std::vector<ByteInterval> mergedIntervals(std::vector<ByteInterval> v);

// Whether r overlaps an interval of `sorted` (sorted and disjoint).
bool overlapsAny(const std::vector<ByteInterval> &sorted, ByteInterval r);

}  // namespace hwsim::detail
