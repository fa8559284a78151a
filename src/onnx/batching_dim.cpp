#include "onnx/batching_dim.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace mrt::onnx {

void checkBatchingDim(const std::vector<popef::GraphAnchor> &anchors, unsigned dim) {
  const popef::GraphAnchor *first = nullptr;
  for (const popef::GraphAnchor &anchor : anchors) {
    if (anchor.dataSource != popef::DataSource::None) continue;
    if (dim >= anchor.shape.size()) {
      throw Error(ErrorCode::InvalidArgument, "batching_dim {}: '{}' has shape [{}], of rank {}", dim, anchor.name,
                  fmt::join(anchor.shape, ", "), anchor.shape.size());
    }
    if (first == nullptr) {
      first = &anchor;
    } else if (anchor.shape[dim] != first->shape[dim]) {
      throw Error(ErrorCode::InvalidArgument,
                  "batching_dim {}: '{}' has {} there but '{}' has {}; every input and output must hold the same "
                  "batch in that dimension",
                  dim, first->name, first->shape[dim], anchor.name, anchor.shape[dim]);
    }
  }
}

}  // namespace mrt::onnx
