// Conv at the v3 and v4 levels for unit column stride and a few output
// channels per vertex (most tiles of a split convolution: mnist-8's second
// Conv has 2 channels x 1 row of 14 columns per vertex). The slab path
// (conv_kernels.cpp) copies the input rows into a zero-padded slab first; on
// such small vertices the copy took a quarter of that path's time (v4), and
// on v3 the accumulation's loads of just-copied slab rows stalled (mnist-8
// ran at 1.4x the native time). Here every (input channel, kernel row,
// kernel column) tap is one masked load of 16 output columns' inputs straight
// from x (one AVX-512 register, or two AVX2 halves), or for kernels 3, 5 or
// 7 wide a shift of a window loaded once per kernel row: the mask zeroes the
// lanes whose input column is padding (or past the output row) and
// suppresses their reads, and a kernel row in the padding is a load with an
// empty mask. Padding still takes part as zeros, so 0 * inf gives NaN as at
// the baseline level. The summation order differs from the baseline level's
// (banks of kernel rows, FMA): equal to float rounding, checked by
// kernel_isa_test.
#include "conv_masked_rows.hpp"

#include <algorithm>

#if defined(HWSIM_HAS_MASKED_ROWS)
#include <immintrin.h>
#endif

namespace hwsim::detail::HWSIM_ISA {

#if defined(HWSIM_HAS_MASKED_ROWS)

namespace {

// Output columns per chunk.
constexpr std::int64_t kLanes = 16;

// Where a masked load starts, as an address: the first lanes of a chunk may
// lie before the row (left padding), which a pointer must not point to; the
// mask keeps those lanes from being read.
const void *at(const float *base, std::int64_t offset) {
  return reinterpret_cast<const void *>(reinterpret_cast<std::uintptr_t>(base) +
                                        static_cast<std::uintptr_t>(offset * static_cast<std::int64_t>(sizeof(float))));
}

// A chunk's 16 floats, the lanes of a chunk a load reads, and the
// operations on them.
#if defined(__AVX512F__)
using Wide = __m512;
using WideMask = __mmask16;

// The lanes [lo, hi) of a chunk, lo < hi.
WideMask laneRange(std::int64_t lo, std::int64_t hi) {
  return static_cast<__mmask16>(((1u << (hi - lo)) - 1u) << lo);
}
WideMask noLanes() { return 0; }
Wide zero() { return _mm512_setzero_ps(); }
Wide add(Wide a, Wide b) { return _mm512_add_ps(a, b); }
Wide fmadd(float w, Wide v, Wide acc) { return _mm512_fmadd_ps(_mm512_set1_ps(w), v, acc); }
Wide load(WideMask m, const void *p) { return _mm512_maskz_loadu_ps(m, p); }
// v's first `count` lanes to p.
void storeFirst(std::int64_t count, float *p, Wide v) { _mm512_mask_storeu_ps(p, laneRange(0, count), v); }
#else
// 16 lanes as two AVX2 registers; a mask has a lane's sign bit set where the
// lane is read or written.
struct Wide {
  __m256 lo, hi;
};
struct WideMask {
  __m256i lo, hi;
};

WideMask laneRange(std::int64_t lo, std::int64_t hi) {
  const __m256i first = _mm256_set1_epi32(static_cast<int>(lo) - 1), end = _mm256_set1_epi32(static_cast<int>(hi));
  const __m256i low = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), high = _mm256_add_epi32(low, _mm256_set1_epi32(8));
  return {_mm256_and_si256(_mm256_cmpgt_epi32(low, first), _mm256_cmpgt_epi32(end, low)),
          _mm256_and_si256(_mm256_cmpgt_epi32(high, first), _mm256_cmpgt_epi32(end, high))};
}
WideMask noLanes() { return {_mm256_setzero_si256(), _mm256_setzero_si256()}; }
Wide zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
Wide add(Wide a, Wide b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
Wide fmadd(float w, Wide v, Wide acc) {
  const __m256 weight = _mm256_set1_ps(w);
  return {_mm256_fmadd_ps(weight, v.lo, acc.lo), _mm256_fmadd_ps(weight, v.hi, acc.hi)};
}
Wide load(WideMask m, const void *p) {
  const auto *f = static_cast<const float *>(p);
  return {_mm256_maskload_ps(f, m.lo), _mm256_maskload_ps(f + 8, m.hi)};
}
// v's first `count` lanes to p. A partial chunk goes through the stack:
// AMD's masked AVX stores are microcoded, tens of cycles each.
void storeFirst(std::int64_t count, float *p, Wide v) {
  if (count == kLanes) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
    return;
  }
  float lanes[kLanes];
  _mm256_storeu_ps(lanes, v.lo);
  _mm256_storeu_ps(lanes + 8, v.hi);
  std::copy_n(lanes, count, p);
}
#endif

// Lanes j of a chunk of `count` output columns starting at c0 whose input
// column c0 + j + off lies in [0, W).
WideMask insideLanes(std::int64_t c0, std::int64_t count, std::int64_t off, std::int64_t W) {
  const std::int64_t lo = std::max<std::int64_t>(0, -(c0 + off));
  const std::int64_t hi = std::min(count, W - (c0 + off));
  return hi <= lo ? noLanes() : laneRange(lo, hi);
}

// Kernel row (c, kh) of output row oh: its input row, and whether it is
// inside the input (a row in the padding is loaded with an empty mask, or
// is a window of zeros).
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

// The kernel rows of output row oh in order q = c * KH + kh, counted
// without a division per row (an idiv per row took most of a v3 vertex's
// time).
class KernelRows {
 public:
  KernelRows(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t oh)
      : x_(x), xPitch_(xPitch), g_(g), oh_(oh) {}
  KernelRow next() {
    const KernelRow row = kernelRow(x_, xPitch_, g_, oh_, c_, kh_);
    if (++kh_ == g_.KH) kh_ = 0, ++c_;
    return row;
  }

 private:
  const float *x_;
  std::int64_t xPitch_;
  const Geometry &g_;
  std::int64_t oh_, c_ = 0, kh_ = 0;
};

// One accumulator per output channel (R of them, up to 4), named members:
// as an array indexed in a loop, GCC kept them on the stack, a store and a
// load per FMA.
struct Bank {
  Wide c0 = zero(), c1 = c0, c2 = c0, c3 = c0;
};

// Banks of accumulators for R channels, one per kernel row taken at a time:
// two keep 2 * R FMA chains in flight. An AVX2 accumulator takes two of the
// 16 registers, so there two banks of 3 or 4 channels would spill: one bank.
template <int R>
constexpr int kBanks =
#if defined(__AVX512F__)
    2;
#else
    R <= 2 ? 2 : 1;
#endif

// bank += v times each channel's weight (weights K apart).
template <int R>
[[gnu::always_inline]] inline void addTap(Bank &bank, Wide v, const float *w, std::int64_t K) {
  bank.c0 = fmadd(w[0], v, bank.c0);
  if constexpr (R > 1) bank.c1 = fmadd(w[K], v, bank.c1);
  if constexpr (R > 2) bank.c2 = fmadd(w[2 * K], v, bank.c2);
  if constexpr (R > 3) bank.c3 = fmadd(w[3 * K], v, bank.c3);
}

// Bank a + bank b, channel by channel.
Bank sum(const Bank &a, const Bank &b) { return {add(a.c0, b.c0), add(a.c1, b.c1), add(a.c2, b.c2), add(a.c3, b.c3)}; }

// The R channels' sums to their output rows (yStride apart) from dst,
// `count` columns: stored, or added (!assign).
template <int R>
void storeChunk(const Bank &sums, float *dst, std::int64_t yStride, std::int64_t count, bool assign) {
  const WideMask out = laneRange(0, count);
  const auto store = [&](Wide sum, int r) {
    float *row = dst + r * yStride;
    if (!assign) sum = add(load(out, row), sum);
    storeFirst(count, row, sum);
  };
  store(sums.c0, 0);
  if constexpr (R > 1) store(sums.c1, 1);
  if constexpr (R > 2) store(sums.c2, 2);
  if constexpr (R > 3) store(sums.c3, 3);
}

// Tap kw of a kernel row: its inputs for the chunk's lanes.
Wide tapInput(const KernelRow &row, const WideMask *masks, const std::int64_t *offsets, std::int64_t kw) {
  return load(row.inside ? masks[kw] : noLanes(), at(row.row, offsets[kw]));
}

// Output row oh, columns [c0, c0 + count), of R (1 to 4) channels (weights
// w, rows K apart): each tap's input is loaded once for all R channels.
// With two banks, kernel rows are taken two at a time, one per bank, their
// taps interleaved, in KernelRows' order. (Kernel columns as the outer
// loop, a column's mask loaded once for all rows, ran mnist-8 at 1.7x
// instead of 1.3x on v3: the row's padding test became a branch per tap.)
template <int R>
void accumulateChunk(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, const float *w,
                     std::int64_t K, std::int64_t oh, std::int64_t c0, std::int64_t count, float *y,
                     std::int64_t yStride, bool assign) {
  WideMask masks[kMaskedRowsMaxKernelWidth];
  std::int64_t offsets[kMaskedRowsMaxKernelWidth];
  for (std::int64_t kw = 0; kw < g.KW; ++kw) {
    offsets[kw] = c0 + kw * g.dw - g.pw0;
    masks[kw] = insideLanes(c0, count, kw * g.dw - g.pw0, g.W);
  }
  KernelRows rows(x, xPitch, g, oh);
  Bank even, odd;
  const std::int64_t kernelRows = Cg * g.KH;
  std::int64_t q = 0;
  if constexpr (kBanks<R> == 2) {
    for (; q + 1 < kernelRows; q += 2) {
      const KernelRow a = rows.next(), b = rows.next();
      const float *wa = w + q * g.KW, *wb = wa + g.KW;
      for (std::int64_t kw = 0; kw < g.KW; ++kw) {
        addTap<R>(even, tapInput(a, masks, offsets, kw), wa + kw, K);
        addTap<R>(odd, tapInput(b, masks, offsets, kw), wb + kw, K);
      }
    }
  }
  for (; q < kernelRows; ++q) {
    const KernelRow a = rows.next();
    const float *wa = w + q * g.KW;
    for (std::int64_t kw = 0; kw < g.KW; ++kw) addTap<R>(even, tapInput(a, masks, offsets, kw), wa + kw, K);
  }
  storeChunk<R>(kBanks<R> == 2 ? sum(even, odd) : even, y + oh * g.OW + c0, yStride, count, assign);
}

// Unit column dilation, kernels 3, 5 or 7 wide (accumulateChunkFor): a
// kernel row's inputs for all its taps are loaded once, as a window of
// input columns c0 - pw0 onwards (zero outside the row), and tap kw takes
// lanes [kw, kw + 16) of it by shuffles. The per-tap masked loads of
// accumulateChunk, not its FMAs, set its pace: on an AMD Zen 3 (v3)
// mnist-8's second Conv took 0.69x the time this way, its first 0.80x. On
// an Intel Xeon (Ice Lake, v4) masked loads are cheap, but a tap there
// still loaded its offset, its mask and its input, with four FMA chains
// for two channels: with windows and eight chains, both Convs take
// 0.6-0.7x the time.
#if defined(__AVX512F__)
// v4: 32 floats in two registers; tap kw is one valignd of them.
constexpr std::int64_t kWindowFloats = 32;

struct RowWindow {
  __m512 lo, hi;  // floats [0, 16), [16, 32)
};

struct WindowMask {
  __mmask16 lo, hi;
};

// Lanes [lo, hi) of a window, lo < hi or none.
WindowMask windowMask(std::int64_t lo, std::int64_t hi) {
  const auto part = [&](std::int64_t base) {
    const std::int64_t a = std::max(lo, base), b = std::min(hi, base + kLanes);
    return b > a ? laneRange(a - base, b - base) : noLanes();
  };
  return {part(0), part(kLanes)};
}

RowWindow loadWindow(const float *row, std::int64_t first, const WindowMask &m) {
  return {load(m.lo, at(row, first)), load(m.hi, at(row, first + kLanes))};
}

RowWindow zeroWindow() { return {zero(), zero()}; }

// Tap S's inputs: lanes [S, S + 16) of the window.
template <int S>
Wide windowTap(const RowWindow &w) {
  if constexpr (S == 0) return w.lo;
  else return _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(w.hi), _mm512_castps_si512(w.lo), S));
}

// Accumulator banks, and kernel rows taken at a time (their taps spread
// over the banks as one sequence): with 32 registers, 8 FMA chains for one
// or two channels (FMA latency 4, two per cycle), 6 or 8 for three or four.
template <int R>
constexpr int kWindowBanks = R <= 2 ? 4 : 2;
constexpr int kWindowRowsAtATime = 2;
#else
// v3: 24 floats in three AVX2 registers; tap kw's two halves are made by
// vperm2f128 / vpalignr.
constexpr std::int64_t kWindowFloats = 24;

// A kernel row's window, and its middle halves the shifts draw on.
struct RowWindow {
  __m256 w0, w1, w2;  // floats [0, 8), [8, 16), [16, 24)
  __m256 t01, t12;    // floats [4, 12), [12, 20)
};

// The lanes of a window that are read, one mask per register.
struct WindowMask {
  __m256i m0, m1, m2;
};

// Lanes [lo, hi) of a window, lo < hi or none.
WindowMask windowMask(std::int64_t lo, std::int64_t hi) {
  const WideMask first = hi > lo ? laneRange(lo, std::min<std::int64_t>(hi, kLanes)) : noLanes();
  WindowMask m{first.lo, first.hi, _mm256_setzero_si256()};
  if (hi > kLanes) {
    const WideMask last = laneRange(std::max<std::int64_t>(lo, kLanes) - kLanes, hi - kLanes);
    m.m2 = last.lo;
  }
  return m;
}

// The window of `row` starting at column `first` (which may be negative: left
// padding, never read).
RowWindow loadWindow(const float *row, std::int64_t first, const WindowMask &m) {
  RowWindow w;
  w.w0 = _mm256_maskload_ps(static_cast<const float *>(at(row, first)), m.m0);
  w.w1 = _mm256_maskload_ps(static_cast<const float *>(at(row, first + 8)), m.m1);
  w.w2 = _mm256_maskload_ps(static_cast<const float *>(at(row, first + 16)), m.m2);
  w.t01 = _mm256_permute2f128_ps(w.w0, w.w1, 0x21);
  w.t12 = _mm256_permute2f128_ps(w.w1, w.w2, 0x21);
  return w;
}

RowWindow zeroWindow() {
  const __m256 z = _mm256_setzero_ps();
  return {z, z, z, z, z};
}

// Floats [S, S + 8) of a:b, t = floats [4, 12) of them.
template <int S>
__m256 shifted(__m256 a, __m256 t, __m256 b) {
  const auto alignr = [](__m256 high, __m256 low) {
    return _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(high), _mm256_castps_si256(low), 4 * (S % 4)));
  };
  if constexpr (S == 0) return a;
  else if constexpr (S < 4) return alignr(t, a);
  else if constexpr (S == 4) return t;
  else if constexpr (S < 8) return alignr(b, t);
  else return b;
}

// Tap S's inputs: lanes [S, S + 16) of the window.
template <int S>
Wide windowTap(const RowWindow &w) {
  return {shifted<S>(w.w0, w.t01, w.w1), shifted<S>(w.w1, w.t12, w.w2)};
}

// An AVX2 accumulator takes two of the 16 registers, and a window five:
// two banks for one or two channels, one for three or four; a row at a time.
template <int R>
constexpr int kWindowBanks = R <= 2 ? 2 : 1;
constexpr int kWindowRowsAtATime = 1;
#endif

// N banks (1, 2 or 4) as named members: as a std::array, GCC kept them in
// memory (zeroed by a rep stos per chunk, every accumulator stored at each
// pair of kernel rows).
template <int N>
struct Banks {
  Bank b0, b1, b2, b3;

  template <int I>
  [[gnu::always_inline]] Bank &get() {
    if constexpr (I == 0) return b0;
    else if constexpr (I == 1) return b1;
    else if constexpr (I == 2) return b2;
    else return b3;
  }
  // Their sum, in pairs.
  Bank total() const {
    if constexpr (N == 1) return b0;
    else if constexpr (N == 2) return sum(b0, b1);
    else return sum(sum(b0, b1), sum(b2, b3));
  }
};

// Taps [S, KW) of a kernel row, tap S into bank (Offset + S) % N. Inlined
// whole, or the banks would live in memory.
template <int R, int KW, int N, int Offset, int S = 0>
[[gnu::always_inline]] inline void addWindowTaps(Banks<N> &banks, const RowWindow &w, const float *wq,
                                                 std::int64_t K) {
  if constexpr (S < KW) {
    addTap<R>(banks.template get<(Offset + S) % N>(), windowTap<S>(w), wq + S, K);
    addWindowTaps<R, KW, N, Offset, S + 1>(banks, w, wq, K);
  }
}

// accumulateChunk through row windows, for kernels KW wide. A kernel row in
// the padding is a window of zeros: it still takes part (0 * inf is NaN).
template <int R, int KW>
void accumulateChunkWindowed(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, const float *w,
                             std::int64_t K, std::int64_t oh, std::int64_t c0, std::int64_t count, float *y,
                             std::int64_t yStride, bool assign) {
  const std::int64_t first = c0 - g.pw0;
  const WindowMask mask = windowMask(std::max<std::int64_t>(0, -first), std::min(kWindowFloats, g.W - first));
  const auto window = [&](const KernelRow &row) { return row.inside ? loadWindow(row.row, first, mask) : zeroWindow(); };
  constexpr int N = kWindowBanks<R>;
  Banks<N> banks;
  const float *wq = w;
  if constexpr (kWindowRowsAtATime == 2) {
    KernelRows rows(x, xPitch, g, oh);
    const std::int64_t kernelRows = Cg * g.KH;
    std::int64_t q = 0;
    for (; q + 1 < kernelRows; q += 2, wq += 2 * KW) {
      const RowWindow a = window(rows.next()), b = window(rows.next());
      addWindowTaps<R, KW, N, 0>(banks, a, wq, K);
      addWindowTaps<R, KW, N, KW % N>(banks, b, wq + KW, K);
    }
    if (q < kernelRows) addWindowTaps<R, KW, N, 0>(banks, window(rows.next()), wq, K);
  } else {
    // A row at a time, channel by channel, as measured on the Zen 3 (a
    // KernelRows cursor made the v3 second Conv of mnist-8 5-9% slower on
    // the Xeon).
    for (std::int64_t c = 0; c < Cg; ++c) {
      for (std::int64_t kh = 0; kh < g.KH; ++kh, wq += KW) {
        addWindowTaps<R, KW, N, 0>(banks, window(kernelRow(x, xPitch, g, oh, c, kh)), wq, K);
      }
    }
  }
  storeChunk<R>(banks.total(), y + oh * g.OW + c0, yStride, count, assign);
}

// A chunk of R channels by the kernel that suits the geometry.
template <int R>
void accumulateChunkFor(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, const float *w,
                        std::int64_t K, std::int64_t oh, std::int64_t c0, std::int64_t count, float *y,
                        std::int64_t yStride, bool assign) {
  if (g.dw == 1) {
    switch (g.KW) {
      case 3: return accumulateChunkWindowed<R, 3>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign);
      case 5: return accumulateChunkWindowed<R, 5>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign);
      case 7: return accumulateChunkWindowed<R, 7>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign);
      default: break;
    }
  }
  accumulateChunk<R>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign);
}

}  // namespace

void convMaskedRows(const float *x, std::int64_t xPitch, const Geometry &g, std::int64_t Cg, const float *w,
                    std::int64_t Mg, float *y, std::int64_t yStride, bool assign) {
  const std::int64_t K = Cg * g.KH * g.KW;
  for (std::int64_t oh = 0; oh < g.OH; ++oh) {
    for (std::int64_t c0 = 0; c0 < g.OW; c0 += kLanes) {
      const std::int64_t count = std::min(kLanes, g.OW - c0);
      switch (Mg) {
        case 1: accumulateChunkFor<1>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign); break;
        case 2: accumulateChunkFor<2>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign); break;
        case 3: accumulateChunkFor<3>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign); break;
        default: accumulateChunkFor<4>(x, xPitch, g, Cg, w, K, oh, c0, count, y, yStride, assign); break;
      }
    }
  }
}

#endif

}  // namespace hwsim::detail::HWSIM_ISA
