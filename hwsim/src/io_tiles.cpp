#include "io_tiles.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "cost_model.hpp"
#include "fail.hpp"

namespace hwsim::detail {

unsigned numIOTiles(const OptionFlags &options) {
  const auto it = options.find(kNumIOTilesOption);
  return it == options.end() ? 0 : static_cast<unsigned>(std::stoul(it->second));
}

namespace {
bool isIOTile(const Target &t, unsigned ioTiles, unsigned tile) { return tile % t.tilesPerIpu >= t.tilesPerIpu - ioTiles; }
}  // namespace

void checkIOTiles(const ExecutableData &exe, unsigned ioTiles, ErrorKind kind) {
  if (ioTiles == 0) return;
  const Target &t = exe.target;
  if (ioTiles >= t.tilesPerIpu) {
    fail(kind, "{}={} leaves no compute tile: an IPU of this target has {} tiles", kNumIOTilesOption, ioTiles,
         t.tilesPerIpu);
  }
  for (const auto &cs : exe.computeSets) {
    for (const auto &vx : cs.vertices) {
      if (isIOTile(t, ioTiles, vx.tile)) {
        fail(kind,
             "compute set '{}' has a vertex on tile {}, one of the {} IO tiles of IPU {} ({}={}: tiles {}..{} of "
             "each IPU only stream); map compute to the first {} tiles of each IPU",
             cs.name, vx.tile, ioTiles, t.ipuOfTile(vx.tile), kNumIOTilesOption, ioTiles, t.tilesPerIpu - ioTiles,
             t.tilesPerIpu - 1, t.tilesPerIpu - ioTiles);
      }
    }
  }
}

std::vector<std::uint64_t> ioTileStreamBytes(const ExecutableData &exe, unsigned ioTiles) {
  const Target &t = exe.target;
  std::vector<std::uint64_t> bytes(t.numTiles(), 0);
  if (ioTiles == 0) return bytes;
  std::uint64_t total = 0;
  for (const auto &s : exe.streams) {
    if (s.direction == StreamDirection::HostToDevice) total += s.numBytes();
  }
  const std::uint64_t perIoTile = (total + ioTiles * t.numIpus - 1) / (ioTiles * t.numIpus);
  for (unsigned tile = 0; tile < t.numTiles(); ++tile) {
    if (isIOTile(t, ioTiles, tile)) bytes[tile] = perIoTile;
  }
  return bytes;
}

std::uint64_t ioToComputeCycles(const ExecutableData &exe, const ExeView &view, unsigned ioTiles) {
  const Target &t = exe.target;
  const std::uint64_t elemBytes = sizeOf(view.type);
  std::unordered_map<std::uint32_t, std::uint64_t> received;
  forEachTileRun(exe, view, [&](std::uint64_t b, std::uint64_t e, std::uint32_t tile) { received[tile] += (e - b) * elemBytes; });
  std::uint64_t busiest = 0;
  for (const auto &[tile, bytes] : received) busiest = std::max(busiest, bytes);
  const std::uint64_t sentPerIoTile = (view.numElements * elemBytes + ioTiles * t.numIpus - 1) / (ioTiles * t.numIpus);
  const double cycles = std::ceil(static_cast<double>(std::max(busiest, sentPerIoTile)) / t.exchangeBytesPerCycle);
  return static_cast<std::uint64_t>(cycles + t.internalSyncCycles);
}

}  // namespace hwsim::detail
