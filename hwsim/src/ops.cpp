#include "hwsim/ops.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "fail.hpp"
#include "tile_range.hpp"

namespace hwsim::ops {

using detail::fail;

namespace {

std::size_t rowSize(const Tensor &t) { return t.rank() == 0 ? 1 : std::max<std::size_t>(1, t.shape().back()); }

bool isComparison(std::string_view c) {
  return c == "Equal" || c == "NotEqual" || c == "Less" || c == "LessEqual" || c == "Greater" || c == "GreaterEqual";
}

// One vertex per tile run of `layout`, on that run's elements of each operand.
// Operands of `layout`'s size are sliced alike; others (broadcast) are copied
// to every tile used, all in one Copy: one exchange phase and one sync, as
// Poplar's broadcast would be, not a program step per tile.
void perTile(Graph &g, program::Sequence &prog, std::string_view codelet, const Tensor &layout,
             const std::vector<std::pair<std::string, Tensor>> &fields, std::string_view name) {
  auto cs = g.addComputeSet(std::string(name));
  const auto runs = g.getTileMapping(layout);
  const std::size_t n = layout.numElements();
  std::vector<Tensor> broadcastSources, broadcastCopies;
  for (const auto &run : runs) {
    std::vector<Connection> conns;
    for (const auto &[field, t] : fields) {
      if (t.numElements() == n) {
        conns.emplace_back(field, t.flatten().slice(run.begin, run.end));
      } else {
        auto local = g.addVariable(t.elementType(), t.shape(), std::string(name) + "/" + field + "@" + std::to_string(run.tile));
        g.setTileMapping(local, run.tile);
        broadcastSources.push_back(t.flatten());
        broadcastCopies.push_back(local.flatten());
        conns.emplace_back(field, local);
      }
    }
    // Keep shapes meaningful for row-wise codelets: whole rows as [rows, cols].
    const std::size_t cols = rowSize(layout);
    for (auto &[field, t] : conns) {
      if (t.numElements() == run.end - run.begin && (run.end - run.begin) % cols == 0 && layout.rank() >= 2) {
        t = t.reshape({(run.end - run.begin) / cols, cols});
      }
    }
    g.addVertex(cs, codelet, conns, run.tile);
  }
  if (!broadcastCopies.empty()) {
    prog.add(program::Copy(concat(broadcastSources), concat(broadcastCopies), std::string(name) + "/broadcast"));
  }
  prog.add(program::Execute(cs));
}

bool isRowBroadcast(const Tensor &a, const Tensor &b) {
  return b.numElements() != a.numElements() && b.numElements() != 1;
}

// Row broadcasting needs every vertex to hold whole rows of a.
bool rowAligned(const Graph &g, const Tensor &a) {
  const std::size_t cols = rowSize(a);
  for (const auto &run : g.getTileMapping(a)) {
    if (run.begin % cols != 0 || run.end % cols != 0) return false;
  }
  return true;
}

}  // namespace

Tensor createTensor(Graph &g, Type type, const Shape &shape, std::string_view name, TileRange tiles) {
  auto t = g.addVariable(type, shape, name);
  const auto [first, count] = detail::resolveTileRange(g, tiles);
  g.mapLinearly(t, rowSize(t), first, count);
  return t;
}

Tensor localize(Graph &g, program::Sequence &prog, const Tensor &t, const Tensor &layout, std::string_view name) {
  if (t.numElements() != layout.numElements()) fail(ErrorKind::InvalidArgument, "localize '{}': sizes differ", name);
  if (g.getTileMapping(t) == g.getTileMapping(layout)) return t;
  auto local = g.addVariable(t.elementType(), t.shape(), name);
  for (const auto &run : g.getTileMapping(layout)) g.setTileMapping(local.flatten().slice(run.begin, run.end), run.tile);
  prog.add(program::Copy(t, local));
  return local;
}

Tensor unary(Graph &g, program::Sequence &prog, std::string_view codelet, const Tensor &in, std::string_view name,
             std::optional<Type> outType) {
  auto out = g.addVariable(outType.value_or(in.elementType()), in.shape(), name);
  for (const auto &run : g.getTileMapping(in)) g.setTileMapping(out.flatten().slice(run.begin, run.end), run.tile);
  perTile(g, prog, codelet, in, {{"in", in}, {"out", out}}, name);
  return out;
}

Tensor binary(Graph &g, program::Sequence &prog, std::string_view codelet, const Tensor &aIn, const Tensor &b,
              std::string_view name) {
  Tensor a = aIn;
  if (isRowBroadcast(a, b) && !rowAligned(g, a)) {
    a = localize(g, prog, a, createTensor(g, a.elementType(), a.shape(), std::string(name) + "/rows"), std::string(name) + "/in0");
  }
  auto out = g.addVariable(isComparison(codelet) || codelet == "And" || codelet == "Or" ? Type::BOOL : a.elementType(), a.shape(), name);
  for (const auto &run : g.getTileMapping(a)) g.setTileMapping(out.flatten().slice(run.begin, run.end), run.tile);
  program::Sequence copies;
  const Tensor bl = b.numElements() == a.numElements() ? localize(g, copies, b, a, std::string(name) + "/in1") : b;
  prog.add(copies);
  perTile(g, prog, codelet, a, {{"in0", a}, {"in1", bl}, {"out", out}}, name);
  return out;
}

void binaryInPlace(Graph &g, program::Sequence &prog, std::string_view codelet, const Tensor &a, const Tensor &b) {
  if (isRowBroadcast(a, b) && !rowAligned(g, a)) {
    // Work on a row-aligned copy and copy the result back.
    auto result = binary(g, prog, codelet, a, b, std::string(codelet) + "/inplace");
    prog.add(program::Copy(result, a));
    return;
  }
  program::Sequence copies;
  const Tensor bl = b.numElements() == a.numElements() ? localize(g, copies, b, a, std::string(codelet) + "/in1") : b;
  prog.add(copies);
  perTile(g, prog, codelet, a, {{"in0", a}, {"in1", bl}, {"out", a}}, codelet);
}

void fill(Graph &g, program::Sequence &prog, const Tensor &t, double value) {
  auto cs = g.addComputeSet("fill");
  for (const auto &run : g.getTileMapping(t)) {
    auto v = g.addVertex(cs, "Fill", {{"out", t.flatten().slice(run.begin, run.end)}}, run.tile);
    g.setInitialValue(v, "value", value);
  }
  prog.add(program::Execute(cs));
}

namespace {

// The grid a matMul uses: gridM row blocks x gridN column blocks x gridK
// depth blocks; block (i, j, l) multiplies a's rows i, depths l by b's
// depths l, columns j on tile first + (l * gridM + i) * gridN + j. With
// gridK > 1 each tile makes an F32 partial product and the partials of an
// output block are summed in a second stage, each of its gridK tiles
// reducing one gridK-th of the block.
struct MatMulPlan {
  std::size_t gridM = 0, gridN = 0, gridK = 0;
  unsigned first = 0;
  std::size_t rowBegin(std::size_t i, std::size_t M) const { return i * M / gridM; }
  std::size_t colBegin(std::size_t j, std::size_t N) const { return j * N / gridN; }
  std::size_t depthBegin(std::size_t l, std::size_t K) const { return l * K / gridK; }
  unsigned tile(std::size_t i, std::size_t j, std::size_t l) const {
    return first + static_cast<unsigned>((l * gridM + i) * gridN + j);
  }
};

MatMulPlan planMatMul(const Graph &g, std::size_t M, std::size_t K, std::size_t N, Type type, TileRange tiles,
                      bool rhsPreloaded, std::string_view name) {
  // Plain variables, not a structured binding: the lambda below uses them
  // (clang 14, the fuzz preset's compiler, cannot capture bindings).
  const std::pair<unsigned, unsigned> range = detail::resolveTileRange(g, tiles);
  const unsigned first = range.first, count = range.second;
  const Target &t = g.getTarget();
  const double es = static_cast<double>(sizeOf(type));
  const double rate = type == Type::F16 ? t.f16MatMulFlopsPerCycle : t.f32MatMulFlopsPerCycle;
  constexpr std::size_t kMinBlock = 32;
  const auto maxGrid = [&](std::size_t dim) { return std::max<std::size_t>(1, dim / kMinBlock); };
  // The grid within `budget` bytes per tile with blocks of at least
  // kMinBlock rows, columns and depths (so each vertex is one efficient host
  // GEMM) and the fewest modelled cycles of the busiest tile: its multiply
  // at the rate of the input type, the exchange of its operands (of a only
  // when b is preloaded: its copies are made by the load program) and, when
  // K is split, the exchange and sum of the partials.
  const auto search = [&](double budget, bool splitK) {
    MatMulPlan plan;
    plan.first = first;
    double bestCycles = 0;
    for (std::size_t gm = 1; gm <= maxGrid(M) && gm <= count; ++gm) {
      for (std::size_t gn = 1; gn <= maxGrid(N) && gm * gn <= count; ++gn) {
        for (std::size_t gk = 1; gk <= (splitK ? maxGrid(K) : 1) && gm * gn * gk <= count; ++gk) {
          const double mb = std::ceil(double(M) / double(gm)), nb = std::ceil(double(N) / double(gn));
          const double kb = std::ceil(double(K) / double(gk));
          const double partial = mb * nb * 4;
          // Operands and the product; a split K adds the stack of partial
          // slices the tile sums.
          const double bytes = (mb * kb + kb * nb) * es + partial + (gk > 1 ? partial : 0);
          if (bytes > budget) continue;
          const double exchanged = rhsPreloaded ? mb : mb + nb;
          double cycles = 2 * mb * nb * kb / rate + exchanged * kb * es / t.exchangeBytesPerCycle;
          if (gk > 1) {
            cycles += partial * double(gk - 1) / double(gk) / t.exchangeBytesPerCycle + t.internalSyncCycles;
            cycles += mb * nb / t.f32VectorWidth + t.vertexOverheadCycles + t.internalSyncCycles;
          }
          if (plan.gridM == 0 || cycles < bestCycles) {
            plan.gridM = gm;
            plan.gridN = gn;
            plan.gridK = gk;
            bestCycles = cycles;
          }
        }
      }
    }
    return plan;
  };
  // K is split for big products, or when nothing fits otherwise. Small ones
  // keep whole depths: a split adds two program steps and a vertex per tile
  // to sum the partials, which costs the host more time than the modelled
  // cycles it saves are worth (mlp at batch 1 would go from 4 to 96 tiles).
  constexpr double kSplitKMacs = double(1 << 27);
  const bool bigProduct = double(M) * double(K) * double(N) >= kSplitKMacs;
  // A quarter of each tile left for whatever else it holds; when nothing
  // fits so, only 5% (code and vertex state).
  const double roomy = 0.75 * static_cast<double>(t.bytesPerTile), tight = 0.95 * static_cast<double>(t.bytesPerTile);
  MatMulPlan plan = search(roomy, bigProduct);
  if (plan.gridM == 0 && !bigProduct) plan = search(roomy, true);
  if (plan.gridM == 0) plan = search(tight, true);
  if (plan.gridM == 0) fail(ErrorKind::InvalidArgument, "matMul '{}': [{},{}]x[{},{}] does not fit on {} tiles", name, M, K, K, N, count);
  return plan;
}

}  // namespace

Tensor createMatMulInputLhs(Graph &g, Type type, const Shape &aShape, const Shape &bShape, std::string_view name,
                            TileRange tiles, bool rhsPreloaded) {
  if (aShape.size() != 2 || bShape.size() != 2 || aShape[1] != bShape[0]) {
    fail(ErrorKind::InvalidArgument, "createMatMulInputLhs '{}': shapes do not chain", name);
  }
  const std::size_t M = aShape[0], K = aShape[1], N = bShape[1];
  const MatMulPlan plan = planMatMul(g, M, K, N, type, tiles, rhsPreloaded, name);
  // Block (i, l) of a lives on the tile of block (i, 0, l); the other tiles
  // of row i get copies.
  std::vector<Tensor> rows;
  for (std::size_t i = 0; i < plan.gridM; ++i) {
    const std::size_t r0 = plan.rowBegin(i, M), r1 = plan.rowBegin(i + 1, M);
    std::vector<Tensor> depths;
    for (std::size_t l = 0; l < plan.gridK; ++l) {
      const std::size_t k0 = plan.depthBegin(l, K), k1 = plan.depthBegin(l + 1, K);
      auto part = g.addVariable(type, {r1 - r0, k1 - k0}, std::string(name) + "/rows" + std::to_string(i) + "." + std::to_string(l));
      g.setTileMapping(part, plan.tile(i, 0, l));
      depths.push_back(part);
    }
    rows.push_back(concat(depths, 1));
  }
  return concat(rows, 0);
}

Tensor createMatMulInputRhs(Graph &g, Type type, const Shape &aShape, const Shape &bShape, std::string_view name,
                            TileRange tiles, bool rhsPreloaded) {
  if (aShape.size() != 2 || bShape.size() != 2 || aShape[1] != bShape[0]) {
    fail(ErrorKind::InvalidArgument, "createMatMulInputRhs '{}': shapes do not chain", name);
  }
  const std::size_t M = aShape[0], K = aShape[1], N = bShape[1];
  const MatMulPlan plan = planMatMul(g, M, K, N, type, tiles, rhsPreloaded, name);
  // Block (l, j) of b lives (contiguous) on the tile of block (0, j, l).
  std::vector<Tensor> depths;
  for (std::size_t l = 0; l < plan.gridK; ++l) {
    const std::size_t k0 = plan.depthBegin(l, K), k1 = plan.depthBegin(l + 1, K);
    std::vector<Tensor> cols;
    for (std::size_t j = 0; j < plan.gridN; ++j) {
      const std::size_t c0 = plan.colBegin(j, N), c1 = plan.colBegin(j + 1, N);
      auto part = g.addVariable(type, {k1 - k0, c1 - c0}, std::string(name) + "/cols" + std::to_string(j) + "." + std::to_string(l));
      g.setTileMapping(part, plan.tile(0, j, l));
      cols.push_back(part);
    }
    depths.push_back(concat(cols, 1));
  }
  return concat(depths, 0);
}

namespace {

// The second stage of a matMul with a split K: each of the gridK tiles of
// output block (i, j) gathers one gridK-th of every partial product and
// sums them into that part of the output (converted to its type when that
// is not F32).
void sumPartials(Graph &g, program::Sequence &prog, const MatMulPlan &plan, const std::vector<Tensor> &partials,
                 const Tensor &out, std::string_view name) {
  const std::size_t M = out.dim(0), N = out.dim(1);
  auto sum = g.addComputeSet(std::string(name) + "/sum_partials");
  auto cast = g.addComputeSet(std::string(name) + "/cast");
  bool needsCast = false;
  std::vector<Tensor> src, dst;
  for (std::size_t i = 0; i < plan.gridM; ++i) {
    for (std::size_t j = 0; j < plan.gridN; ++j) {
      const Tensor block = out.slice(plan.rowBegin(i, M), plan.rowBegin(i + 1, M), 0)
                               .slice(plan.colBegin(j, N), plan.colBegin(j + 1, N), 1)
                               .flatten();
      const std::size_t elements = block.numElements();
      for (std::size_t l = 0; l < plan.gridK; ++l) {
        const std::size_t e0 = l * elements / plan.gridK, e1 = (l + 1) * elements / plan.gridK;
        if (e0 == e1) continue;
        const unsigned tile = plan.tile(i, j, l);
        const std::string at = "@" + std::to_string(tile);
        auto stack = g.addVariable(Type::F32, {plan.gridK, e1 - e0}, std::string(name) + "/partials" + at);
        g.setTileMapping(stack, tile);
        for (std::size_t p = 0; p < plan.gridK; ++p) {
          src.push_back(partials[(p * plan.gridM + i) * plan.gridN + j].flatten().slice(e0, e1));
          dst.push_back(stack[p]);
        }
        Tensor target = block.slice(e0, e1);
        g.setTileMapping(target, tile);
        if (out.elementType() != Type::F32) {
          auto wide = g.addVariable(Type::F32, {e1 - e0}, std::string(name) + "/sum" + at);
          g.setTileMapping(wide, tile);
          g.addVertex(cast, "Cast", {{"in", wide}, {"out", target}}, tile);
          needsCast = true;
          target = wide;
        }
        auto v = g.addVertex(sum, "ReduceSum", {{"in", stack}, {"out", target}}, tile);
        g.setInitialValue(v, "axes", std::vector<double>{0});
      }
    }
  }
  prog.add(program::Copy(concat(src), concat(dst), std::string(name) + "/exchange_partials"));
  prog.add(program::Execute(sum));
  if (needsCast) prog.add(program::Execute(cast));
}

}  // namespace

Tensor matMul(Graph &g, program::Sequence &prog, const Tensor &a, const Tensor &b, std::string_view name,
              TileRange tiles, Type outType, program::Sequence *rhsLoad) {
  if (a.rank() != 2 || b.rank() != 2 || a.dim(1) != b.dim(0)) {
    fail(ErrorKind::InvalidArgument, "matMul '{}': shapes do not chain", name);
  }
  // b's copies in prog itself would be made every run, which the plan
  // would not have counted.
  if (rhsLoad == &prog) fail(ErrorKind::InvalidArgument, "matMul '{}': rhsLoad must be another program than prog", name);
  const std::size_t M = a.dim(0), K = a.dim(1), N = b.dim(1);
  const MatMulPlan plan = planMatMul(g, M, K, N, a.elementType(), tiles, rhsLoad != nullptr, name);
  auto out = g.addVariable(outType, {M, N}, name);
  auto cs = g.addComputeSet(std::string(name));
  std::vector<Tensor> aSrc, aDst, bSrc, bDst, partials;
  for (std::size_t l = 0; l < plan.gridK; ++l) {
    const std::size_t k0 = plan.depthBegin(l, K), k1 = plan.depthBegin(l + 1, K);
    for (std::size_t i = 0; i < plan.gridM; ++i) {
      const std::size_t r0 = plan.rowBegin(i, M), r1 = plan.rowBegin(i + 1, M);
      for (std::size_t j = 0; j < plan.gridN; ++j) {
        const std::size_t c0 = plan.colBegin(j, N), c1 = plan.colBegin(j + 1, N);
        const unsigned tile = plan.tile(i, j, l);
        const std::string at = "@" + std::to_string(tile);
        // Operands already resident on the tile (created with
        // createMatMulInputLhs/Rhs) are used in place: no exchange.
        Tensor aBlock = a.slice(r0, r1, 0).slice(k0, k1, 1);
        if (!detail::residentOn(g, aBlock, tile)) {
          auto aLocal = g.addVariable(a.elementType(), {r1 - r0, k1 - k0}, std::string(name) + "/a" + at);
          g.setTileMapping(aLocal, tile);
          aSrc.push_back(aBlock.flatten());
          aDst.push_back(aLocal.flatten());
          aBlock = aLocal;
        }
        Tensor bBlock = b.slice(k0, k1, 0).slice(c0, c1, 1);
        if (!detail::residentOn(g, bBlock, tile)) {
          auto bLocal = g.addVariable(b.elementType(), {k1 - k0, c1 - c0}, std::string(name) + "/b" + at);
          g.setTileMapping(bLocal, tile);
          bSrc.push_back(bBlock.flatten());
          bDst.push_back(bLocal.flatten());
          bBlock = bLocal;
        }
        Tensor product;
        if (plan.gridK == 1) {
          product = out.slice(r0, r1, 0).slice(c0, c1, 1);
        } else {
          product = g.addVariable(Type::F32, {r1 - r0, c1 - c0}, std::string(name) + "/partial" + at);
          partials.push_back(product);
        }
        g.setTileMapping(product, tile);
        g.addVertex(cs, "MatMul", {{"a", aBlock}, {"b", bBlock}, {"out", product}}, tile);
      }
    }
  }
  if (!aSrc.empty()) prog.add(program::Copy(concat(aSrc), concat(aDst), std::string(name) + "/exchange_a"));
  if (!bSrc.empty()) {
    (rhsLoad ? *rhsLoad : prog).add(program::Copy(concat(bSrc), concat(bDst), std::string(name) + "/exchange_b"));
  }
  prog.add(program::Execute(cs));
  if (plan.gridK > 1) sumPartials(g, prog, plan, partials, out, name);
  return out;
}

namespace {
void checkGatherAxis(std::string_view codelet, const Tensor &in, std::size_t axis, std::string_view name) {
  if (axis >= in.rank()) fail(ErrorKind::InvalidArgument, "{} '{}': axis {} of a rank-{} tensor", codelet, name, axis, in.rank());
}

// One vertex of a Gather- or Scatter-family codelet on the range's first
// tile, with copies of its inputs brought there; out has the type of the
// first input.
Tensor onOneTile(Graph &g, program::Sequence &prog, std::string_view codelet,
                 const std::vector<std::pair<const char *, Tensor>> &inputs,
                 const std::vector<std::pair<const char *, double>> &attrs, Shape outShape, std::string_view name,
                 TileRange tiles) {
  const unsigned first = detail::resolveTileRange(g, tiles).first;
  std::vector<Connection> fields;
  for (const auto &[field, t] : inputs) {
    auto local = g.addVariable(t.elementType(), t.rank() == 0 ? Shape{1} : t.shape(), std::string(name) + "/" + field);
    g.setTileMapping(local, first);
    prog.add(program::Copy(t.rank() == 0 ? t.reshape({1}) : t, local));
    fields.emplace_back(field, local);
  }
  auto out = g.addVariable(inputs.front().second.elementType(), outShape.empty() ? Shape{1} : outShape, name);
  g.setTileMapping(out, first);
  fields.emplace_back("out", out);
  auto cs = g.addComputeSet(std::string(name));
  auto v = g.addVertex(cs, codelet, fields, first);
  for (const auto &[attr, value] : attrs) g.setInitialValue(v, attr, value);
  prog.add(program::Execute(cs));
  return out;
}
}  // namespace

Tensor gather(Graph &g, program::Sequence &prog, const Tensor &in, const Tensor &indices, std::size_t axis,
              std::string_view name, TileRange tiles) {
  checkGatherAxis("Gather", in, axis, name);
  const auto at = in.shape().begin() + static_cast<std::ptrdiff_t>(axis);
  Shape shape(in.shape().begin(), at);
  shape.insert(shape.end(), indices.shape().begin(), indices.shape().end());
  shape.insert(shape.end(), at + 1, in.shape().end());
  return onOneTile(g, prog, "Gather", {{"in", in}, {"indices", indices}}, {{"axis", static_cast<double>(axis)}}, shape,
                   name, tiles);
}

Tensor gatherElements(Graph &g, program::Sequence &prog, const Tensor &in, const Tensor &indices, std::size_t axis,
                      std::string_view name, TileRange tiles) {
  checkGatherAxis("GatherElements", in, axis, name);
  return onOneTile(g, prog, "GatherElements", {{"in", in}, {"indices", indices}}, {{"axis", static_cast<double>(axis)}},
                   indices.shape(), name, tiles);
}

Tensor scatterElements(Graph &g, program::Sequence &prog, const Tensor &in, const Tensor &indices,
                       const Tensor &updates, std::size_t axis, ScatterReduction reduction, std::string_view name,
                       TileRange tiles) {
  checkGatherAxis("ScatterElements", in, axis, name);
  return onOneTile(g, prog, "ScatterElements", {{"in", in}, {"indices", indices}, {"updates", updates}},
                   {{"axis", static_cast<double>(axis)}, {"reduction", static_cast<double>(reduction)}}, in.shape(),
                   name, tiles);
}

namespace {
Tensor rowwise(Graph &g, program::Sequence &prog, std::string_view codelet, const Tensor &in, Type outType,
               std::string_view name, TileRange tiles) {
  if (in.rank() < 1) fail(ErrorKind::InvalidArgument, "{} '{}': needs rank >= 1", codelet, name);
  const std::size_t cols = in.shape().back(), rows = in.numElements() / std::max<std::size_t>(cols, 1);
  const Tensor in2 = in.reshape({rows, cols});
  auto layout = createTensor(g, in.elementType(), {rows, cols}, std::string(name) + "/in", tiles);
  const Tensor local = localize(g, prog, in2, layout, std::string(name) + "/in");
  const bool perRowOut = codelet == "ArgMax";
  auto out = g.addVariable(outType, perRowOut ? Shape{rows} : Shape{rows, cols}, name);
  auto cs = g.addComputeSet(std::string(name));
  for (const auto &run : g.getTileMapping(local)) {
    const std::size_t r0 = run.begin / cols, r1 = run.end / cols;
    auto o = out.slice(r0, r1, 0);
    g.setTileMapping(o, run.tile);
    g.addVertex(cs, codelet, {{"in", local.slice(r0, r1, 0)}, {"out", o}}, run.tile);
  }
  prog.add(program::Execute(cs));
  return perRowOut ? out : out.reshape(in.shape());
}
}  // namespace

Tensor softmax(Graph &g, program::Sequence &prog, const Tensor &in, std::string_view name, TileRange tiles) {
  return rowwise(g, prog, "Softmax", in, in.elementType(), name, tiles);
}

Tensor argMax(Graph &g, program::Sequence &prog, const Tensor &in, std::string_view name, TileRange tiles) {
  return rowwise(g, prog, "ArgMax", in, Type::S32, name, tiles);
}

}  // namespace hwsim::ops

namespace hwsim::detail {

std::pair<unsigned, unsigned> resolveTileRange(const Graph &g, ops::TileRange r) {
  if (r.first == 0 && r.count == 0) {
    const auto [first, count] = g.defaultTiles();
    r = {first, count};
  }
  const unsigned total = g.getTarget().numTiles();
  if (r.first >= total) fail(ErrorKind::InvalidArgument, "tile range starts at {} of {}", r.first, total);
  const unsigned count = r.count == 0 || r.first + r.count > total ? total - r.first : r.count;
  return {r.first, count};
}

bool residentOn(const Graph &g, const Tensor &block, unsigned tile) {
  if (!block.isContiguous()) return false;
  for (const auto &run : g.getTileMapping(block)) {
    if (run.tile != tile) return false;
  }
  return true;
}

}  // namespace hwsim::detail
