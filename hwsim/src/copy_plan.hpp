// Direct copies: a Copy step whose source and destination share no byte is
// planned at engine creation as memcpys from where each piece is to where it
// goes. For scattered views (an exchange gathering blocks from several
// tiles, a broadcast) this replaces gathering the whole source into a
// staging buffer and scattering it again, which moved every byte twice.
// The plan also tells which bytes each copy mirrors (operand_mirrors.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace hwsim::detail {

// Byte ranges (offset, length) of a replica's memory arena, in the order a
// view's elements are in them.
using ByteRanges = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
// The same, borrowed (a view's resolved segments, without a copy per view).
using ByteSpan = std::span<const std::pair<std::uint64_t, std::uint64_t>>;

// Whether any range of a overlaps any range of b.
bool overlap(ByteSpan a, ByteSpan b);

// One memcpy of a direct copy.
struct CopyChunk {
  std::uint64_t dst = 0, src = 0, bytes = 0;
};

// The memcpys, in element order and with neighbours merged, that copy the
// bytes of `src` onto those of `dst` (both views of the same number of
// bytes). Empty when some byte is both read and written (then a piece could
// read what an earlier piece wrote, and the copy has to be staged or, between
// two contiguous views, be one memmove) or when there is nothing to copy.
std::vector<CopyChunk> directCopyChunks(ByteSpan src, ByteSpan dst);

// Runs a direct copy's memcpys in the memory arena at `base`.
void runCopyChunks(std::uint8_t *base, const std::vector<CopyChunk> &chunks);

}  // namespace hwsim::detail
