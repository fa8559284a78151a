// hwsim::Tensor: a view of elements of one or more graph variables.
//
// A tensor is a shape plus an ordered list of regions (runs of consecutive
// elements of a variable). Views (slice, index, reshape, flatten, transpose,
// concat) only compute new region lists: no data is copied or allocated on
// the device. A view made of one region is contiguous and is executed on the
// host directly in place; other views are gathered/scattered around vertices.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hwsim/types.hpp"

namespace hwsim {

class Graph;

// Elements [begin, end) of variable `var` (an index in its graph).
struct Region {
  std::uint32_t var = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::uint64_t size() const { return end - begin; }
  bool operator==(const Region &) const = default;
};

class Tensor {
 public:
  Tensor() = default;  // an invalid tensor: valid() is false

  bool valid() const { return graphId_ != 0; }
  Type elementType() const { return type_; }
  const Shape &shape() const { return shape_; }
  std::size_t rank() const { return shape_.size(); }
  std::size_t dim(unsigned d) const;
  std::size_t numElements() const { return numElementsOf(shape_); }
  std::size_t numBytes() const { return numElements() * sizeOf(type_); }
  const std::vector<Region> &regions() const { return regions_; }
  bool isContiguous() const { return regions_.size() <= 1; }

  // Elements [begin, end) along dimension d (the rank is unchanged).
  Tensor slice(std::size_t begin, std::size_t end, unsigned d = 0) const;
  // Element i of dimension 0, dropping that dimension.
  Tensor operator[](std::size_t i) const;
  // Same elements, new shape (same number of elements).
  Tensor reshape(const Shape &shape) const;
  Tensor flatten() const { return reshape({numElements()}); }
  // Swap the two dimensions of a rank-2 tensor.
  Tensor transpose() const;

  // Identity of the graph this tensor belongs to (for misuse checks).
  std::uint32_t graphId() const { return graphId_; }

 private:
  friend class Graph;
  friend Tensor concat(const std::vector<Tensor> &parts, unsigned d);
  Tensor(std::uint32_t graphId, Type type, Shape shape, std::vector<Region> regions)
      : graphId_(graphId), type_(type), shape_(std::move(shape)), regions_(std::move(regions)) {}

  std::uint32_t graphId_ = 0;
  Type type_ = Type::F32;
  Shape shape_;
  std::vector<Region> regions_;
};

// Joins tensors of the same type along dimension d (other dimensions equal).
Tensor concat(const std::vector<Tensor> &parts, unsigned d = 0);

}  // namespace hwsim
