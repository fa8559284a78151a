// Static cycle costs of program steps, from the Target's rates (docs/hwsim.md).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "exe_data.hpp"

namespace hwsim::detail {

// Calls fn(flatBegin, flatEnd, tile) for each run of a view's elements on one tile.
template <typename Fn>
void forEachTileRun(const ExecutableData &exe, const ExeView &view, Fn &&fn);

struct CopyCost {
  std::uint64_t cycles = 0;
  std::uint32_t tiles = 0;  // tiles receiving data
};

// The exchange phase of a device-side copy: bytes received by the busiest tile
// over the exchange rate, plus IPU-link time for bytes between IPUs, plus the sync.
CopyCost deviceCopyCost(const ExecutableData &exe, const ExeView &src, const ExeView &dst);
// A host transfer of `bytes` spread over the tiles of `view` (stream or remote copy).
CopyCost hostCopyCost(const ExecutableData &exe, const ExeView &view, std::uint64_t bytes, bool hostSync);
// Cycles of a compute set (busiest tile plus the sync) and the number of tiles busy.
CopyCost computeSetCost(const ExecutableData &exe, const ExeComputeSet &cs);
// Tiles touched by a view.
std::uint32_t tilesOf(const ExecutableData &exe, const ExeView &view);

// Per-iteration / per-decision overhead of control flow, in cycles.
inline constexpr std::uint64_t kControlFlowCycles = 12;

template <typename Fn>
void forEachTileRun(const ExecutableData &exe, const ExeView &view, Fn &&fn) {
  std::uint64_t pos = 0;
  for (const auto &r : view.regions) {
    const auto &variable = exe.variables[r.var];
    const auto &mapping = variable.mapping;
    // Binary search for the first interval ending after r.begin, from a
    // guess by proportion: a variable spread over tiles mostly has intervals
    // of one size, where the guess is the answer (validation runs this for
    // every vertex operand, and big mappings make a blind search cache-bound).
    std::size_t lo = 0, hi = mapping.size();
    if (hi > 1 && variable.numElements > 0) {
      const auto guess = std::min(hi - 1, static_cast<std::size_t>(static_cast<double>(r.begin) / static_cast<double>(variable.numElements) *
                                                                   static_cast<double>(hi)));
      if (mapping[guess].end <= r.begin) lo = guess + 1;
      else if (guess == 0 || mapping[guess - 1].end <= r.begin) lo = hi = guess;
      else hi = guess;
    }
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (mapping[mid].end <= r.begin) lo = mid + 1;
      else hi = mid;
    }
    for (std::size_t i = lo; i < mapping.size() && mapping[i].begin < r.end; ++i) {
      const auto b = mapping[i].begin > r.begin ? mapping[i].begin : r.begin;
      const auto e = mapping[i].end < r.end ? mapping[i].end : r.end;
      if (b < e) fn(pos + (b - r.begin), pos + (e - r.begin), mapping[i].tile);
    }
    pos += r.end - r.begin;
  }
}

}  // namespace hwsim::detail
