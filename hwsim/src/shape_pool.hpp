// ShapePool: the shapes of an executable's views, each distinct shape held
// once. An executable has tens of thousands of views but a handful of
// shapes (mlp at batch 1024: 18,000 views); held as a vector each, loading
// it made and destroying it freed one heap block per view, a tenth of a
// first load's instructions. Shapes never move, so the pointers a pool
// hands out stay valid as long as the pool lives; the pool cannot be copied.
#pragma once

#include <algorithm>
#include <set>

#include "hwsim/types.hpp"

namespace hwsim::detail {

class ShapePool {
 public:
  ShapePool() = default;
  ShapePool(const ShapePool &) = delete;
  ShapePool &operator=(const ShapePool &) = delete;

  // The pool's shape equal to `dims` (anything with begin and end over
  // integers), added if it has none.
  template <typename Range>
  const Shape *intern(const Range &dims) {
    // Views come in runs of one shape (a compute set's blocks, a copy's
    // pieces): the last shape first, before a search of the set.
    if (last_ != nullptr && std::equal(last_->begin(), last_->end(), dims.begin(), dims.end())) return last_;
    auto it = shapes_.find(dims);
    if (it == shapes_.end()) it = shapes_.emplace(Shape(dims.begin(), dims.end())).first;
    last_ = &*it;
    return last_;
  }

 private:
  // Compares shapes with other ranges of dimensions without making a Shape.
  struct Less {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A &a, const B &b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end());
    }
  };
  std::set<Shape, Less> shapes_;
  const Shape *last_ = nullptr;
};

}  // namespace hwsim::detail
