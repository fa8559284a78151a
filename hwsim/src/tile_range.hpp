// The tiles an ops function may use, shared by the ops_*.cpp files.
#pragma once

#include <utility>

#include "hwsim/graph.hpp"
#include "hwsim/ops.hpp"

namespace hwsim::detail {

// (first tile, number of tiles) of r on g's target: an empty r is the
// graph's default tiles (Graph::setDefaultTiles); count 0, or a range past
// the last tile, runs to the last tile. Throws InvalidArgument when r starts
// past the last tile.
std::pair<unsigned, unsigned> resolveTileRange(const Graph &g, ops::TileRange r);

// True if `block` can be a vertex operand on `tile` as it is: one contiguous
// run of one variable, all of it on that tile.
bool residentOn(const Graph &g, const Tensor &block, unsigned tile);

}  // namespace hwsim::detail
