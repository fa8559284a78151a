// ScatterElements: out = in with updates written (or added, or multiplied)
// at run-time integer indices along attribute axis, ONNX style (a negative
// index counts from the end). An update whose index is out of range is
// dropped, so no input can write outside out; repeated indices apply in
// order (the last write wins without a reduction).
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "codelets/registry.hpp"
#include "codelets/type_dispatch.hpp"

namespace hwsim::detail {

namespace {

enum class Reduction { None, Add, Mul };

// in's position p with its axis coordinate replaced by the index, or -1.
std::int64_t target(const Shape &shape, const std::vector<std::size_t> &stride, const std::vector<std::size_t> &position,
                    std::size_t axis, std::int64_t index) {
  const auto n = static_cast<std::int64_t>(shape[axis]);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return -1;
  std::size_t offset = static_cast<std::size_t>(index) * stride[axis];
  for (std::size_t d = 0; d < shape.size(); ++d) offset += d == axis ? 0 : position[d] * stride[d];
  return static_cast<std::int64_t>(offset);
}

// a + b or a * b: integers wrap (computed in 64 bits), BOOL is or / and.
template <Type T> Storage<T> combine(Reduction r, Storage<T> a, Storage<T> b) {
  using S = Storage<T>;
  if constexpr (kIsFloat<T>) {
    return r == Reduction::Add ? S(a + b) : S(a * b);
  } else if constexpr (kIsBool<T>) {
    return static_cast<S>(r == Reduction::Add ? (a != 0 || b != 0) : (a != 0 && b != 0));
  } else {
    const auto x = static_cast<std::int64_t>(a), y = static_cast<std::int64_t>(b);
    return r == Reduction::Add ? wrapInt<T>(x + y)
                               : wrapInt<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y)));
  }
}

}  // namespace

std::string validateScatter(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  const Operand &in = ops[0], &indices = ops[1], &updates = ops[2], &out = ops[3];
  if (attrs[0].size() != 1 || !(attrs[0][0] >= 0) || attrs[0][0] != std::floor(attrs[0][0]) ||
      attrs[0][0] >= static_cast<double>(in.shape->size())) {
    return fmt::format("attribute axis must be one dimension of in (rank {})", in.shape->size());
  }
  if (attrs[1].size() != 1 || (attrs[1][0] != 0 && attrs[1][0] != 1 && attrs[1][0] != 2)) {
    return "attribute reduction must be 0 (none), 1 (add) or 2 (mul)";
  }
  if (isFloatingPoint(indices.type) || indices.type == Type::BOOL) {
    return fmt::format("indices must be integers, got {}", toString(indices.type));
  }
  if (updates.type != in.type || out.type != in.type) {
    return fmt::format("in, updates and out must have one type, got {}, {} and {}", toString(in.type),
                       toString(updates.type), toString(out.type));
  }
  if (out.numElements != in.numElements) return fmt::format("out has {} elements, in {}", out.numElements, in.numElements);
  if (*updates.shape != *indices.shape) return "updates and indices must have one shape";
  const Shape &s = *in.shape, &is = *indices.shape;
  if (is.size() != s.size()) return fmt::format("indices have rank {}, in has {}", is.size(), s.size());
  const auto axis = static_cast<std::size_t>(attrs[0][0]);
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (d != axis && is[d] > s[d]) return fmt::format("indices dimension {} is {}, beyond in's {}", d, is[d], s[d]);
  }
  return {};
}

// A copy of in, then one load, (reduction,) store per update.
double cyclesScatter(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &attrs) {
  const double perUpdate = attrs[1][0] == 0 ? 1.0 : 2.0;
  return t.vertexOverheadCycles + static_cast<double>(ops[0].numElements) +
         perUpdate * static_cast<double>(ops[1].numElements);
}

void executeScatter(const CodeletSpec &, const Operand *ops, const Attrs &attrs) {
  const Operand &in = ops[0], &indices = ops[1], &updates = ops[2], &out = ops[3];
  const auto axis = static_cast<std::size_t>(attrs[0][0]);
  const auto reduction = static_cast<Reduction>(static_cast<int>(attrs[1][0]));
  if (out.data != in.data) std::memmove(out.data, in.data, in.numElements * sizeOf(in.type));
  const Shape &shape = *in.shape, &ishape = *indices.shape;
  const std::size_t rank = shape.size();
  std::vector<std::size_t> stride(rank, 1), position(rank, 0);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  dispatchType(in.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    using S = Storage<T>;
    auto *dst = reinterpret_cast<S *>(out.data);
    const auto *src = reinterpret_cast<const S *>(updates.data);
    dispatchType(indices.type, [&](auto indexTag) {
      constexpr Type I = decltype(indexTag)::value;
      if constexpr (!kIsFloat<I>) {
        const auto *idx = reinterpret_cast<const Storage<I> *>(indices.data);
        for (std::size_t k = 0; k < indices.numElements; ++k) {
          const std::int64_t at = target(shape, stride, position, axis, static_cast<std::int64_t>(idx[k]));
          if (at >= 0) {
            S &o = dst[at];
            o = reduction == Reduction::None ? src[k] : combine<T>(reduction, o, src[k]);
          }
          for (std::size_t d = rank; d-- > 0;) {  // next multi-index of indices, row-major
            if (++position[d] < ishape[d]) break;
            position[d] = 0;
          }
        }
      }
    });
  });
}

}  // namespace hwsim::detail
