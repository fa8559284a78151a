#include "worker_schedule.hpp"

#include <algorithm>
#include <cmath>

namespace hwsim::detail {

TileWorkers::TileWorkers(const Target &target)
    : overhead_(target.vertexOverheadCycles), busy_(std::max(1u, target.workerContextsPerTile), 0.0) {}

void TileWorkers::add(std::uint64_t vertexCycles) {
  ++launches_;
  const double work = std::max(0.0, static_cast<double>(vertexCycles) - overhead_);
  if (work <= 0) return;
  const double workers = static_cast<double>(busy_.size());
  // Each codelet's work is whole instructions, so a vertex of fewer than
  // `workers` instructions keeps only that many workers busy, each for a
  // whole turn of the barrel.
  const double pieces = std::min(workers, std::ceil(work));
  const double pieceCycles = work * workers / pieces;
  for (int p = 0; p < static_cast<int>(pieces); ++p) *std::min_element(busy_.begin(), busy_.end()) += pieceCycles;
}

std::uint64_t TileWorkers::cycles() const {
  const double busiest = *std::max_element(busy_.begin(), busy_.end());
  return static_cast<std::uint64_t>(std::ceil(static_cast<double>(launches_) * overhead_ + busiest));
}

}  // namespace hwsim::detail
