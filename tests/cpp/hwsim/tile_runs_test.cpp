// forEachTileRun (cost_model.hpp, a private header): the runs of a view's
// elements on one tile, against a lookup of every element's tile, for
// mappings whose intervals are of one size (where the search's first guess
// hits) and of very different sizes (where it misses), and regions in any
// order.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "cost_model.hpp"

namespace {

using hwsim::detail::ExecutableData;
using hwsim::detail::ExeRegion;
using hwsim::detail::ExeVariable;
using hwsim::detail::ExeView;
using hwsim::detail::MappedInterval;
using Run = std::tuple<std::uint64_t, std::uint64_t, std::uint32_t>;

ExeVariable variable(std::vector<MappedInterval> mapping) {
  ExeVariable v;
  v.numElements = mapping.empty() ? 0 : mapping.back().end;
  v.shape = {v.numElements};
  v.mapping = std::move(mapping);
  return v;
}

// Element by element: the mapping interval holding each element; a run is
// a region's elements in one interval (neighbouring intervals on one tile
// are separate runs, as forEachTileRun gives them).
std::vector<Run> expectedRuns(const ExecutableData &exe, const ExeView &view) {
  std::vector<Run> runs;
  std::uint64_t pos = 0;
  for (const ExeRegion &r : view.regions) {
    std::size_t runInterval = 0;
    for (std::uint64_t e = r.begin; e < r.end; ++e, ++pos) {
      const auto &mapping = exe.variables[r.var].mapping;
      std::size_t interval = 0;
      while (!(mapping[interval].begin <= e && e < mapping[interval].end)) ++interval;
      if (e != r.begin && interval == runInterval) {
        std::get<1>(runs.back()) = pos + 1;
      } else {
        runs.emplace_back(pos, pos + 1, mapping[interval].tile);
        runInterval = interval;
      }
    }
  }
  return runs;
}

std::vector<Run> actualRuns(const ExecutableData &exe, const ExeView &view) {
  std::vector<Run> runs;
  hwsim::detail::forEachTileRun(exe, view, [&](std::uint64_t b, std::uint64_t e, std::uint32_t tile) { runs.emplace_back(b, e, tile); });
  return runs;
}

TEST(ForEachTileRun, MatchesAnElementByElementLookup) {
  ExecutableData exe;
  // Even: 16 intervals of 10 elements, tiles 0..15 (the guess hits).
  std::vector<MappedInterval> even;
  for (std::uint32_t t = 0; t < 16; ++t) even.push_back({t * 10u, t * 10u + 10, t});
  exe.variables.push_back(variable(even));
  // Uneven: one big interval then many small ones (the guess misses both ways),
  // neighbours on the same tile kept apart as a deserialized mapping may have them.
  exe.variables.push_back(variable({{0, 100, 7}, {100, 101, 1}, {101, 103, 2}, {103, 104, 2}, {104, 110, 3}, {110, 160, 4}, {160, 161, 5}}));
  // One interval.
  exe.variables.push_back(variable({{0, 50, 9}}));

  const std::vector<std::vector<ExeRegion>> views = {
      {{0, 0, 160}},                                       // all of a variable
      {{0, 5, 15}, {0, 15, 35}, {0, 35, 36}},              // following regions
      {{0, 150, 160}, {0, 0, 10}, {0, 75, 76}},            // regions going back
      {{1, 0, 161}},
      {{1, 99, 102}, {1, 102, 105}, {1, 105, 160}, {1, 160, 161}},
      {{1, 160, 161}, {1, 100, 101}, {1, 0, 1}, {1, 103, 112}},
      {{2, 10, 20}, {0, 95, 125}, {1, 98, 104}, {2, 0, 50}},  // several variables
      {{0, 40, 40}, {1, 3, 3}},                             // empty regions
  };
  for (std::size_t i = 0; i < views.size(); ++i) {
    ExeView view;
    view.regions = views[i];
    for (const auto &r : view.regions) view.numElements += r.end - r.begin;
    EXPECT_EQ(actualRuns(exe, view), expectedRuns(exe, view)) << "view " << i;
  }
}

}  // namespace
