// IO tiles (engine/compile option exchange.numIOTiles): the last N tiles of
// every IPU only stream. They run no vertices; they hold the landing buffer
// of every host-to-device stream, so that the next transfer of a stream can
// arrive from the host (through a prefetch) while the other tiles still
// compute the current run. docs/hwsim.md, "Overlapped I/O", has the model.
#pragma once

#include <cstdint>
#include <vector>

#include "exe_data.hpp"
#include "hwsim/error.hpp"
#include "hwsim/options.hpp"

namespace hwsim::detail {

inline constexpr const char *kNumIOTilesOption = "exchange.numIOTiles";

// The option's value in `options` (validated), 0 if absent.
unsigned numIOTiles(const OptionFlags &options);

// Throws Error(kind) naming the problem if `ioTiles` leaves an IPU without a
// compute tile or a vertex of `exe` runs on an IO tile.
void checkIOTiles(const ExecutableData &exe, unsigned ioTiles, ErrorKind kind);

// Bytes each tile holds for the streams' landing buffers: every
// host-to-device stream's transfer, spread evenly over the IO tiles.
std::vector<std::uint64_t> ioTileStreamBytes(const ExecutableData &exe, unsigned ioTiles);

// Cycles of moving a transfer that has landed on the IO tiles to the tiles
// of its destination `view`: the larger of the busiest receiving tile's
// bytes and the IO tiles' share of sending, over the exchange rate, plus an
// internal sync.
std::uint64_t ioToComputeCycles(const ExecutableData &exe, const ExeView &view, unsigned ioTiles);

}  // namespace hwsim::detail
