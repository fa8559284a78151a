// hwsim::ops convolution and pooling: plans that split the output over tiles
// and bring each tile the input slab (rows plus halo, channels) and weights it
// needs, then one Conv / MaxPool / AveragePool vertex per tile.
#include <algorithm>
#include <cmath>
#include <string>

#include "fail.hpp"
#include "hwsim/ops.hpp"
#include "tile_range.hpp"

namespace hwsim::ops {

using detail::fail;

namespace {

std::vector<double> toDoubles(const std::vector<std::size_t> &v) { return {v.begin(), v.end()}; }

// One spatial list: empty = S copies of dflt; otherwise exactly S values.
std::vector<std::size_t> perDim(const std::vector<std::size_t> &v, std::size_t S, std::size_t dflt, const char *what,
                                std::string_view name) {
  if (v.empty()) return std::vector<std::size_t>(S, dflt);
  if (v.size() != S) fail(ErrorKind::InvalidArgument, "'{}': {} has {} values for {} spatial dimensions", name, what, v.size(), S);
  return v;
}

// Normalized window geometry over S spatial dimensions.
struct Window {
  std::size_t S = 0;
  std::vector<std::size_t> kernel, strides, padsBegin, padsEnd, dilations;
};

Window makeWindow(std::size_t S, const std::vector<std::size_t> &kernel, const std::vector<std::size_t> &strides,
                  const std::vector<std::size_t> &padsBegin, const std::vector<std::size_t> &padsEnd,
                  const std::vector<std::size_t> &dilations, std::string_view name) {
  Window w;
  w.S = S;
  w.kernel = kernel;
  w.strides = perDim(strides, S, 1, "strides", name);
  w.padsBegin = perDim(padsBegin, S, 0, "padsBegin", name);
  w.padsEnd = perDim(padsEnd, S, 0, "padsEnd", name);
  w.dilations = perDim(dilations, S, 1, "dilations", name);
  for (std::size_t d = 0; d < S; ++d) {
    if (w.strides[d] == 0 || w.dilations[d] == 0 || w.kernel[d] == 0) {
      fail(ErrorKind::InvalidArgument, "'{}': strides, dilations and kernel sizes must be positive", name);
    }
  }
  return w;
}

std::size_t outSize(const Window &w, std::size_t d, std::size_t in, bool ceilMode, std::string_view name) {
  const std::size_t padded = in + w.padsBegin[d] + w.padsEnd[d];
  const std::size_t window = w.dilations[d] * (w.kernel[d] - 1) + 1;
  if (padded < window) {
    fail(ErrorKind::InvalidArgument, "'{}': spatial dimension {} ({} padded) is smaller than the window {}", name, d,
         padded, window);
  }
  const std::size_t s = w.strides[d];
  const std::size_t floorOut = (padded - window) / s + 1;
  std::size_t out = floorOut;
  if (ceilMode) {
    out = (padded - window + s - 1) / s + 1;
    // As ONNX Runtime: no extra window starting in the end padding.
    if (out > floorOut && (out - 1) * s >= in + w.padsBegin[d]) --out;
  }
  return out;
}

std::vector<double> padsAttr(const Window &w) {
  std::vector<double> p;
  for (auto v : w.padsBegin) p.push_back(double(v));
  for (auto v : w.padsEnd) p.push_back(double(v));
  return p;
}

void checkSpatialRank(const Shape &s, std::string_view what, std::string_view name) {
  if (s.size() != 3 && s.size() != 4) {
    fail(ErrorKind::InvalidArgument, "'{}': {} must be [N,C,W] or [N,C,H,W] (rank 3 or 4), got rank {}", name, what,
         s.size());
  }
}

Window convWindow(const Shape &in, const Shape &w, const ConvParams &p, std::string_view name) {
  checkSpatialRank(in, "in", name);
  if (w.size() != in.size()) fail(ErrorKind::InvalidArgument, "'{}': weights rank {} differs from in rank {}", name, w.size(), in.size());
  if (p.group == 0 || in[1] % p.group != 0 || w[0] % p.group != 0 || w[1] * p.group != in[1]) {
    fail(ErrorKind::InvalidArgument, "'{}': weights [{}, {}, ...] do not fit {} in channels in {} groups", name, w[0],
         w[1], in[1], p.group);
  }
  const std::size_t S = in.size() - 2;
  return makeWindow(S, std::vector<std::size_t>(w.begin() + 2, w.end()), p.strides, p.padsBegin, p.padsEnd,
                    p.dilations, name);
}

// ---- Conv plan: a grid of gridN image blocks x gridM channel blocks x gridH
// row blocks (rows of the first spatial dimension); block (i, j, k) on tile
// first + (i * gridM + j) * gridH + k. Channel blocks split output channels
// (group 1) or whole groups.
struct ConvPlan {
  std::size_t N = 0, C = 0, M = 0, G = 1, OH = 0, rowElems = 0, outRowElems = 0;
  std::size_t gridN = 1, gridM = 1, gridH = 1;
  unsigned first = 0;
  Window win;
  std::size_t units() const { return G > 1 ? G : M; }  // what channel blocks split
  static std::size_t split(std::size_t i, std::size_t n, std::size_t parts) { return i * n / parts; }
  std::size_t nBegin(std::size_t i) const { return split(i, N, gridN); }
  std::size_t uBegin(std::size_t j) const { return split(j, units(), gridM); }
  std::size_t hBegin(std::size_t k) const { return split(k, OH, gridH); }
  // Output channels of channel block j.
  std::pair<std::size_t, std::size_t> mRange(std::size_t j) const {
    const std::size_t per = G > 1 ? M / G : 1;
    return {uBegin(j) * per, uBegin(j + 1) * per};
  }
  // Input channels channel block j reads.
  std::pair<std::size_t, std::size_t> cRange(std::size_t j) const {
    if (G == 1) return {0, C};
    return {uBegin(j) * (C / G), uBegin(j + 1) * (C / G)};
  }
  unsigned tile(std::size_t i, std::size_t j, std::size_t k) const {
    return first + static_cast<unsigned>((i * gridM + j) * gridH + k);
  }
};

// Input rows [r0, r1) of the first spatial dim that output rows [h0, h1) read,
// with the padding left over at each end.
struct RowSpan {
  std::size_t r0, r1, padBegin, padEnd;
};
RowSpan inputRows(const Window &w, std::size_t H, std::size_t h0, std::size_t h1) {
  const auto s = static_cast<std::int64_t>(w.strides[0]), pb = static_cast<std::int64_t>(w.padsBegin[0]);
  const std::int64_t a = static_cast<std::int64_t>(h0) * s - pb;
  const std::int64_t b = static_cast<std::int64_t>(h1 - 1) * s - pb +
                         static_cast<std::int64_t>(w.dilations[0] * (w.kernel[0] - 1)) + 1;  // exclusive
  const std::int64_t r0 = std::max<std::int64_t>(a, 0), r1 = std::min<std::int64_t>(b, static_cast<std::int64_t>(H));
  return {static_cast<std::size_t>(r0), static_cast<std::size_t>(std::max(r0, r1)), static_cast<std::size_t>(r0 - a),
          static_cast<std::size_t>(std::max<std::int64_t>(0, b - std::max(r0, r1)))};
}

// Out blocks are budgeted as F32 whatever the out type, so createConvWeights
// and conv plan alike. weightsPreloaded: the weights' copies are made by a
// load program, so they cost the run nothing.
ConvPlan planConv(const Graph &g, const Shape &in, const Shape &w, const ConvParams &p, Type type, TileRange tiles,
                  bool weightsPreloaded, std::string_view name) {
  ConvPlan plan;
  plan.win = convWindow(in, w, p, name);
  const auto out = convOutputShape(in, w, p);
  const auto [first, count] = detail::resolveTileRange(g, tiles);
  plan.first = first;
  plan.N = in[0];
  plan.C = in[1];
  plan.M = w[0];
  plan.G = p.group;
  plan.OH = out[2];
  const std::size_t H = in[2];
  plan.rowElems = 1;
  plan.outRowElems = 1;
  for (std::size_t d = 3; d < in.size(); ++d) {
    plan.rowElems *= in[d];
    plan.outRowElems *= out[d];
  }
  std::size_t kernelElems = 1;
  for (std::size_t d = 2; d < w.size(); ++d) kernelElems *= w[d];
  const Target &t = g.getTarget();
  const double es = double(sizeOf(type)), oes = 4.0;
  const double budget = 0.75 * double(t.bytesPerTile);
  const double rate = type == Type::F16 ? t.f16MatMulFlopsPerCycle : t.f32MatMulFlopsPerCycle;
  const std::size_t Cg = plan.C / plan.G, U = plan.units(), perUnitM = plan.G > 1 ? plan.M / plan.G : 1,
                    perUnitC = plan.G > 1 ? Cg : 0;
  // Each vertex does at least this many MACs (unless the whole convolution is
  // smaller), so a host GEMM call is never dwarfed by its launch.
  constexpr double kMinMacs = 4096;
  const double totalMacs = double(plan.N) * double(plan.M) * double(plan.OH) * double(plan.outRowElems) * double(Cg) *
                           double(kernelElems);
  double best = -1;
  for (std::size_t gn = 1; gn <= plan.N && gn <= count; ++gn) {
    for (std::size_t gm = 1; gm <= U && gn * gm <= count; ++gm) {
      for (std::size_t gh = 1; gh <= plan.OH && gn * gm * gh <= count; ++gh) {
        const double nb = std::ceil(double(plan.N) / double(gn)), ub = std::ceil(double(U) / double(gm)),
                     hb = std::ceil(double(plan.OH) / double(gh));
        const double mb = ub * double(perUnitM), cb = plan.G > 1 ? ub * double(perUnitC) : double(plan.C);
        const double macs = nb * mb * hb * double(plan.outRowElems) * double(Cg) * double(kernelElems);
        if (gn * gm * gh > 1 && macs < kMinMacs && macs < totalMacs) continue;
        const double rows = std::min(double(H), (hb - 1) * double(plan.win.strides[0]) +
                                                    double(plan.win.dilations[0] * (plan.win.kernel[0] - 1)) + 1);
        const double inBytes = nb * cb * rows * double(plan.rowElems) * es;
        const double wBytes = mb * double(Cg) * double(kernelElems) * es;
        const double outBytes = nb * mb * hb * double(plan.outRowElems) * oes;
        if (inBytes + wBytes + outBytes > budget) continue;
        const double exchanged = inBytes + (weightsPreloaded ? 0.0 : wBytes);
        const double cycles = t.vertexOverheadCycles + 2 * macs / rate + exchanged / t.exchangeBytesPerCycle;
        if (best < 0 || cycles < best) {
          best = cycles;
          plan.gridN = gn;
          plan.gridM = gm;
          plan.gridH = gh;
        }
      }
    }
  }
  if (best < 0) {
    fail(ErrorKind::InvalidArgument, "conv '{}': in [{}, {}, ...] with {} output channels does not fit on {} tiles",
         name, plan.N, plan.C, plan.M, count);
  }
  return plan;
}

}  // namespace

Shape convOutputShape(const Shape &inShape, const Shape &weightShape, const ConvParams &params) {
  const Window w = convWindow(inShape, weightShape, params, "conv");
  Shape out{inShape[0], weightShape[0]};
  for (std::size_t d = 0; d < w.S; ++d) out.push_back(outSize(w, d, inShape[2 + d], false, "conv"));
  return out;
}

Shape poolOutputShape(const Shape &inShape, const PoolParams &params) {
  checkSpatialRank(inShape, "in", "pool");
  const std::size_t S = inShape.size() - 2;
  if (params.kernelShape.size() != S) {
    fail(ErrorKind::InvalidArgument, "pool: kernelShape has {} values for {} spatial dimensions", params.kernelShape.size(), S);
  }
  const Window w = makeWindow(S, params.kernelShape, params.strides, params.padsBegin, params.padsEnd, params.dilations, "pool");
  Shape out{inShape[0], inShape[1]};
  for (std::size_t d = 0; d < S; ++d) out.push_back(outSize(w, d, inShape[2 + d], params.ceilMode, "pool"));
  return out;
}

Tensor createConvWeights(Graph &g, Type type, const Shape &inShape, const Shape &weightShape, const ConvParams &params,
                         std::string_view name, TileRange tiles, bool weightsPreloaded) {
  const ConvPlan plan = planConv(g, inShape, weightShape, params, type, tiles, weightsPreloaded, name);
  // Channel block j lives (contiguous) on the tile of block (0, j, 0).
  std::vector<Tensor> parts;
  for (std::size_t j = 0; j < plan.gridM; ++j) {
    const auto [m0, m1] = plan.mRange(j);
    Shape s = weightShape;
    s[0] = m1 - m0;
    auto part = g.addVariable(type, s, std::string(name) + "/block" + std::to_string(j));
    g.setTileMapping(part, plan.tile(0, j, 0));
    parts.push_back(part);
  }
  return concat(parts, 0);
}

Tensor conv(Graph &g, program::Sequence &prog, const Tensor &in, const Tensor &weights, const ConvParams &params,
            std::string_view name, TileRange tiles, Type outType, program::Sequence *weightsLoad) {
  if (in.elementType() != weights.elementType() || (in.elementType() != Type::F32 && in.elementType() != Type::F16)) {
    fail(ErrorKind::InvalidArgument, "conv '{}': in and weights must both be F32 or both F16", name);
  }
  if (outType != Type::F32 && !(outType == Type::F16 && in.elementType() == Type::F16)) {
    fail(ErrorKind::InvalidArgument, "conv '{}': out must be F32, or F16 for F16 inputs", name);
  }
  // Weight copies in prog itself would be made every run, which the plan
  // would not have counted.
  if (weightsLoad == &prog) fail(ErrorKind::InvalidArgument, "conv '{}': weightsLoad must be another program than prog", name);
  const ConvPlan plan = planConv(g, in.shape(), weights.shape(), params, in.elementType(), tiles, weightsLoad != nullptr, name);
  const Shape outShape = convOutputShape(in.shape(), weights.shape(), params);
  const Window &w = plan.win;
  const std::size_t H = in.dim(2);
  auto out = g.addVariable(outType, outShape, name);
  auto cs = g.addComputeSet(std::string(name));
  // Without weightsLoad, the weights' copies join the inputs' in one exchange.
  std::vector<Tensor> src, dst, wSrc, wDst;
  std::vector<Tensor> &weightSrc = weightsLoad ? wSrc : src, &weightDst = weightsLoad ? wDst : dst;
  // Weights of channel block j are shared by the tiles of that block: the
  // first not holding them gets a copy, and so on for each tile.
  for (std::size_t j = 0; j < plan.gridM; ++j) {
    const auto [m0, m1] = plan.mRange(j);
    const auto [c0, c1] = plan.cRange(j);
    const Tensor wBlock = weights.slice(m0, m1, 0);
    for (std::size_t i = 0; i < plan.gridN; ++i) {
      const std::size_t n0 = plan.nBegin(i), n1 = plan.nBegin(i + 1);
      for (std::size_t k = 0; k < plan.gridH; ++k) {
        const std::size_t h0 = plan.hBegin(k), h1 = plan.hBegin(k + 1);
        const unsigned tile = plan.tile(i, j, k);
        const std::string at = "@" + std::to_string(tile);
        const RowSpan rows = inputRows(w, H, h0, h1);
        Tensor inBlock = in.slice(n0, n1, 0).slice(c0, c1, 1).slice(rows.r0, rows.r1, 2);
        if (!detail::residentOn(g, inBlock, tile)) {
          auto local = g.addVariable(in.elementType(), inBlock.shape(), std::string(name) + "/in" + at);
          g.setTileMapping(local, tile);
          src.push_back(inBlock.flatten());
          dst.push_back(local.flatten());
          inBlock = local;
        }
        Tensor wLocal = wBlock;
        if (!detail::residentOn(g, wBlock, tile)) {
          wLocal = g.addVariable(weights.elementType(), wBlock.shape(), std::string(name) + "/weights" + at);
          g.setTileMapping(wLocal, tile);
          weightSrc.push_back(wBlock.flatten());
          weightDst.push_back(wLocal.flatten());
        }
        Tensor outBlock = out.slice(n0, n1, 0).slice(m0, m1, 1).slice(h0, h1, 2);
        g.setTileMapping(outBlock, tile);
        auto v = g.addVertex(cs, "Conv", {{"in", inBlock}, {"weights", wLocal}, {"out", outBlock}}, tile);
        Window local = w;
        local.padsBegin[0] = rows.padBegin;
        local.padsEnd[0] = rows.padEnd;
        g.setInitialValue(v, "strides", toDoubles(w.strides));
        g.setInitialValue(v, "pads", padsAttr(local));
        g.setInitialValue(v, "dilations", toDoubles(w.dilations));
        g.setInitialValue(v, "group", double(plan.G > 1 ? plan.uBegin(j + 1) - plan.uBegin(j) : 1));
        g.setInitialValue(v, "accumulate", 0.0);
      }
    }
  }
  if (!wSrc.empty()) weightsLoad->add(program::Copy(concat(wSrc), concat(wDst), std::string(name) + "/exchange_weights"));
  if (!src.empty()) prog.add(program::Copy(concat(src), concat(dst), std::string(name) + "/exchange"));
  prog.add(program::Execute(cs));
  return out;
}

Tensor pool(Graph &g, program::Sequence &prog, std::string_view codelet, const Tensor &in, const PoolParams &params,
            std::string_view name, TileRange tiles) {
  if (codelet != "MaxPool" && codelet != "AveragePool") {
    fail(ErrorKind::InvalidArgument, "pool '{}': codelet must be MaxPool or AveragePool, got '{}'", name, codelet);
  }
  if (in.elementType() != Type::F32 && in.elementType() != Type::F16) {
    fail(ErrorKind::InvalidArgument, "pool '{}': in must be F32 or F16", name);
  }
  const Shape outShape = poolOutputShape(in.shape(), params);
  const std::size_t S = in.rank() - 2;
  const Window w = makeWindow(S, params.kernelShape, params.strides, params.padsBegin, params.padsEnd, params.dilations, name);
  const auto [first, count] = detail::resolveTileRange(g, tiles);
  const std::size_t U = in.dim(0) * in.dim(1);
  const std::size_t inPer = in.numElements() / U, outPer = numElementsOf(outShape) / U;
  const double budget = 0.75 * double(g.getTarget().bytesPerTile);
  const std::size_t used = std::min<std::size_t>(U, count);
  const double perTile = std::ceil(double(U) / double(used)) * double(inPer + outPer) * double(sizeOf(in.elementType()));
  if (perTile > budget) {
    fail(ErrorKind::InvalidArgument, "pool '{}': {} bytes per tile do not fit on {} tiles", name, perTile, count);
  }
  Shape flatIn = in.shape(), flatOut = outShape;
  flatIn.erase(flatIn.begin());
  flatOut.erase(flatOut.begin());
  flatIn[0] = flatOut[0] = U;
  const Tensor in2 = in.reshape(flatIn);
  auto out = g.addVariable(in.elementType(), outShape, name);
  const Tensor out2 = out.reshape(flatOut);
  auto cs = g.addComputeSet(std::string(name));
  std::vector<Tensor> src, dst;
  for (std::size_t t = 0; t < used; ++t) {
    const std::size_t u0 = t * U / used, u1 = (t + 1) * U / used;
    if (u0 == u1) continue;
    const unsigned tile = first + static_cast<unsigned>(t);
    Tensor inBlock = in2.slice(u0, u1, 0);
    if (!detail::residentOn(g, inBlock, tile)) {
      auto local = g.addVariable(in.elementType(), inBlock.shape(), std::string(name) + "/in@" + std::to_string(tile));
      g.setTileMapping(local, tile);
      src.push_back(inBlock.flatten());
      dst.push_back(local.flatten());
      inBlock = local;
    }
    Tensor outBlock = out2.slice(u0, u1, 0);
    g.setTileMapping(outBlock, tile);
    // As one image of u1 - u0 channels.
    Shape is = inBlock.shape(), os = outBlock.shape();
    is.insert(is.begin(), 1);
    os.insert(os.begin(), 1);
    auto v = g.addVertex(cs, codelet, {{"in", inBlock.reshape(is)}, {"out", outBlock.reshape(os)}}, tile);
    g.setInitialValue(v, "kernel_shape", toDoubles(w.kernel));
    g.setInitialValue(v, "strides", toDoubles(w.strides));
    g.setInitialValue(v, "pads", padsAttr(w));
    g.setInitialValue(v, "dilations", toDoubles(w.dilations));
    if (codelet == "AveragePool") g.setInitialValue(v, "count_include_pad", params.countIncludePad ? 1.0 : 0.0);
  }
  if (!src.empty()) prog.add(program::Copy(concat(src), concat(dst), std::string(name) + "/exchange"));
  prog.add(program::Execute(cs));
  return out;
}

}  // namespace hwsim::ops
