// MatMul, reductions, Softmax and ArgMax host kernels (validation:
// codelets/linalg.cpp). A MatMul vertex multiplies its whole per-tile block
// with one GEMM call: above baseline, our own GEMV for one row of at most 64
// columns, oneDNN's when the block is big enough (codelets/onednn_sgemm.hpp);
// Eigen's otherwise. The baseline level stays Eigen only: it is the
// reference every other level is checked against (hwsim_kernel_isa_test).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "codelets/onednn_sgemm.hpp"
#include "f32_operands.hpp"
#include "kernel_entry.hpp"
#include "whole_packets.hpp"

namespace hwsim::detail::HWSIM_ISA {

namespace {

using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace ei = Eigen::internal;
using FloatPacket = ei::packet_traits<float>::type;

#if defined(__AVX__)
// Masked loads and stores (AVX and AVX-512): a row staged through a buffer by
// scalar stores and read back as one vector waits for those stores.
using RowMask = std::conditional_t<kFloatLanes == 16, std::uint16_t, std::uint8_t>;
RowMask rowMask(std::size_t cols) { return static_cast<RowMask>((1u << cols) - 1); }
FloatPacket loadRow(const float *x, std::size_t cols) { return ei::ploadu<FloatPacket>(x, rowMask(cols)); }
void storeRow(float *y, const FloatPacket &p, std::size_t cols) { ei::pstoreu(y, p, rowMask(cols)); }
#else
FloatPacket loadRow(const float *x, std::size_t cols) {
  alignas(64) float row[kFloatLanes] = {};
  std::copy(x, x + cols, row);
  return ei::pload<FloatPacket>(row);
}
void storeRow(float *y, const FloatPacket &p, std::size_t cols) {
  alignas(64) float row[kFloatLanes];
  ei::pstore(row, p);
  std::copy(row, row + cols, y);
}
#endif

#if defined(__AVX2__)  // the v3 and v4 levels
// One row by a narrow matrix (the mlp's layer1 at batch 1: 1 x 784 by
// 784 x 32 per tile; its layer2: 1 x 128 by 128 x 10): c[0, N) = a . b's
// rows (+ c), columns in packets, the last one masked when N is not a whole
// number of packets. Eigen's GEMV keeps one accumulator per packet of
// columns and takes a ragged end column by column:
// - v4 (Ice Lake Xeon, session 21): two FMA chains for 32 columns, each FMA
//   waiting for the one before; with four k in flight, eight chains, b's
//   100 KB stream from L2 at its bandwidth: four such blocks 0.78x Eigen's
//   time;
// - v3 (AMD EPYC, session 28): 32 columns already make four chains and b's
//   stream from L2 bounds them; more k in flight measured 1.3x slower, so
//   one k for four packets, more for fewer. The 1 x 128 x 10 block takes
//   0.09 us against Eigen's 0.31 (its 2 ragged columns).
constexpr Eigen::Index kGemvMaxColumns = 64;
constexpr Eigen::Index kLanes = static_cast<Eigen::Index>(kFloatLanes);

// Ragged: the last of the Packets ends past N and is loaded masked (a
// masked load costs even where it masks nothing, so only then).
template <int Packets, bool Ragged>
void gemvF32(Eigen::Index K, Eigen::Index N, const float *a, const float *b, float *c, bool accumulate) {
  constexpr int kSteps = kLanes == 16 ? 4 : std::max(1, 4 / Packets);  // k in flight
  const auto lanes = [&](int p) { return p == Packets - 1 ? static_cast<std::size_t>(N - p * kLanes) : kFloatLanes; };
  FloatPacket acc[kSteps][Packets];
#pragma GCC unroll 8
  for (int p = 0; p < Packets; ++p) {
    acc[0][p] = accumulate ? loadRow(c + p * kLanes, lanes(p)) : ei::pset1<FloatPacket>(0.0f);
#pragma GCC unroll 4
    for (int s = 1; s < kSteps; ++s) acc[s][p] = ei::pset1<FloatPacket>(0.0f);
  }
  const auto step = [&](FloatPacket *sums, Eigen::Index k) {
    const FloatPacket x = ei::pset1<FloatPacket>(a[k]);
#pragma GCC unroll 8
    for (int p = 0; p < Packets; ++p) {
      const float *row = b + k * N + p * kLanes;
      const FloatPacket w = Ragged && p == Packets - 1 ? loadRow(row, lanes(p)) : ei::ploadu<FloatPacket>(row);
      sums[p] = ei::pmadd(x, w, sums[p]);
    }
  };
  Eigen::Index k = 0;
  for (; k + kSteps <= K; k += kSteps) {
#pragma GCC unroll 4
    for (int s = 0; s < kSteps; ++s) step(acc[s], k + s);
  }
  for (; k < K; ++k) step(acc[0], k);
#pragma GCC unroll 8
  for (int p = 0; p < Packets; ++p) {
    FloatPacket sum = acc[0][p];
#pragma GCC unroll 4
    for (int s = 1; s < kSteps; ++s) sum = ei::padd(sum, acc[s][p]);
    storeRow(c + p * kLanes, sum, lanes(p));
  }
}

// gemvF32 for 1 <= N <= kGemvMaxColumns, by the number of packets N takes.
template <int Packets = 1>
void gemvNarrow(Eigen::Index K, Eigen::Index N, const float *a, const float *b, float *c, bool accumulate) {
  if constexpr (Packets * kLanes < kGemvMaxColumns) {
    if (N > Packets * kLanes) return gemvNarrow<Packets + 1>(K, N, a, b, c, accumulate);
  }
  if (N % kLanes != 0) return gemvF32<Packets, true>(K, N, a, b, c, accumulate);
  return gemvF32<Packets, false>(K, N, a, b, c, accumulate);
}
#endif

// c = a * b (+ c when accumulate), F32 row-major.
void gemmF32(Eigen::Index M, Eigen::Index K, Eigen::Index N, const float *a, const float *b, float *c,
             bool accumulate) {
#if defined(__AVX2__)  // the v3 and v4 levels
  if (M == 1 && N > 0 && N <= kGemvMaxColumns) return gemvNarrow(K, N, a, b, c, accumulate);
  const auto m = static_cast<std::size_t>(M), k = static_cast<std::size_t>(K), n = static_cast<std::size_t>(N);
  // One row never goes to oneDNN: up to kGemvMaxColumns it took gemvF32
  // above; otherwise Eigen's GEMV, which on the 64-byte aligned blocks the
  // arena gives vertices takes 1.1 us for 1x784x32 against oneDNN's 1.7
  // (docs/performance.md, item 1).
  if (m > 1 && m * k * n >= kOnednnMinMacs && onednnSgemm(m, k, n, a, b, c, accumulate)) return;
#endif
  Eigen::Map<const RowMajorF> A(a, M, K);
  Eigen::Map<const RowMajorF> B(b, K, N);
  Eigen::Map<RowMajorF> C(c, M, N);
  if (accumulate) C.noalias() += A * B;
  else C.noalias() = A * B;
}

}  // namespace

// ---------- MatMul ----------

void executeMatMul(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  const Operand &a = ops[0], &b = ops[1], &out = ops[2];
  const auto M = static_cast<Eigen::Index>((*a.shape)[0]);
  const auto K = static_cast<Eigen::Index>((*a.shape)[1]);
  const auto N = static_cast<Eigen::Index>((*b.shape)[1]);
  const bool accumulate = attrs[0][0] != 0.0;
  const float *A = asF32(a, 0), *B = asF32(b, 1);
  if (out.type == Type::F32) {
    gemmF32(M, K, N, A, B, ptr<Type::F32>(out), accumulate);
    return;
  }
  // F16 out: accumulate in F32, round once at the end.
  auto &acc = scratch(2);
  acc.resize(static_cast<std::size_t>(M * N));
  auto *h = ptr<Type::F16>(out);
  if (accumulate) {
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] = static_cast<float>(h[i]);
  }
  gemmF32(M, K, N, A, B, acc.data(), accumulate);
  for (std::size_t i = 0; i < acc.size(); ++i) h[i] = Eigen::half(acc[i]);
}

// ---------- Reduce ----------

namespace {

// The reduced axes as a sorted, unique list (all axes when empty).
std::vector<std::size_t> reducedAxes(const Shape &shape, const std::vector<double> &axes) {
  std::vector<std::size_t> out;
  if (axes.empty()) {
    for (std::size_t d = 0; d < shape.size(); ++d) out.push_back(d);
    return out;
  }
  for (double a : axes) out.push_back(static_cast<std::size_t>(a));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

template <Type T> struct Accum {
  using type = std::conditional_t<kIsFloat<T>, double, std::int64_t>;
};

template <Type T>
void reduceImpl(ReduceOp op, const Operand &in, const Operand &out, const std::vector<std::size_t> &axes) {
  using S = Storage<T>;
  using A = typename Accum<T>::type;
  const Shape &shape = *in.shape;
  const std::size_t rank = shape.size();
  std::vector<bool> reduced(rank, false);
  std::size_t reducedCount = 1;
  for (auto a : axes) {
    reduced[a] = true;
    reducedCount *= shape[a];
  }
  const S *src = ptr<T>(in);
  S *dst = ptr<T>(out);
  const std::size_t outN = out.numElements;
  std::vector<A> acc(outN);
  std::vector<bool> seen(outN, false);
  // Output stride of each input dimension (0 for reduced dimensions).
  std::vector<std::size_t> outStride(rank, 0);
  std::size_t stride = 1;
  for (std::size_t d = rank; d-- > 0;) {
    if (!reduced[d]) {
      outStride[d] = stride;
      stride *= shape[d];
    }
  }
  std::vector<std::size_t> idx(rank, 0);
  std::size_t o = 0;
  for (std::size_t i = 0; i < in.numElements; ++i) {
    const A v = static_cast<A>(toDouble<T>(src[i]));
    if (!seen[o]) {
      acc[o] = v;
      seen[o] = true;
    } else {
      switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Mean:
          if constexpr (kIsFloat<T>) acc[o] += v;
          else acc[o] = static_cast<A>(static_cast<std::uint64_t>(acc[o]) + static_cast<std::uint64_t>(v));
          break;
        case ReduceOp::Max: acc[o] = std::max(acc[o], v); break;
        case ReduceOp::Min: acc[o] = std::min(acc[o], v); break;
        case ReduceOp::Prod:
          if constexpr (kIsFloat<T>) acc[o] *= v;
          else acc[o] = static_cast<A>(static_cast<std::uint64_t>(acc[o]) * static_cast<std::uint64_t>(v));
          break;
      }
    }
    // Advance the multi-index (row-major) and the output offset with it.
    for (std::size_t d = rank; d-- > 0;) {
      if (++idx[d] < shape[d]) {
        o += outStride[d];
        break;
      }
      o -= outStride[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
  for (std::size_t k = 0; k < outN; ++k) {
    // An empty reduction gives the operator's identity (0 for the others).
    A v = seen[k] ? acc[k] : A(op == ReduceOp::Prod ? 1 : 0);
    if (op == ReduceOp::Mean && reducedCount > 0) {
      if constexpr (kIsFloat<T>) v /= static_cast<double>(reducedCount);
      else v /= static_cast<std::int64_t>(reducedCount);
    }
    if constexpr (kIsFloat<T>) dst[k] = fromDouble<T>(v);
    else dst[k] = wrapInt<T>(v);
  }
}

// Fast path: F32 reduced over the last axis (rows) or the first (columns) with Eigen.
bool reduceF32Eigen(ReduceOp op, const Operand &in, const Operand &out,
                    const std::vector<std::size_t> &axes) {
  const Shape &shape = *in.shape;
  if (shape.size() != 2 || axes.size() != 1 || in.numElements == 0) return false;
  const auto rows = static_cast<Eigen::Index>(shape[0]), cols = static_cast<Eigen::Index>(shape[1]);
  Eigen::Map<const RowMajorF> m(ptr<Type::F32>(in), rows, cols);
  if (axes[0] == 1) {
    Eigen::Map<Eigen::VectorXf> y(ptr<Type::F32>(out), rows);
    switch (op) {
      case ReduceOp::Sum: y = m.rowwise().sum(); break;
      case ReduceOp::Mean: y = m.rowwise().mean(); break;
      case ReduceOp::Max: y = m.rowwise().maxCoeff(); break;
      case ReduceOp::Min: y = m.rowwise().minCoeff(); break;
      case ReduceOp::Prod: y = m.rowwise().prod(); break;
    }
    return true;
  }
  Eigen::Map<Eigen::RowVectorXf> y(ptr<Type::F32>(out), cols);
  switch (op) {
    case ReduceOp::Sum: y = m.colwise().sum(); break;
    case ReduceOp::Mean: y = m.colwise().mean(); break;
    case ReduceOp::Max: y = m.colwise().maxCoeff(); break;
    case ReduceOp::Min: y = m.colwise().minCoeff(); break;
    case ReduceOp::Prod: y = m.colwise().prod(); break;
  }
  return true;
}

}  // namespace

void executeReduce(const CodeletSpec &spec, const Operand *ops, const Attrs &attrs) {
  const auto op = static_cast<ReduceOp>(spec.op);
  const auto axes = reducedAxes(*ops[0].shape, attrs[0]);
  if (ops[0].type == Type::F32 && reduceF32Eigen(op, ops[0], ops[1], axes)) return;
  dispatchType(ops[0].type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    reduceImpl<T>(op, ops[0], ops[1], axes);
  });
}

// ---------- Softmax ----------

namespace {

// Rows of at most one packet (the mlp's 10 classes at v4, one row per vertex)
// in registers: Eigen's dynamic-size row reductions cost more than the math
// on such a row (80 ns for 10 classes). The lanes past the row are kept out
// of the maximum, given exp(0) (no exp of a large negative number, which
// Eigen clamps to a denormal) and zeroed before the sum.
void softmaxShortRows(const float *x, float *y, std::size_t rows, std::size_t cols) {
  const FloatPacket inRow = ei::pcmp_lt(ei::plset<FloatPacket>(0.0f), ei::pset1<FloatPacket>(static_cast<float>(cols)));
  const FloatPacket lowest = ei::pset1<FloatPacket>(-std::numeric_limits<float>::infinity());
  for (std::size_t r = 0; r < rows; ++r, x += cols, y += cols) {
    const FloatPacket v = loadRow(x, cols);
    const FloatPacket max = ei::pset1<FloatPacket>(ei::predux_max(ei::pselect(inRow, v, lowest)));
    const FloatPacket e = ei::pand(ei::pexp(ei::pand(ei::psub(v, max), inRow)), inRow);
    storeRow(y, ei::pdiv(e, ei::pset1<FloatPacket>(ei::predux(e))), cols);
  }
}

}  // namespace

void executeSoftmax(const CodeletSpec &, const Operand *ops, const Attrs &) {
  const Operand &in = ops[0], &out = ops[1];
  const auto cols = static_cast<Eigen::Index>(in.shape->back());
  const auto rows = static_cast<Eigen::Index>(in.numElements) / cols;
  using RowMajorA = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const float *x = asF32(in, 0);
  float *y = out.type == Type::F32 ? ptr<Type::F32>(out) : (scratch(2).resize(in.numElements), scratch(2).data());
  if (static_cast<std::size_t>(cols) <= kFloatLanes) {
    softmaxShortRows(x, y, static_cast<std::size_t>(rows), static_cast<std::size_t>(cols));
  } else {
    // Subtract the row maximum first so exp cannot overflow, then exp all
    // the rows in one pass on the packet path. Row by row for the maxima and
    // sums: the whole-array form allocates them each call.
    Eigen::Map<const RowMajorA> X(x, rows, cols);
    Eigen::Map<RowMajorA> Y(y, rows, cols);
    for (Eigen::Index r = 0; r < rows; ++r) Y.row(r) = X.row(r) - X.row(r).maxCoeff();
    packetwise(y, y, in.numElements, [](FloatsIn from, AlignedPackets to) { to = from.exp(); });
    for (Eigen::Index r = 0; r < rows; ++r) Y.row(r) /= Y.row(r).sum();
  }
  if (out.type == Type::F16) {
    auto *h = ptr<Type::F16>(out);
    for (std::size_t i = 0; i < out.numElements; ++i) h[i] = Eigen::half(y[i]);
  }
}

// ---------- ArgMax ----------

void executeArgMax(const CodeletSpec &, const Operand *ops, const Attrs &) {
  const Operand &in = ops[0], &out = ops[1];
  const std::size_t cols = in.shape->back();
  const std::size_t rows = in.numElements / cols;
  dispatchType(in.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    const auto *x = ptr<T>(in);
    for (std::size_t r = 0; r < rows; ++r) {
      std::size_t best = 0;
      for (std::size_t c = 1; c < cols; ++c) {
        if (x[r * cols + best] < x[r * cols + c]) best = c;
      }
      if (out.type == Type::S32) ptr<Type::S32>(out)[r] = static_cast<std::int32_t>(best);
      else ptr<Type::U32>(out)[r] = static_cast<std::uint32_t>(best);
    }
  });
}

}  // namespace hwsim::detail::HWSIM_ISA
