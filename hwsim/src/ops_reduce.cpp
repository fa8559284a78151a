// ops::reduce in two stages across tiles (docs/hwsim.md, "Reductions"): the
// outermost reduced dimension is cut into groups, each reduced on its own
// tile into a partial result of the kept shape; the partials are then
// exchanged, column ranges to different tiles, and reduced over the groups.
#include <algorithm>
#include <string>

#include "fail.hpp"
#include "hwsim/ops.hpp"
#include "tile_range.hpp"

namespace hwsim::ops {

namespace {

// Elements a first-stage tile reduces at least: smaller groups would save
// fewer modelled cycles than the second stage's exchange and sync cost, and
// cost the host a vertex and a step for little work.
constexpr std::size_t kMinElementsPerGroup = 4096;

// Whether partial results of `codelet` reduce again with the same codelet.
// A mean of means is the mean only over groups of equal size, and only
// without integer rounding in between.
bool combinesAgain(std::string_view codelet, Type type) {
  if (codelet == "ReduceMean") return type == Type::F16 || type == Type::F32;
  return codelet == "ReduceSum" || codelet == "ReduceMax" || codelet == "ReduceMin" || codelet == "ReduceProd";
}

void addReduceVertex(Graph &g, ComputeSet cs, std::string_view codelet, const Tensor &in, const Tensor &out,
                     const std::vector<double> &axes, unsigned tile) {
  auto v = g.addVertex(cs, codelet, {{"in", in}, {"out", out}}, tile);
  g.setInitialValue(v, "axes", axes);
}

// The tiles of the first stage: a group whose slice of `in` lies on one tile
// (contiguous) is reduced there, unless another group took that tile; the
// others go to the range's tiles no group uses, from the first.
std::vector<unsigned> groupTiles(const Graph &g, const std::vector<Tensor> &slices, unsigned first, unsigned count) {
  std::vector<unsigned> tiles(slices.size(), 0);
  std::vector<bool> taken(count, false);
  std::vector<bool> placed(slices.size(), false);
  for (std::size_t p = 0; p < slices.size(); ++p) {
    const auto runs = g.getTileMapping(slices[p]);
    if (runs.empty()) continue;
    const unsigned tile = runs.front().tile;
    if (tile < first || tile >= first + count || taken[tile - first] || !detail::residentOn(g, slices[p], tile)) continue;
    tiles[p] = tile;
    taken[tile - first] = placed[p] = true;
  }
  unsigned next = 0;
  for (std::size_t p = 0; p < slices.size(); ++p) {
    if (placed[p]) continue;
    while (taken[next]) ++next;
    tiles[p] = first + next;
    taken[next] = true;
  }
  return tiles;
}

}  // namespace

Tensor reduce(Graph &g, program::Sequence &prog, std::string_view codelet, const Tensor &in,
              const std::vector<std::size_t> &axes, std::string_view name, TileRange tiles) {
  const auto [first, count] = detail::resolveTileRange(g, tiles);
  Shape kept;
  for (std::size_t d = 0; d < in.rank(); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) kept.push_back(in.dim(static_cast<unsigned>(d)));
  }
  if (axes.empty()) kept.clear();
  std::size_t keptElements = 1;
  for (std::size_t d : kept) keptElements *= d;
  const std::vector<double> ax(axes.begin(), axes.end());
  const std::string base(name);
  auto out = g.addVariable(in.elementType(), kept.empty() ? Shape{1} : kept, name);

  // Groups along the outermost reduced dimension, one tile each.
  const unsigned cut = axes.empty() ? 0u : static_cast<unsigned>(*std::min_element(axes.begin(), axes.end()));
  const std::size_t depth = in.rank() == 0 ? 1 : in.dim(cut);
  std::size_t groups = std::max<std::size_t>(
      1, std::min<std::size_t>({count, depth, in.numElements() / kMinElementsPerGroup}));
  if (!combinesAgain(codelet, in.elementType())) groups = 1;
  if (codelet == "ReduceMean") {
    while (depth % groups != 0) --groups;
  }

  if (groups == 1) {
    g.setTileMapping(out, first);
    auto local = g.addVariable(in.elementType(), in.shape(), base + "/in");
    g.setTileMapping(local, first);
    prog.add(program::Copy(in, local, base + "/exchange_in"));
    auto cs = g.addComputeSet(base);
    addReduceVertex(g, cs, codelet, local, out, ax, first);
    prog.add(program::Execute(cs));
    return out;
  }

  // Stage 1: each group reduced on its tile into a partial of keptElements.
  std::vector<Tensor> slices;
  for (std::size_t p = 0; p < groups; ++p) slices.push_back(in.slice(p * depth / groups, (p + 1) * depth / groups, cut));
  const std::vector<unsigned> tilesOfGroup = groupTiles(g, slices, first, count);
  auto partialCs = g.addComputeSet(base + "/partial");
  std::vector<Tensor> src, dst, partials;
  for (std::size_t p = 0; p < groups; ++p) {
    const unsigned tile = tilesOfGroup[p];
    const std::string at = "@" + std::to_string(tile);
    Tensor slice = slices[p];
    if (!detail::residentOn(g, slice, tile)) {
      auto local = g.addVariable(in.elementType(), slice.shape(), base + "/in" + at);
      g.setTileMapping(local, tile);
      src.push_back(slice.flatten());
      dst.push_back(local.flatten());
      slice = local;
    }
    auto partial = g.addVariable(in.elementType(), {keptElements}, base + "/partial" + at);
    g.setTileMapping(partial, tile);
    partials.push_back(partial);
    addReduceVertex(g, partialCs, codelet, slice, partial, ax, tile);
  }
  if (!src.empty()) prog.add(program::Copy(concat(src), concat(dst), base + "/exchange_in"));
  prog.add(program::Execute(partialCs));

  // Stage 2: column ranges of the partials gathered on different tiles and
  // reduced over the groups.
  const std::size_t spread = std::min(groups, keptElements);
  const Tensor flatOut = out.flatten();
  auto finalCs = g.addComputeSet(base);
  src.clear();
  dst.clear();
  for (std::size_t q = 0; q < spread; ++q) {
    const std::size_t c0 = q * keptElements / spread, c1 = (q + 1) * keptElements / spread;
    const unsigned tile = first + static_cast<unsigned>(q);
    auto stack = g.addVariable(in.elementType(), {groups, c1 - c0}, base + "/partials@" + std::to_string(tile));
    g.setTileMapping(stack, tile);
    for (std::size_t p = 0; p < groups; ++p) {
      src.push_back(partials[p].slice(c0, c1));
      dst.push_back(stack[p]);
    }
    g.setTileMapping(flatOut.slice(c0, c1), tile);
    addReduceVertex(g, finalCs, codelet, stack, flatOut.slice(c0, c1), {0}, tile);
  }
  prog.add(program::Copy(concat(src), concat(dst), base + "/exchange_partials"));
  prog.add(program::Execute(finalCs));
  return out;
}

}  // namespace hwsim::ops
