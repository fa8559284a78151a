// How the vertices of one compute set share a tile's cycles (docs/hwsim.md,
// "Worker contexts"): the supervisor launches them one after another
// (vertexOverheadCycles each), and each vertex's work runs on the tile's
// worker contexts, which the tile issues for in turn, so a worker issues one
// instruction every workerContextsPerTile cycles.
#pragma once

#include <cstdint>
#include <vector>

#include "hwsim/target.hpp"

namespace hwsim::detail {

class TileWorkers {
 public:
  explicit TileWorkers(const Target &target);
  // A vertex whose codelet costs `vertexCycles` (vertexOverheadCycles + work,
  // work in cycles of the whole tile's issue rate). Its work is split into
  // min(workers, work) equal pieces, each taking workers x its share of the
  // work on one worker, and each piece goes to the worker free first.
  void add(std::uint64_t vertexCycles);
  // Launch overheads plus the busiest worker's time, rounded up.
  std::uint64_t cycles() const;

 private:
  double overhead_;
  std::uint64_t launches_ = 0;
  std::vector<double> busy_;  // per worker
};

}  // namespace hwsim::detail
