// Elementwise host kernels (validation: codelets/elementwise.cpp): unary ops
// and casts, binary ops with scalar/row broadcasting, comparisons, logical
// ops, Fill and Increment. F32 arithmetic goes through Eigen's vectorized
// array operations.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "f32_operands.hpp"
#include "kernel_entry.hpp"
#include "whole_packets.hpp"

namespace hwsim::detail::HWSIM_ISA {

namespace {

// ---------- unary ----------

template <Type T> void unaryInt(UnaryOp op, const Storage<T> *in, Storage<T> *out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<std::int64_t>(in[i]);
    std::int64_t r = x;
    switch (op) {
      case UnaryOp::Neg: r = -x; break;
      case UnaryOp::Abs: r = x < 0 ? -x : x; break;
      case UnaryOp::Relu: r = x < 0 ? 0 : x; break;
      case UnaryOp::Not: r = x == 0 ? 1 : 0; break;
      case UnaryOp::Sign: r = (x > 0) - (x < 0); break;
      default: break;
    }
    out[i] = wrapInt<T>(r);
  }
}

void unaryF32(UnaryOp op, const float *in, float *out, std::size_t n) {
  Eigen::Map<const Eigen::ArrayXf> x(in, static_cast<Eigen::Index>(n));
  Eigen::Map<Eigen::ArrayXf> y(out, static_cast<Eigen::Index>(n));
  // Exact in any lane: Eigen's scalar head and tail give the packet's value.
  switch (op) {
    case UnaryOp::Neg: y = -x; return;
    case UnaryOp::Abs: y = x.abs(); return;
    case UnaryOp::Relu: y = x.max(0.0f); return;
    case UnaryOp::Floor: y = x.floor(); return;
    case UnaryOp::Ceil: y = x.ceil(); return;
    case UnaryOp::Round: y = x.rint(); return;  // halves to even, as ONNX Round
    case UnaryOp::Sign: y = x.sign(); return;
    default: break;
  }
  // Approximations whose scalar and packet forms may differ by an ulp: every
  // element on the packet path (whole_packets.hpp).
  packetwise(in, out, n, [op](FloatsIn from, AlignedPackets to) {
    switch (op) {
      case UnaryOp::Exp: to = from.exp(); break;
      case UnaryOp::Log: to = from.log(); break;
      case UnaryOp::Sqrt: to = from.sqrt(); break;
      case UnaryOp::Sigmoid: to = from.logistic(); break;
      case UnaryOp::Tanh: to = from.tanh(); break;
      case UnaryOp::Erf: to = from.unaryExpr([](float v) { return std::erf(v); }); break;
      case UnaryOp::Sin: to = from.sin(); break;
      case UnaryOp::Cos: to = from.cos(); break;
      case UnaryOp::Tan: to = from.tan(); break;
      case UnaryOp::Asin: to = from.asin(); break;
      case UnaryOp::Acos: to = from.acos(); break;
      case UnaryOp::Atan: to = from.atan(); break;
      case UnaryOp::Sinh: to = from.sinh(); break;
      case UnaryOp::Cosh: to = from.cosh(); break;
      case UnaryOp::Asinh: to = from.asinh(); break;
      case UnaryOp::Acosh: to = from.acosh(); break;
      case UnaryOp::Atanh: to = from.atanh(); break;
      default: break;
    }
  });
}

// F16 is computed in F32 through a small stack buffer, then rounded back.
void unaryF16(UnaryOp op, const Eigen::half *in, Eigen::half *out, std::size_t n) {
  constexpr std::size_t kChunk = 256;
  float a[kChunk], b[kChunk];
  for (std::size_t base = 0; base < n; base += kChunk) {
    const std::size_t m = std::min(kChunk, n - base);
    for (std::size_t i = 0; i < m; ++i) a[i] = static_cast<float>(in[base + i]);
    unaryF32(op, a, b, m);
    for (std::size_t i = 0; i < m; ++i) out[base + i] = Eigen::half(b[i]);
  }
}

template <Type In, Type Out> void castLoop(const Storage<In> *in, Storage<Out> *out, std::size_t n) {
  if constexpr (In == Out) {
    std::memmove(out, in, n * sizeof(Storage<In>));
  } else if constexpr (In == Type::F32 && Out == Type::F16) {
    for (std::size_t i = 0; i < n; ++i) out[i] = Eigen::half(in[i]);
  } else if constexpr (In == Type::F16 && Out == Type::F32) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(in[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = fromDouble<Out>(toDouble<In>(in[i]));
  }
}

}  // namespace

void executeUnary(const CodeletSpec &spec, const Operand *ops, const Attrs &) {
  const auto op = static_cast<UnaryOp>(spec.op);
  const Operand &in = ops[0], &out = ops[1];
  const std::size_t n = in.numElements;
  if (op == UnaryOp::Cast) {
    dispatchType(in.type, [&](auto inTag) {
      constexpr Type I = decltype(inTag)::value;
      dispatchType(out.type, [&](auto outTag) {
        constexpr Type O = decltype(outTag)::value;
        castLoop<I, O>(ptr<I>(in), ptr<O>(out), n);
      });
    });
    return;
  }
  dispatchType(in.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    if constexpr (T == Type::F32) {
      unaryF32(op, ptr<T>(in), ptr<T>(out), n);
    } else if constexpr (T == Type::F16) {
      unaryF16(op, ptr<T>(in), ptr<T>(out), n);
    } else {
      unaryInt<T>(op, ptr<T>(in), ptr<T>(out), n);
    }
  });
}

// ---------- binary ----------

namespace {

// The remainder of x / y with the divisor's sign (Python's %), from the
// truncated remainder (C's fmod and %, with the dividend's sign).
template <typename V> V flooredRemainder(V truncated, V y) {
  return truncated != V(0) && ((truncated < V(0)) != (y < V(0))) ? truncated + y : truncated;
}

template <Type T> struct Arith {
  using S = Storage<T>;
  static S apply(BinaryOp op, S a, S b) {
    if constexpr (kIsFloat<T>) {
      switch (op) {
        case BinaryOp::Add: return a + b;
        case BinaryOp::Sub: return a - b;
        case BinaryOp::Mul: return a * b;
        case BinaryOp::Div: return a / b;
        case BinaryOp::Max: return a < b ? b : a;
        case BinaryOp::Min: return b < a ? b : a;
        case BinaryOp::Pow:
          return S(static_cast<float>(std::pow(static_cast<float>(a), static_cast<float>(b))));
        case BinaryOp::Fmod: return S(std::fmod(static_cast<float>(a), static_cast<float>(b)));
        case BinaryOp::Mod:
          return S(flooredRemainder(std::fmod(static_cast<float>(a), static_cast<float>(b)), static_cast<float>(b)));
        default: return a;
      }
    } else {
      const auto x = static_cast<std::int64_t>(a), y = static_cast<std::int64_t>(b);
      switch (op) {
        case BinaryOp::Add: return wrapInt<T>(x + y);
        case BinaryOp::Sub: return wrapInt<T>(x - y);
        // 64-bit products of 32-bit values cannot overflow; wrap back to T.
        case BinaryOp::Mul: return wrapInt<T>(static_cast<std::int64_t>(
            static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y)));
        case BinaryOp::Div: return y == 0 ? S(0) : wrapInt<T>(x / y);
        case BinaryOp::Max: return x < y ? b : a;
        case BinaryOp::Min: return y < x ? b : a;
        case BinaryOp::Pow: return fromDouble<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
        // Like Div, a zero divisor gives 0.
        case BinaryOp::Fmod: return y == 0 ? S(0) : wrapInt<T>(x % y);
        case BinaryOp::Mod: return y == 0 ? S(0) : wrapInt<T>(flooredRemainder(x % y, y));
        default: return a;
      }
    }
  }
  static bool compare(BinaryOp op, S a, S b) {
    switch (op) {
      case BinaryOp::Equal: return a == b;
      case BinaryOp::NotEqual: return a != b;
      case BinaryOp::Less: return a < b;
      case BinaryOp::LessEqual: return a <= b;
      case BinaryOp::Greater: return b < a;
      case BinaryOp::GreaterEqual: return b <= a;
      case BinaryOp::And: return a != S(0) && b != S(0);
      case BinaryOp::Or: return a != S(0) || b != S(0);
      default: return false;
    }
  }
};

// Index of in1 for element i of in0: same, scalar, or row broadcast.
enum class Broadcast { None, Scalar, Row };

template <Type T, typename OutS, typename Fn>
void broadcastLoop(Broadcast mode, const Storage<T> *a, const Storage<T> *b, OutS *out, std::size_t n,
                   std::size_t cols, Fn &&fn) {
  switch (mode) {
    case Broadcast::None:
      for (std::size_t i = 0; i < n; ++i) out[i] = fn(a[i], b[i]);
      break;
    case Broadcast::Scalar: {
      const auto s = b[0];
      for (std::size_t i = 0; i < n; ++i) out[i] = fn(a[i], s);
      break;
    }
    case Broadcast::Row:
      for (std::size_t r = 0; r < n; r += cols)
        for (std::size_t c = 0; c < cols; ++c) out[r + c] = fn(a[r + c], b[c]);
      break;
  }
}

// F32 add/sub/mul/div/max/min go through Eigen's vectorized array operations.
bool binaryF32Eigen(BinaryOp op, Broadcast mode, const float *a, const float *b, float *out,
                    std::size_t n, std::size_t cols) {
  using Arr = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto rows = static_cast<Eigen::Index>(mode == Broadcast::Row ? n / cols : 1);
  const auto width = static_cast<Eigen::Index>(mode == Broadcast::Row ? cols : n);
  Eigen::Map<const Arr> x(a, rows, width);
  Eigen::Map<Arr> y(out, rows, width);
  if (mode == Broadcast::None) {
    Eigen::Map<const Arr> z(b, rows, width);
    switch (op) {
      case BinaryOp::Add: y = x + z; return true;
      case BinaryOp::Sub: y = x - z; return true;
      case BinaryOp::Mul: y = x * z; return true;
      case BinaryOp::Div: y = x / z; return true;
      case BinaryOp::Max: y = x.max(z); return true;
      case BinaryOp::Min: y = x.min(z); return true;
      default: return false;
    }
  }
  if (mode == Broadcast::Scalar) {
    const float s = b[0];
    switch (op) {
      case BinaryOp::Add: y = x + s; return true;
      case BinaryOp::Sub: y = x - s; return true;
      case BinaryOp::Mul: y = x * s; return true;
      case BinaryOp::Div: y = x / s; return true;
      default: return false;
    }
  }
  Eigen::Map<const Eigen::Array<float, 1, Eigen::Dynamic>> row(b, width);
  switch (op) {
    case BinaryOp::Add: y = x.rowwise() + row; return true;
    case BinaryOp::Sub: y = x.rowwise() - row; return true;
    case BinaryOp::Mul: y = x.rowwise() * row; return true;
    case BinaryOp::Div: y = x.rowwise() / row; return true;
    default: return false;
  }
}

Broadcast broadcastMode(const Operand &in0, const Operand &in1) {
  if (in1.numElements == in0.numElements) return Broadcast::None;
  if (in1.numElements == 1) return Broadcast::Scalar;
  return Broadcast::Row;
}

}  // namespace

void executeBinary(const CodeletSpec &spec, const Operand *ops, const Attrs &) {
  const auto op = static_cast<BinaryOp>(spec.op);
  const Operand &in0 = ops[0], &in1 = ops[1], &out = ops[2];
  const Broadcast mode = broadcastMode(in0, in1);
  const std::size_t n = in0.numElements;
  const std::size_t cols = mode == Broadcast::Row ? in1.numElements : n;
  if (n == 0) return;
  dispatchType(in0.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    using S = Storage<T>;
    const S *a = ptr<T>(in0);
    const S *b = ptr<T>(in1);
    if (isComparison(op) || isLogical(op)) {
      auto *o = reinterpret_cast<std::uint8_t *>(out.data);
      broadcastLoop<T>(mode, a, b, o, n, cols,
                       [op](S x, S y) { return static_cast<std::uint8_t>(Arith<T>::compare(op, x, y)); });
      return;
    }
    if constexpr (T == Type::F32) {
      if (binaryF32Eigen(op, mode, a, b, ptr<T>(out), n, cols)) return;
    }
    broadcastLoop<T>(mode, a, b, ptr<T>(out), n, cols,
                     [op](S x, S y) { return Arith<T>::apply(op, x, y); });
  });
}

// ---------- Fill ----------

void executeFill(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  const Operand &out = ops[0];
  dispatchType(out.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    const auto v = fromDouble<T>(attrs[0][0]);
    std::fill_n(ptr<T>(out), out.numElements, v);
  });
}

// ---------- Increment ----------

void executeIncrement(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  const Operand &c = ops[0];
  dispatchType(c.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    auto *p = ptr<T>(c);
    if constexpr (kIsFloat<T>) {
      const auto step = fromDouble<T>(attrs[0][0]);
      for (std::size_t i = 0; i < c.numElements; ++i) p[i] = p[i] + step;
    } else {
      const auto step = static_cast<std::int64_t>(fromDouble<Type::S32>(attrs[0][0]));
      for (std::size_t i = 0; i < c.numElements; ++i) p[i] = wrapInt<T>(static_cast<std::int64_t>(p[i]) + step);
    }
  });
}

}  // namespace hwsim::detail::HWSIM_ISA
