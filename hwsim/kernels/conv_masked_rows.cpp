// Conv at the v4 level for unit column stride and a few output channels per
// vertex (most tiles of a split convolution: mnist-8's second Conv has 2
// channels x 1 row of 14 columns per vertex). The slab path
// (conv_kernels.cpp) copies the input rows into a zero-padded slab first; on
// such small vertices the copy took a quarter of that path's time. Here every
// (input channel, kernel row, kernel column) tap is one masked load of 16
// output columns' inputs straight from x: the mask zeroes the lanes whose
// input column is padding (or past the output row) and suppresses their
// reads, and a kernel row in the padding is a load with an empty mask.
// Padding still takes part as zeros, so 0 * inf gives NaN as at the baseline
// level. The summation order differs from the baseline level's (banks of
// kernel rows, FMA): equal to float rounding, checked by kernel_isa_test.
#include "conv_masked_rows.hpp"

#include <algorithm>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace hwsim::detail::HWSIM_ISA {

#if defined(__AVX512F__)

namespace {

constexpr std::int64_t kLanes = 16;

// Lanes j of a chunk of `count` output columns starting at c0 whose input
// column c0 + j + off lies in [0, W).
__mmask16 insideLanes(std::int64_t c0, std::int64_t count, std::int64_t off, std::int64_t W) {
  const std::int64_t lo = std::max<std::int64_t>(0, -(c0 + off));
  const std::int64_t hi = std::min(count, W - (c0 + off));
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(((1u << (hi - lo)) - 1u) << lo);
}

// Where a masked load starts, as an address: the first lanes of a chunk may
// lie before the row (left padding), which a pointer must not point to; the
// mask keeps those lanes from being read.
const void *at(const float *base, std::int64_t offset) {
  return reinterpret_cast<const void *>(reinterpret_cast<std::uintptr_t>(base) +
                                        static_cast<std::uintptr_t>(offset * static_cast<std::int64_t>(sizeof(float))));
}

// Kernel row (c, kh) of output row oh: its input row, and whether it is
// inside the input (a row in the padding is loaded with an empty mask).
struct KernelRow {
  const float *row;
  bool inside;
};

KernelRow kernelRow(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t oh, std::int64_t c,
                    std::int64_t kh) {
  const std::int64_t ih = oh * g.sh - g.ph0 + kh * g.dh;
  const bool inside = ih >= 0 && ih < g.H;
  return {inside ? x + c * xPitch + ih * g.W : x, inside};
}

// One accumulator per output channel (R of them, up to 4), named members:
// as an array indexed in a loop, GCC kept them on the stack, a store and a
// load per FMA.
struct Bank {
  __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
};

// bank += v times each channel's weight (weights K apart).
template <int R>
void addTap(Bank &bank, __m512 v, const float *w, std::int64_t K) {
  bank.c0 = _mm512_fmadd_ps(_mm512_set1_ps(w[0]), v, bank.c0);
  if constexpr (R > 1) bank.c1 = _mm512_fmadd_ps(_mm512_set1_ps(w[K]), v, bank.c1);
  if constexpr (R > 2) bank.c2 = _mm512_fmadd_ps(_mm512_set1_ps(w[2 * K]), v, bank.c2);
  if constexpr (R > 3) bank.c3 = _mm512_fmadd_ps(_mm512_set1_ps(w[3 * K]), v, bank.c3);
}

// Output row oh, columns [c0, c0 + count), of R (1 to 4) channels (weights
// w, rows K apart): each tap's input is loaded once for all R channels.
// Kernel rows are taken two at a time, one per bank, so 2 * R FMA chains are
// in flight.
template <int R>
void accumulateChunk(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, const float *w,
                     std::int64_t K, std::int64_t oh, std::int64_t c0, std::int64_t count, float *y,
                     std::int64_t yStride, bool assign) {
  __mmask16 masks[kMaskedRowsMaxKernelWidth];
  std::int64_t offsets[kMaskedRowsMaxKernelWidth];
  for (std::int64_t kw = 0; kw < g.KW; ++kw) {
    offsets[kw] = c0 + kw * g.dw - g.pw0;
    masks[kw] = insideLanes(c0, count, kw * g.dw - g.pw0, g.W);
  }
  Bank even, odd;
  const std::int64_t kernelRows = Cg * g.KH;
  std::int64_t q = 0;
  for (; q + 1 < kernelRows; q += 2) {
    const KernelRow a = kernelRow(x, xPitch, g, oh, q / g.KH, q % g.KH);
    const KernelRow b = kernelRow(x, xPitch, g, oh, (q + 1) / g.KH, (q + 1) % g.KH);
    const float *wa = w + q * g.KW, *wb = wa + g.KW;
    for (std::int64_t kw = 0; kw < g.KW; ++kw) {
      addTap<R>(even, _mm512_maskz_loadu_ps(a.inside ? masks[kw] : __mmask16{0}, at(a.row, offsets[kw])), wa + kw, K);
      addTap<R>(odd, _mm512_maskz_loadu_ps(b.inside ? masks[kw] : __mmask16{0}, at(b.row, offsets[kw])), wb + kw, K);
    }
  }
  if (q < kernelRows) {
    const KernelRow a = kernelRow(x, xPitch, g, oh, q / g.KH, q % g.KH);
    const float *wa = w + q * g.KW;
    for (std::int64_t kw = 0; kw < g.KW; ++kw) {
      addTap<R>(even, _mm512_maskz_loadu_ps(a.inside ? masks[kw] : __mmask16{0}, at(a.row, offsets[kw])), wa + kw, K);
    }
  }
  const __mmask16 out = static_cast<__mmask16>((1u << count) - 1u);
  float *dst = y + oh * g.OW + c0;
  const auto store = [&](__m512 sum, int r) {
    float *row = dst + r * yStride;
    if (!assign) sum = _mm512_add_ps(_mm512_maskz_loadu_ps(out, row), sum);
    _mm512_mask_storeu_ps(row, out, sum);
  };
  store(_mm512_add_ps(even.c0, odd.c0), 0);
  if constexpr (R > 1) store(_mm512_add_ps(even.c1, odd.c1), 1);
  if constexpr (R > 2) store(_mm512_add_ps(even.c2, odd.c2), 2);
  if constexpr (R > 3) store(_mm512_add_ps(even.c3, odd.c3), 3);
}

}  // namespace

void convMaskedRows(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, const float *w,
                    std::int64_t Mg, float *y, std::int64_t yStride, bool assign) {
  const std::int64_t K = Cg * g.KH * g.KW;
  for (std::int64_t oh = 0; oh < g.OH; ++oh) {
    for (std::int64_t c0 = 0; c0 < g.OW; c0 += kLanes) {
      const std::int64_t count = std::min(kLanes, g.OW - c0);
      switch (Mg) {
        case 1: accumulateChunk<1>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign); break;
        case 2: accumulateChunk<2>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign); break;
        case 3: accumulateChunk<3>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign); break;
        default: accumulateChunk<4>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign); break;
      }
    }
  }
}

#endif

}  // namespace hwsim::detail::HWSIM_ISA
