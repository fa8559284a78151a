#include "engine_plan.hpp"

#include <algorithm>

namespace hwsim::detail {

namespace {
// Each variable starts a cache line in the arena.
constexpr std::uint64_t kArenaAlignment = 64;
}  // namespace

std::shared_ptr<const EnginePlan> EnginePlan::of(const ExecutableData &d, const PlanSettings &settings) {
  // Made under the lock: engines of one executable created at once wait for
  // the first one's plan rather than each making their own.
  std::lock_guard lock(d.planMutex);
  for (const auto &plan : d.plans) {
    if (plan->settings == settings) return plan;
  }
  auto plan = std::make_shared<const EnginePlan>(d, settings);
  d.plans.push_back(plan);
  return plan;
}

EnginePlan::EnginePlan(const ExecutableData &data, const PlanSettings &s) : d(&data), settings(s) {
  resolveLayout();
  planComputeSets();
  planCopies();
  prepareVertices();
  planMatMulRows();
  planElementwiseRuns();
}

void EnginePlan::resolveLayout() {
  // Host placement of variables: one arena per replica, each variable at an
  // aligned offset. (Tile placement only matters for checks and timing.)
  varOffsets.resize(d->variables.size());
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < d->variables.size(); ++i) {
    varOffsets[i] = offset;
    const std::uint64_t bytes = d->variables[i].numElements * sizeOf(d->variables[i].type);
    offset += (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  }
  arenaBytes = std::max<std::uint64_t>(offset, kArenaAlignment);
  // A view has at most a segment per region: reserving that total makes the
  // pool one allocation. Spans are taken once it is filled.
  std::size_t totalRegions = 0;
  for (const auto &v : d->views) totalRegions += v.regions.size();
  segmentPool.reserve(totalRegions);
  std::vector<std::size_t> firstSegment(d->views.size() + 1);
  views.resize(d->views.size());
  for (std::size_t i = 0; i < d->views.size(); ++i) {
    const auto &v = d->views[i];
    const std::uint64_t es = sizeOf(v.type);
    views[i].bytes = v.numElements * es;
    firstSegment[i] = segmentPool.size();
    for (const auto &r : v.regions) {
      const std::uint64_t off = varOffsets[r.var] + r.begin * es, len = (r.end - r.begin) * es;
      if (len == 0) continue;
      if (segmentPool.size() > firstSegment[i] && segmentPool.back().first + segmentPool.back().second == off) {
        segmentPool.back().second += len;
      } else {
        segmentPool.emplace_back(off, len);
      }
    }
  }
  firstSegment.back() = segmentPool.size();
  for (std::size_t i = 0; i < views.size(); ++i) {
    auto &rv = views[i];
    rv.segments = detail::ByteSpan(segmentPool).subspan(firstSegment[i], firstSegment[i + 1] - firstSegment[i]);
    rv.contiguous = rv.segments.size() <= 1;
    rv.offset = rv.segments.empty() ? 0 : rv.segments.front().first;
  }
}

std::vector<ByteSpan> EnginePlan::viewSegments() const {
  std::vector<ByteSpan> segments(views.size());
  for (std::size_t i = 0; i < views.size(); ++i) segments[i] = views[i].segments;
  return segments;
}

void EnginePlan::planComputeSets() {
  // Chunks of whole tiles with roughly equal modelled work, so the host pool
  // gets balanced pieces; small compute sets stay on the calling thread, and
  // those with chunks go to the pool only once their gate (Engine::Impl's
  // csGates) has timed them.
  constexpr std::uint64_t kInlineCycles = 2000;
  const unsigned workers = settings.hostThreads;
  csChunks.resize(d->computeSets.size());
  for (std::size_t c = 0; c < d->computeSets.size(); ++c) {
    const auto &vs = d->computeSets[c].vertices;
    std::uint64_t total = 0;
    for (const auto &v : vs) total += v.cycles;
    auto &chunks = csChunks[c];
    chunks.push_back(0);
    if (total >= kInlineCycles && workers > 1) {
      const std::uint64_t target = std::max<std::uint64_t>(1, total / (4 * workers));
      std::uint64_t acc = 0;
      for (std::size_t i = 0; i < vs.size(); ++i) {
        acc += vs[i].cycles;
        const bool tileEnds = i + 1 == vs.size() || vs[i + 1].tile != vs[i].tile;
        if (acc >= target && tileEnds && i + 1 < vs.size()) {
          chunks.push_back(static_cast<std::uint32_t>(i + 1));
          acc = 0;
        }
      }
    }
    chunks.push_back(static_cast<std::uint32_t>(vs.size()));
  }
}

}  // namespace hwsim::detail
