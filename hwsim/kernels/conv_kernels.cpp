// Conv, MaxPool and AveragePool host kernels (validation and geometry:
// codelets/conv.cpp). Conv lowers each (image, group) to one Eigen GEMM on an
// im2col matrix; 1-D is run as 2-D with a height of 1.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "codelets/conv_geometry.hpp"
#include "conv_masked_rows.hpp"
#include "f32_operands.hpp"
#include "kernel_entry.hpp"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace hwsim::detail::HWSIM_ISA {

namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

using Stride = Eigen::OuterStride<>;

// The output columns [lo, hi) whose input column ow * sw + off is inside [0, W).
struct ColumnRange {
  std::int64_t lo = 0, hi = 0;
};

ColumnRange insideColumns(const Geometry &g, std::int64_t off) {
  std::int64_t lo = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
  std::int64_t hi = g.W - off <= 0 ? 0 : (g.W - off - 1) / g.sw + 1;
  lo = std::min(lo, g.OW);
  return {lo, std::clamp(hi, lo, g.OW)};
}

// col [Cg*KH*KW, (oh1-oh0)*OW] for output rows [oh0, oh1) of one image and
// group (input channel planes xPitch floats apart): zero where the window is
// in padding. The column range depends on kw alone, so its divisions are
// done once per kw, not once per row.
void im2col(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, std::int64_t oh0, std::int64_t oh1,
            float *col) {
  const std::int64_t P = (oh1 - oh0) * g.OW;
  for (std::int64_t kw = 0; kw < g.KW; ++kw) {
    const std::int64_t off = kw * g.dw - g.pw0;  // iw = ow * sw + off
    const auto [lo, hi] = insideColumns(g, off);
    for (std::int64_t c = 0; c < Cg; ++c) {
      const float *xc = x + c * xPitch;
      for (std::int64_t kh = 0; kh < g.KH; ++kh) {
        float *dst = col + ((c * g.KH + kh) * g.KW + kw) * P;
        std::int64_t ih = oh0 * g.sh - g.ph0 + kh * g.dh;
        for (std::int64_t oh = oh0; oh < oh1; ++oh, ih += g.sh, dst += g.OW) {
          if (ih < 0 || ih >= g.H) {
            std::fill(dst, dst + g.OW, 0.0f);
            continue;
          }
          const float *src = xc + ih * g.W + off;
          std::fill(dst, dst + lo, 0.0f);
          if (g.sw == 1) std::copy(src + lo, src + hi, dst + lo);
          else for (std::int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * g.sw];
          std::fill(dst + hi, dst + g.OW, 0.0f);
        }
      }
    }
  }
}

// Output channels of one vertex up to which a unit-stride Conv accumulates
// shifted slab runs directly instead of building im2col for a GEMM: with a
// few rows, Eigen's GEMM packs both operands for little arithmetic.
constexpr std::int64_t kMaxDirectRows = 4;
// Floats per accumulator of the direct path: one AVX-512 register, two AVX
// or four SSE.
constexpr std::int64_t kLanes = 16;
using Lanes = Eigen::Array<float, kLanes, 1>;
// Banks of accumulators of the direct path: with AVX-512 an accumulator is
// one of 32 registers, and two banks (even and odd k) keep 2 * R * P FMA
// chains in flight; with AVX2 it takes two of 16 registers, and a second
// bank spilled to the stack (mnist-8 ran at 1.43x the native time on an
// AVX2 CPU), so one bank there, R * P accumulators of two registers each.
#if defined(__AVX512F__)
constexpr int kBanks = 2;
#else
constexpr int kBanks = 1;
#endif

// One accumulator's worth of output: kLanes consecutive columns of the wide
// output starting at `wide` (row r's output columns are wide columns
// [r * Wp, r * Wp + OW)), stored to `count` output elements at `out`. Only
// chunks holding output columns are computed, not the padding columns
// between rows (mnist's second Conv: 14 of 18 wide columns per row, one
// chunk where covering the whole wide row took two).
struct Chunk {
  std::int64_t wide = 0, out = 0, count = 0;
};

// y[r * yStride + chunks[i].out ...] = (or +=) sum over k of A(r, k) times
// the kLanes floats at slab + runs[k] + chunks[i].wide, for rows [0, R) and
// chunks [0, P), in kBanks banks of accumulators.
template <int R, int P>
void accumulateRuns(const float *A, std::int64_t K, const std::int64_t *runs, const float *slab, const Chunk *chunks,
                    float *y, std::int64_t yStride, bool assign) {
  Lanes acc[kBanks][R][P];  // bank b takes the k with k % kBanks == b
  for (auto &bank : acc) {
    for (auto &row : bank) {
      for (Lanes &lanes : row) lanes.setZero();
    }
  }
  std::int64_t k = 0;
  if constexpr (kBanks == 2) {
    for (; k + 1 < K; k += 2) {
      const float *s0 = slab + runs[k], *s1 = slab + runs[k + 1];
      for (int r = 0; r < R; ++r) {
        for (int i = 0; i < P; ++i) {
          acc[0][r][i] += A[r * K + k] * Eigen::Map<const Lanes>(s0 + chunks[i].wide);
          acc[1][r][i] += A[r * K + k + 1] * Eigen::Map<const Lanes>(s1 + chunks[i].wide);
        }
      }
    }
  }
  for (; k < K; ++k) {
    for (int r = 0; r < R; ++r) {
      for (int i = 0; i < P; ++i) acc[0][r][i] += A[r * K + k] * Eigen::Map<const Lanes>(slab + runs[k] + chunks[i].wide);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int i = 0; i < P; ++i) {
      Lanes sum = acc[0][r][i];
      if constexpr (kBanks == 2) sum += acc[1][r][i];
      float *dst = y + r * yStride + chunks[i].out;
      if (chunks[i].count == kLanes) {
        Eigen::Map<Lanes> row(dst);
        if (assign) row = sum;
        else row += sum;
      } else {
        Eigen::Map<Eigen::ArrayXf> row(dst, chunks[i].count);
        if (assign) row = sum.head(chunks[i].count);
        else row += sum.head(chunks[i].count);
      }
    }
  }
}

// The output rows of A's channels, chunk by chunk: pairs of channels two
// chunks at a time, a last odd channel four.
void accumulateDirect(const Eigen::Map<const RowMajorF> &A, const std::int64_t *runs, const float *slab,
                      const Chunk *chunks, std::int64_t numChunks, float *y, std::int64_t yStride, bool assign) {
  const std::int64_t K = A.cols();
  std::int64_t m = 0;
  for (; m + 1 < A.rows(); m += 2) {
    const float *a = A.data() + m * K;
    float *out = y + m * yStride;
    for (std::int64_t c = 0; c < numChunks; c += 2) {
      if (numChunks - c == 1) accumulateRuns<2, 1>(a, K, runs, slab, chunks + c, out, yStride, assign);
      else accumulateRuns<2, 2>(a, K, runs, slab, chunks + c, out, yStride, assign);
    }
  }
  if (m == A.rows()) return;
  const float *a = A.data() + m * K;
  float *out = y + m * yStride;
  for (std::int64_t c = 0; c < numChunks; c += 4) {
    switch (std::min<std::int64_t>(4, numChunks - c)) {
      case 1: accumulateRuns<1, 1>(a, K, runs, slab, chunks + c, out, yStride, assign); break;
      case 2: accumulateRuns<1, 2>(a, K, runs, slab, chunks + c, out, yStride, assign); break;
      case 3: accumulateRuns<1, 3>(a, K, runs, slab, chunks + c, out, yStride, assign); break;
      default: accumulateRuns<1, 4>(a, K, runs, slab, chunks + c, out, yStride, assign); break;
    }
  }
}

// A short run of floats copied inline: a slab row is a few dozen floats,
// where a memmove call per row (what std::copy becomes) cost more than the
// bytes (mnist's second Conv: 40 rows of 14 floats per vertex).
void copyFloats(const float *src, std::int64_t n, float *dst) {
  std::int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) Eigen::Map<Lanes>(dst + i) = Eigen::Map<const Lanes>(src + i);
  if (n - i >= 8) Eigen::Map<Eigen::Array<float, 8, 1>>(dst + i) = Eigen::Map<const Eigen::Array<float, 8, 1>>(src + i), i += 8;
  if (n - i >= 4) Eigen::Map<Eigen::Array4f>(dst + i) = Eigen::Map<const Eigen::Array4f>(src + i), i += 4;
  switch (n - i) {
    case 3: dst[i + 2] = src[i + 2]; [[fallthrough]];
    case 2: dst[i + 1] = src[i + 1]; [[fallthrough]];
    case 1: dst[i] = src[i]; break;
    default: break;
  }
}

// What decides which cells of the slab are padding.
struct SlabLayout {
  std::int64_t Cg = 0, Hs = 0, Wp = 0, pw0 = 0, W = 0, size = 0, rowsBegin = 0, rowsEnd = 0;
  bool operator==(const SlabLayout &o) const {
    return Cg == o.Cg && Hs == o.Hs && Wp == o.Wp && pw0 == o.pw0 && W == o.W && size == o.size &&
           rowsBegin == o.rowsBegin && rowsEnd == o.rowsEnd;
  }
};

// The direct path's run starts and chunks for one slab geometry.
struct DirectPlan {
  struct Key {
    std::int64_t Cg = 0, Hs = 0, Wp = 0, KH = 0, KW = 0, dh = 0, dw = 0, rows = 0, OW = 0;
    bool operator==(const Key &o) const {
      return Cg == o.Cg && Hs == o.Hs && Wp == o.Wp && KH == o.KH && KW == o.KW && dh == o.dh && dw == o.dw &&
             rows == o.rows && OW == o.OW;
    }
  };
  Key key;
  std::vector<std::int64_t> runStarts;
  std::vector<Chunk> chunks;
};

// Unit strides (most convolutions), output rows [oh0, oh1) of one image and
// group: the input rows they read are copied once into a zero-padded slab
// [Cg, rows + (KH-1)*dh, Wp] (Wp = padded width), after which im2col row
// (c, kh, kw) for all the rows together is one contiguous run of the slab,
// and output row r is wide columns [r * Wp, r * Wp + OW) of the product. A
// vertex usually has a few short rows, where the per-row copies and padding
// fills of im2col cost more than the arithmetic; with at most kMaxDirectRows
// output channels the runs are accumulated straight from the slab into the
// output, otherwise they are copied into an im2col matrix for one GEMM.
void convUnitStride(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, std::int64_t oh0,
                    std::int64_t oh1, const Eigen::Map<const RowMajorF> &A, float *y, std::int64_t yStride, bool assign) {
  const std::int64_t Wp = g.W + g.pw0 + g.pw1, rows = oh1 - oh0, Hs = rows + (g.KH - 1) * g.dh;
  const std::int64_t wide = rows * Wp, K = A.cols(), KH = g.KH, KW = g.KW, dh = g.dh, dw = g.dw;
  const bool directly = A.rows() <= kMaxDirectRows;
  // The direct path's last chunk reads kLanes floats from the last run's
  // start, past the slab's rows.
  const std::int64_t lastRun = ((Cg - 1) * Hs + (KH - 1) * dh) * Wp + (KW - 1) * dw;
  const std::int64_t lastChunk = (rows - 1) * Wp + (g.OW - 1) / kLanes * kLanes;
  const std::int64_t slabRows = Cg * Hs * Wp;
  const std::int64_t slabSize = directly ? std::max(slabRows, lastRun + lastChunk + kLanes) : slabRows + (KW - 1) * dw;
  // Slab rows [rowsBegin, rowsEnd) hold input rows, the others are padding.
  const std::int64_t rowsBegin = std::clamp<std::int64_t>(g.ph0 - oh0, 0, Hs);
  const std::int64_t rowsEnd = std::clamp<std::int64_t>(g.H - oh0 + g.ph0, rowsBegin, Hs);
  // Only input cells are ever written after the slab is zeroed, so its
  // padding stays zero while the layout stays the same (every vertex of a
  // split convolution but its first and last row blocks): zeroed only when
  // the layout changes. Written through plain pointers: in a shared library
  // each use of a thread-local vector itself costs a __tls_get_addr call.
  auto &slabBuffer = scratch(4);
  thread_local SlabLayout lastLayout;
  SlabLayout &layout = lastLayout;
  const SlabLayout now{Cg, Hs, Wp, g.pw0, g.W, slabSize, rowsBegin, rowsEnd};
  if (!(layout == now) || slabBuffer.size() != static_cast<std::size_t>(slabSize)) {
    slabBuffer.assign(static_cast<std::size_t>(slabSize), 0.0f);
    layout = now;
  }
  float *slab = slabBuffer.data();
  for (std::int64_t c = 0; c < Cg; ++c) {
    for (std::int64_t r = rowsBegin; r < rowsEnd; ++r) {
      copyFloats(x + c * xPitch + (oh0 - g.ph0 + r) * g.W, g.W, slab + (c * Hs + r) * Wp + g.pw0);
    }
  }
  if (directly) {
    // Where im2col row (c, kh, kw) starts in the slab, and the chunks: the
    // same for every vertex of a split convolution but its first and last
    // row blocks, so made again only when the geometry changes.
    thread_local DirectPlan cached;
    DirectPlan &plan = cached;  // one __tls_get_addr call
    const DirectPlan::Key key{Cg, Hs, Wp, KH, KW, dh, dw, rows, g.OW};
    if (!(plan.key == key) || plan.runStarts.empty()) {
      plan.key = key;
      plan.runStarts.resize(static_cast<std::size_t>(K));
      std::int64_t *run = plan.runStarts.data();
      for (std::int64_t c = 0; c < Cg; ++c) {
        for (std::int64_t kh = 0; kh < KH; ++kh) {
          for (std::int64_t kw = 0; kw < KW; ++kw) *run++ = (c * Hs + kh * dh) * Wp + kw * dw;
        }
      }
      plan.chunks.clear();
      for (std::int64_t r = 0; r < rows; ++r) {
        for (std::int64_t c0 = 0; c0 < g.OW; c0 += kLanes) {
          plan.chunks.push_back({r * Wp + c0, r * g.OW + c0, std::min(kLanes, g.OW - c0)});
        }
      }
    }
    accumulateDirect(A, plan.runStarts.data(), slab, plan.chunks.data(), static_cast<std::int64_t>(plan.chunks.size()), y,
                     yStride, assign);
    return;
  }
  auto &col = scratch(3);
  col.resize(static_cast<std::size_t>(K * wide));
  float *dst = col.data();
  for (std::int64_t c = 0; c < Cg; ++c) {
    for (std::int64_t kh = 0; kh < KH; ++kh) {
      for (std::int64_t kw = 0; kw < KW; ++kw, dst += wide) {
        const float *src = slab + (c * Hs + kh * dh) * Wp + kw * dw;
        std::copy(src, src + wide, dst);
      }
    }
  }
  auto &out = scratch(5);
  out.resize(static_cast<std::size_t>(A.rows() * wide));
  Eigen::Map<RowMajorF> Ywide(out.data(), A.rows(), wide);
  Ywide.noalias() = A * Eigen::Map<const RowMajorF>(col.data(), K, wide);
  for (std::int64_t m = 0; m < A.rows(); ++m) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const float *src = out.data() + m * wide + r * Wp;
      float *row = y + m * yStride + r * g.OW;
      if (assign) std::copy(src, src + g.OW, row);
      else for (std::int64_t i = 0; i < g.OW; ++i) row[i] += src[i];
    }
  }
}

// Conv of a vertex whose geometry is g. Its in and out are planar (one plane
// per image and channel, Operand::planePitch): xPitch and yPitch are the
// floats from one channel's plane to the next.
void runConv(const Geometry &g, const Operand *ops, const Attrs &attrs) {
  const Operand &out = ops[2];
  const bool accumulate = attrs[4][0] != 0.0;
  const std::int64_t Cg = g.C / g.group, Mg = g.M / g.group, P = g.OH * g.OW, K = Cg * g.KH * g.KW;
  std::int64_t xPitch = 0;
  const float *x = planesAsF32(ops[0], 0, g.H * g.W, xPitch);
  const float *w = asF32(ops[1], 1);
  const std::int64_t outPitch = planePitchOf(out, P), outPlanes = g.N * g.M;
  float *y = nullptr;
  std::int64_t yPitch = outPitch;
  if (out.type == Type::F32) {
    y = ptr<Type::F32>(out);
  } else {
    auto &acc = scratch(2);
    acc.resize(out.numElements);
    const auto *h = ptr<Type::F16>(out);
    for (std::int64_t p = 0; p < outPlanes; ++p) {
      for (std::int64_t i = 0; i < P; ++i) acc[p * P + i] = accumulate ? static_cast<float>(h[p * outPitch + i]) : 0.0f;
    }
    y = acc.data();
    yPitch = P;
  }
  const bool assign = !accumulate && out.type == Type::F32;
  const bool unitStride = g.sh == 1 && g.sw == 1;
  const bool direct = unitStride && g.KH == 1 && g.KW == 1 && g.ph0 == 0 && g.pw0 == 0 && g.ph1 == 0 &&
                      g.pw1 == 0;  // 1x1: the input is its own im2col
  // im2col a band of output rows at a time, so host scratch stays bounded.
  constexpr std::int64_t kMaxColElements = std::int64_t{1} << 22;
  const std::int64_t rowWidth = unitStride ? g.W + g.pw0 + g.pw1 : g.OW;
  const std::int64_t band =
      direct ? g.OH : std::clamp<std::int64_t>(kMaxColElements / std::max<std::int64_t>(1, K * rowWidth), 1, g.OH);
  auto &col = scratch(3);
  for (std::int64_t n = 0; n < g.N; ++n) {
    for (std::int64_t gi = 0; gi < g.group; ++gi) {
      const float *xg = x + (n * g.C + gi * Cg) * xPitch;
      float *yg = y + (n * g.M + gi * Mg) * yPitch;
      Eigen::Map<const RowMajorF> A(w + gi * Mg * K, Mg, K);
#if defined(HWSIM_HAS_MASKED_ROWS)
      if (g.sw == 1 && Mg <= kMaskedRowsMaxChannels && g.KW <= kMaskedRowsMaxKernelWidth) {
        convMaskedRows(xg, xPitch, g, Cg, A.data(), Mg, yg, yPitch, assign);
        continue;
      }
#endif
      for (std::int64_t oh0 = 0; oh0 < g.OH; oh0 += band) {
        const std::int64_t oh1 = std::min(g.OH, oh0 + band), cols = (oh1 - oh0) * g.OW;
        float *yBand = yg + oh0 * g.OW;
        if (unitStride && !direct) {
          convUnitStride(xg, xPitch, g, Cg, oh0, oh1, A, yBand, yPitch, assign);
          continue;
        }
        // 1x1: row c of B is input channel c's plane.
        const float *colData = xg;
        std::int64_t colStride = xPitch;
        if (!direct) {
          col.resize(static_cast<std::size_t>(K * cols));
          im2col(xg, xPitch, g, Cg, oh0, oh1, col.data());
          colData = col.data();
          colStride = cols;
        }
        Eigen::Map<const RowMajorF, 0, Stride> B(colData, K, cols, Stride(colStride));
        Eigen::Map<RowMajorF, 0, Stride> Y(yBand, Mg, cols, Stride(yPitch));
        if (assign) Y.noalias() = A * B;
        else Y.noalias() += A * B;
      }
    }
  }
  if (out.type == Type::F16) {
    auto *h = ptr<Type::F16>(out);
    for (std::int64_t p = 0; p < outPlanes; ++p) {
      for (std::int64_t i = 0; i < P; ++i) h[p * outPitch + i] = Eigen::half(y[p * P + i]);
    }
  }
}

}  // namespace

void executeConv(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  if (!convGeometry(ops, attrs, g).empty()) return;  // validated before; never trust blindly
  runConv(g, ops, attrs);
}

void executeConvPrepared(const CodeletSpec &, const Operand *ops, const Attrs &attrs, const void *geometry) {
  runConv(*static_cast<const Geometry *>(geometry), ops, attrs);
}

namespace {

#if defined(__AVX2__)
// One output row of a 2-wide, stride-2 MaxPool window (the commonest
// pooling), 8 columns at a time; returns the columns done (all, or none in a
// row narrower than 8). The 16 input columns of 8 windows' kernel row are
// two loads, split into even (kw 0) and odd (kw 1) columns by shuffles.
// _mm256_max_ps(v, acc) is acc < v ? v : acc, as std::max(acc, v) is, and
// the taps come in the scalar loop's order, so NaN and signed zeros give the
// same bytes. (The scalar blocks took 1.7 cycles per tap on mnist-8's first
// MaxPool.)
std::int64_t maxPoolPairs(const float *rowWindows, const Geometry &g, float *out) {
  constexpr std::int64_t kOutputs = 8;
  if (g.OW < kOutputs) return 0;
  const auto block = [&](std::int64_t ow) {
    __m256 acc = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    const float *window = rowWindows + ow * 2;
    for (std::int64_t kh = 0; kh < g.KH; ++kh, window += g.W) {
      const __m256 a = _mm256_loadu_ps(window), b = _mm256_loadu_ps(window + 8);
      // Lanes in the order 0 1 4 5 2 3 6 7 of the outputs, undone below.
      acc = _mm256_max_ps(_mm256_shuffle_ps(a, b, 0x88), acc);
      acc = _mm256_max_ps(_mm256_shuffle_ps(a, b, 0xDD), acc);
    }
    _mm256_storeu_ps(out + ow, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(acc), 0xD8)));
  };
  std::int64_t ow = 0;
  for (; ow + kOutputs <= g.OW; ow += kOutputs) block(ow);
  // The last columns as one more block ending at the row's end, overlapping
  // the one before (its outputs written again with the same bytes).
  if (ow < g.OW) block(g.OW - kOutputs);
  return g.OW;
}
#endif

// MaxPool of one channel whose windows are all inside the input (none in
// padding, no dilation): the general loop's bounds checks and counts cost
// more than the maxima. Output columns are taken kBlock at a time, one window
// tap at a time for the block, so that kBlock maxima are independent instead
// of one dependent chain of KH * KW per column; each column still sees its
// taps in the scalar loop's order, so NaN and signed zeros give what
// std::max gives there. SW is the column stride when known at compile time
// (0: g.sw at run time), so the block's loads have fixed offsets.
template <int SW>
void maxPoolInside(const float *xc, const Geometry &g, float *yc) {
  constexpr std::int64_t kBlock = 4;
  const std::int64_t sw = SW > 0 ? SW : g.sw;
  for (std::int64_t oh = 0; oh < g.OH; ++oh) {
    const float *rowWindows = xc + oh * g.sh * g.W;
    float *out = yc + oh * g.OW;
    std::int64_t ow = 0;
#if defined(__AVX2__)
    if constexpr (SW == 2) {
      if (g.KW == 2) ow = maxPoolPairs(rowWindows, g, out);
    }
#endif
    for (; ow + kBlock <= g.OW; ow += kBlock) {
      float acc[kBlock];
      std::fill_n(acc, kBlock, -std::numeric_limits<float>::infinity());
      const float *window = rowWindows + ow * sw;
      for (std::int64_t kh = 0; kh < g.KH; ++kh, window += g.W) {
        for (std::int64_t kw = 0; kw < g.KW; ++kw) {
          for (std::int64_t i = 0; i < kBlock; ++i) acc[i] = std::max(acc[i], window[kw + i * sw]);
        }
      }
      std::copy_n(acc, kBlock, out + ow);
    }
    for (; ow < g.OW; ++ow) {
      const float *window = rowWindows + ow * sw;
      float acc = -std::numeric_limits<float>::infinity();
      for (std::int64_t kh = 0; kh < g.KH; ++kh, window += g.W) {
        for (std::int64_t kw = 0; kw < g.KW; ++kw) acc = std::max(acc, window[kw]);
      }
      out[ow] = acc;
    }
  }
}

// MaxPool or AveragePool of a vertex whose geometry is g.
void runPool(const CodeletSpec &spec, const Geometry &g, const Operand *ops, const Attrs &attrs) {
  const bool isMax = spec.op == 0;
  const bool countPad = !isMax && attrs[4][0] != 0.0;
  const Operand &out = ops[1];
  const float *x = asF32(ops[0], 0);
  float *y = out.type == Type::F32 ? ptr<Type::F32>(out) : (scratch(2).resize(out.numElements), scratch(2).data());
  // (ceil_mode can make the last window reach past the input without pads.)
  const bool inside = isMax && g.dh == 1 && g.dw == 1 && g.ph0 == 0 && g.pw0 == 0 &&
                      (g.OH - 1) * g.sh + g.KH <= g.H && (g.OW - 1) * g.sw + g.KW <= g.W;
  for (std::int64_t nc = 0; nc < g.N * g.C; ++nc) {
    const float *xc = x + nc * g.H * g.W;
    float *yc = y + nc * g.OH * g.OW;
    if (inside) {
      switch (g.sw) {
        case 1: maxPoolInside<1>(xc, g, yc); break;
        case 2: maxPoolInside<2>(xc, g, yc); break;
        case 3: maxPoolInside<3>(xc, g, yc); break;
        default: maxPoolInside<0>(xc, g, yc); break;
      }
      continue;
    }
    for (std::int64_t oh = 0; oh < g.OH; ++oh) {
      const std::int64_t h0 = oh * g.sh - g.ph0;
      for (std::int64_t ow = 0; ow < g.OW; ++ow) {
        const std::int64_t w0 = ow * g.sw - g.pw0;
        float acc = isMax ? -std::numeric_limits<float>::infinity() : 0.0f;
        std::int64_t valid = 0, inPadded = 0;
        for (std::int64_t kh = 0; kh < g.KH; ++kh) {
          const std::int64_t ih = h0 + kh * g.dh;
          const bool rowIn = ih >= 0 && ih < g.H;
          const bool rowPadded = ih >= -g.ph0 && ih < g.H + g.ph1;
          for (std::int64_t kw = 0; kw < g.KW; ++kw) {
            const std::int64_t iw = w0 + kw * g.dw;
            if (rowPadded && iw >= -g.pw0 && iw < g.W + g.pw1) ++inPadded;
            if (!rowIn || iw < 0 || iw >= g.W) continue;
            const float v = xc[ih * g.W + iw];
            ++valid;
            if (isMax) acc = std::max(acc, v);
            else acc += v;
          }
        }
        if (!isMax) {
          const std::int64_t div = countPad ? inPadded : valid;
          acc = div > 0 ? acc / static_cast<float>(div) : 0.0f;
        }
        yc[oh * g.OW + ow] = acc;
      }
    }
  }
  if (out.type == Type::F16) {
    auto *h = ptr<Type::F16>(out);
    for (std::size_t i = 0; i < out.numElements; ++i) h[i] = Eigen::half(y[i]);
  }
}

}  // namespace

void executePool(const CodeletSpec &spec, const Operand *ops, const Attrs &attrs) {
  Geometry g;
  if (!poolGeometry(ops, attrs, g).empty()) return;
  runPool(spec, g, ops, attrs);
}

void executePoolPrepared(const CodeletSpec &spec, const Operand *ops, const Attrs &attrs, const void *geometry) {
  runPool(spec, *static_cast<const Geometry *>(geometry), ops, attrs);
}

}  // namespace hwsim::detail::HWSIM_ISA
