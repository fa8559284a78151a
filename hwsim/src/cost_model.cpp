#include "cost_model.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "worker_schedule.hpp"

namespace hwsim::detail {

namespace {
struct Run {
  std::uint64_t begin, end;
  std::uint32_t tile;
};
std::vector<Run> runsOf(const ExecutableData &exe, const ExeView &view) {
  std::vector<Run> runs;
  forEachTileRun(exe, view, [&](std::uint64_t b, std::uint64_t e, std::uint32_t tile) { runs.push_back({b, e, tile}); });
  return runs;
}
}  // namespace

std::uint32_t tilesOf(const ExecutableData &exe, const ExeView &view) {
  std::vector<bool> seen(exe.target.numTiles(), false);
  std::uint32_t count = 0;
  forEachTileRun(exe, view, [&](std::uint64_t, std::uint64_t, std::uint32_t tile) {
    if (tile < seen.size() && !seen[tile]) {
      seen[tile] = true;
      ++count;
    }
  });
  return count;
}

CopyCost deviceCopyCost(const ExecutableData &exe, const ExeView &src, const ExeView &dst) {
  const Target &t = exe.target;
  const std::uint64_t elemBytes = sizeOf(dst.type);
  const auto srcRuns = runsOf(exe, src), dstRuns = runsOf(exe, dst);
  std::unordered_map<std::uint32_t, std::uint64_t> received;
  std::uint64_t crossIpuBytes = 0;
  // Merge the two run lists: each overlap moves elements from one tile to another.
  std::size_t i = 0, j = 0;
  while (i < srcRuns.size() && j < dstRuns.size()) {
    const auto b = std::max(srcRuns[i].begin, dstRuns[j].begin);
    const auto e = std::min(srcRuns[i].end, dstRuns[j].end);
    if (b < e) {
      const std::uint64_t bytes = (e - b) * elemBytes;
      if (srcRuns[i].tile != dstRuns[j].tile) received[dstRuns[j].tile] += bytes;
      if (t.ipuOfTile(srcRuns[i].tile) != t.ipuOfTile(dstRuns[j].tile)) crossIpuBytes += bytes;
    }
    if (srcRuns[i].end <= dstRuns[j].end) ++i;
    else ++j;
  }
  std::uint64_t busiest = 0;
  for (const auto &[tile, bytes] : received) busiest = std::max(busiest, bytes);
  double cycles = std::ceil(static_cast<double>(busiest) / t.exchangeBytesPerCycle);
  if (crossIpuBytes > 0) {
    cycles += std::ceil(static_cast<double>(crossIpuBytes) / (t.ipuLinkBytesPerSecond / t.clockHz)) + t.externalSyncCycles;
  } else {
    cycles += t.internalSyncCycles;
  }
  return {static_cast<std::uint64_t>(cycles), static_cast<std::uint32_t>(received.size())};
}

CopyCost hostCopyCost(const ExecutableData &exe, const ExeView &view, std::uint64_t bytes, bool hostSync) {
  const Target &t = exe.target;
  double cycles = std::ceil(static_cast<double>(bytes) / (t.hostLinkBytesPerSecond / t.clockHz));
  cycles += hostSync ? t.hostSyncCycles : t.externalSyncCycles;
  return {static_cast<std::uint64_t>(cycles), tilesOf(exe, view)};
}

CopyCost computeSetCost(const ExecutableData &exe, const ExeComputeSet &cs) {
  // Vertices are sorted by tile: schedule each tile's on its workers, keep
  // the busiest tile.
  std::uint64_t busiest = 0;
  std::uint32_t tiles = 0;
  bool multiIpu = false;
  TileWorkers current(exe.target);
  for (std::size_t v = 0; v < cs.vertices.size(); ++v) {
    const auto &vx = cs.vertices[v];
    if (v == 0 || vx.tile != cs.vertices[v - 1].tile) {
      current = TileWorkers(exe.target);
      ++tiles;
      if (v > 0 && exe.target.ipuOfTile(vx.tile) != exe.target.ipuOfTile(cs.vertices[0].tile)) multiIpu = true;
    }
    current.add(vx.cycles);
    busiest = std::max(busiest, current.cycles());
  }
  const double sync = multiIpu ? exe.target.externalSyncCycles : exe.target.internalSyncCycles;
  return {busiest + static_cast<std::uint64_t>(sync), tiles};
}

}  // namespace hwsim::detail
