// Gather and GatherElements: elements of `in` picked along attribute axis by
// run-time integer indices, ONNX style (a negative index counts from the end).
// An index out of range gives zeros, so no input can read outside `in`.
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "codelets/registry.hpp"
#include "codelets/type_dispatch.hpp"

namespace hwsim::detail {

namespace {

// The axis attribute checked against in's rank; an error message or "".
std::string checkAxis(const Operand &in, const Attrs &attrs) {
  if (attrs[0].size() != 1) return "attribute axis must be one number";
  const double a = attrs[0][0];
  if (!(a >= 0) || a >= static_cast<double>(in.shape->size()) || a != std::floor(a)) {
    return fmt::format("axis {} is not a dimension of in (rank {})", a, in.shape->size());
  }
  return {};
}

// The indices as signed 64-bit values, whatever their integer type.
std::vector<std::int64_t> readIndices(const Operand &indices) {
  std::vector<std::int64_t> out(indices.numElements);
  dispatchType(indices.type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    if constexpr (!kIsFloat<T>) {
      const auto *p = reinterpret_cast<const Storage<T> *>(indices.data);
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::int64_t>(p[i]);
    }
  });
  return out;
}

// index normalized into [0, n), or -1 when it is out of range.
std::int64_t resolveIndex(std::int64_t index, std::size_t n) {
  const auto size = static_cast<std::int64_t>(n);
  if (index < 0) index += size;
  return index >= 0 && index < size ? index : -1;
}

std::size_t product(const Shape &shape, std::size_t from, std::size_t to) {
  std::size_t p = 1;
  for (std::size_t d = from; d < to; ++d) p *= shape[d];
  return p;
}

// out [outer.., K.., inner..] = in [outer.., indices[k], inner..]: whole
// inner blocks copied per index.
void gatherSlices(const Operand &in, const std::vector<std::int64_t> &indices, const Operand &out, std::size_t axis) {
  const Shape &shape = *in.shape;
  const std::size_t outer = product(shape, 0, axis), inner = product(shape, axis + 1, shape.size());
  const std::size_t block = inner * sizeOf(in.type);
  std::uint8_t *dst = out.data;
  for (std::size_t o = 0; o < outer; ++o) {
    const std::uint8_t *src = in.data + o * shape[axis] * block;
    for (const std::int64_t index : indices) {
      const std::int64_t i = resolveIndex(index, shape[axis]);
      if (i < 0) std::memset(dst, 0, block);
      else std::memcpy(dst, src + static_cast<std::size_t>(i) * block, block);
      dst += block;
    }
  }
}

// out[p] = in[p with its axis coordinate replaced by indices[p]]; indices
// (and out) have in's rank, each dimension at most in's except along axis.
void gatherElements(const Operand &in, const Operand &indicesOp, const std::vector<std::int64_t> &indices,
                    const Operand &out, std::size_t axis) {
  const Shape &shape = *in.shape, &ishape = *indicesOp.shape;
  const std::size_t rank = shape.size(), width = sizeOf(in.type);
  std::vector<std::size_t> stride(rank, 1), idx(rank, 0);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  for (std::size_t k = 0; k < indices.size(); ++k) {
    const std::int64_t i = resolveIndex(indices[k], shape[axis]);
    std::uint8_t *dst = out.data + k * width;
    if (i < 0) {
      std::memset(dst, 0, width);
    } else {
      std::size_t offset = static_cast<std::size_t>(i) * stride[axis];
      for (std::size_t d = 0; d < rank; ++d) offset += d == axis ? 0 : idx[d] * stride[d];
      std::memcpy(dst, in.data + offset * width, width);
    }
    for (std::size_t d = rank; d-- > 0;) {  // next multi-index of indices, row-major
      if (++idx[d] < ishape[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

std::string validateGather(const CodeletSpec &spec, const Operand *ops, const Attrs &attrs) {
  const Operand &in = ops[0], &indices = ops[1], &out = ops[2];
  if (auto error = checkAxis(in, attrs); !error.empty()) return error;
  if (isFloatingPoint(indices.type) || indices.type == Type::BOOL) {
    return fmt::format("indices must be integers, got {}", toString(indices.type));
  }
  if (out.type != in.type) return fmt::format("in is {} but out is {}", toString(in.type), toString(out.type));
  const auto axis = static_cast<std::size_t>(attrs[0][0]);
  std::uint64_t want = indices.numElements;
  if (static_cast<GatherOp>(spec.op) == GatherOp::Gather) {
    want *= product(*in.shape, 0, axis) * product(*in.shape, axis + 1, in.shape->size());
  } else {
    const Shape &s = *in.shape, &is = *indices.shape;
    if (is.size() != s.size()) return fmt::format("indices have rank {}, in has {}", is.size(), s.size());
    for (std::size_t d = 0; d < s.size(); ++d) {
      if (d != axis && is[d] > s[d]) return fmt::format("indices dimension {} is {}, beyond in's {}", d, is[d], s[d]);
    }
  }
  if (out.numElements != want) return fmt::format("out has {} elements, needs {}", out.numElements, want);
  return {};
}

// One load and one store per element of out.
double cyclesGather(const CodeletSpec &, const Target &t, const Operand *ops, const Attrs &) {
  return t.vertexOverheadCycles + static_cast<double>(ops[2].numElements);
}

void executeGather(const CodeletSpec &spec, const Operand *ops, const Attrs &attrs) {
  const auto axis = static_cast<std::size_t>(attrs[0][0]);
  const std::vector<std::int64_t> indices = readIndices(ops[1]);
  if (static_cast<GatherOp>(spec.op) == GatherOp::Gather) gatherSlices(ops[0], indices, ops[2], axis);
  else gatherElements(ops[0], ops[1], indices, ops[2], axis);
}

}  // namespace hwsim::detail
