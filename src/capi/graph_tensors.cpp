// Tensors, views and tile mapping (include/mrt_c.h, "Tensors", "Tile mapping").
// Views are checked here rather than in hwsim so that messages name the
// tensor id and the bad value.
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "capi/element_type.hpp"
#include "capi/graph.hpp"
#include "capi/sized_struct.hpp"

using mrt::Error;
using mrt::ErrorCode;
using namespace mrt::capi;

namespace {

std::string shapeText(const hwsim::Shape &shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

void requireOut(const void *out) { requireNotNull(out, "out"); }

unsigned numTiles(const mrt_graph &g) { return g.graph.getTarget().numTiles(); }

void requireTile(const mrt_graph &g, std::uint64_t tile, const char *argument) {
  if (tile >= numTiles(g)) {
    throw Error(ErrorCode::InvalidArgument, "{} {} is out of range: the target has {} tiles", argument, tile,
                numTiles(g));
  }
}

}  // namespace

MRT_API mrt_status mrt_graph_add_variable(mrt_graph *graph, int32_t data_type, const uint64_t *shape, size_t rank,
                                          const char *name, mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_add_variable", graph, [&](mrt_graph &g) {
    requireOut(out);
    const hwsim::Type type = hwsimTypeOf(data_type, "data_type");
    const hwsim::Shape s = shapeOf(shape, rank, "shape");
    *out = addTensor(g, g.graph.addVariable(type, s, nameOf(name)), nameOf(name));
  });
}

MRT_API mrt_status mrt_graph_add_constant(mrt_graph *graph, int32_t data_type, const uint64_t *shape, size_t rank,
                                          const void *data, uint64_t num_bytes, const char *name,
                                          mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_add_constant", graph, [&](mrt_graph &g) {
    requireOut(out);
    const hwsim::Type type = hwsimTypeOf(data_type, "data_type");
    const hwsim::Shape s = shapeOf(shape, rank, "shape");
    const std::uint64_t want = hwsim::numElementsOf(s) * hwsim::sizeOf(type);
    if (num_bytes != want) {
      throw Error(ErrorCode::InvalidArgument, "constant '{}': num_bytes is {}, but {} {} needs {}", nameOf(name),
                  num_bytes, hwsim::toString(type), shapeText(s), want);
    }
    if (want > 0) requireNotNull(data, "data");
    *out = addConstantTensor(g, g.graph.addConstant(type, s, data, num_bytes, nameOf(name)), nameOf(name));
  });
}

MRT_API mrt_status mrt_graph_add_constant_filled(mrt_graph *graph, int32_t data_type, const uint64_t *shape,
                                                 size_t rank, double value, const char *name,
                                                 mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_add_constant_filled", graph, [&](mrt_graph &g) {
    requireOut(out);
    const hwsim::Type type = hwsimTypeOf(data_type, "data_type");
    const hwsim::Shape s = shapeOf(shape, rank, "shape");
    *out = addConstantTensor(g, g.graph.addConstant(type, s, value, nameOf(name)), nameOf(name));
  });
}

MRT_API mrt_status mrt_graph_tensor_info(const mrt_graph *graph, mrt_tensor tensor,
                                         mrt_tensor_info *out_info) noexcept {
  return onGraph("mrt_graph_tensor_info", graph, [&](const mrt_graph &g) {
    const TensorEntry &e = tensorOf(g, tensor, "tensor");
    mrt_tensor_info info{};
    info.data_type = dataTypeOf(e.tensor.elementType());
    info.rank = e.shape.size();
    info.shape = e.shape.empty() ? nullptr : e.shape.data();
    info.num_elements = e.tensor.numElements();
    info.num_bytes = e.tensor.numBytes();
    info.is_contiguous = e.tensor.isContiguous();
    info.is_constant = e.isConstant;
    fillSized(out_info, info, MRT_TENSOR_INFO_V1_SIZE, "out_info");
  });
}

MRT_API mrt_status mrt_graph_slice(mrt_graph *graph, mrt_tensor tensor, uint64_t begin, uint64_t end, uint32_t dim,
                                   mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_slice", graph, [&](mrt_graph &g) {
    requireOut(out);
    const TensorEntry &e = tensorOf(g, tensor, "tensor");
    if (dim >= e.shape.size()) {
      throw Error(ErrorCode::InvalidArgument, "dim {} is out of range for {} of shape {}", dim,
                  describeTensor(g, tensor), shapeText(e.tensor.shape()));
    }
    if (begin > end || end > e.shape[dim]) {
      throw Error(ErrorCode::InvalidArgument, "slice [{}, {}) of dimension {} is out of range for {} of shape {}",
                  begin, end, dim, describeTensor(g, tensor), shapeText(e.tensor.shape()));
    }
    hwsim::Tensor view = e.tensor.slice(begin, end, dim);
    *out = addTensor(g, std::move(view), fmt::format("{}[{}:{} of dim {}]", e.name, begin, end, dim));
  });
}

MRT_API mrt_status mrt_graph_index(mrt_graph *graph, mrt_tensor tensor, uint64_t index, mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_index", graph, [&](mrt_graph &g) {
    requireOut(out);
    const TensorEntry &e = tensorOf(g, tensor, "tensor");
    if (e.shape.empty() || index >= e.shape[0]) {
      throw Error(ErrorCode::InvalidArgument, "index {} is out of range for {} of shape {}", index,
                  describeTensor(g, tensor), shapeText(e.tensor.shape()));
    }
    hwsim::Tensor view = e.tensor[index];
    *out = addTensor(g, std::move(view), fmt::format("{}[{}]", e.name, index));
  });
}

MRT_API mrt_status mrt_graph_reshape(mrt_graph *graph, mrt_tensor tensor, const uint64_t *shape, size_t rank,
                                     mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_reshape", graph, [&](mrt_graph &g) {
    requireOut(out);
    const TensorEntry &e = tensorOf(g, tensor, "tensor");
    const hwsim::Shape s = shapeOf(shape, rank, "shape");
    if (hwsim::numElementsOf(s) != e.tensor.numElements()) {
      throw Error(ErrorCode::InvalidArgument, "cannot reshape {} of shape {} ({} elements) to {} ({} elements)",
                  describeTensor(g, tensor), shapeText(e.tensor.shape()), e.tensor.numElements(), shapeText(s),
                  hwsim::numElementsOf(s));
    }
    hwsim::Tensor view = e.tensor.reshape(s);
    *out = addTensor(g, std::move(view), e.name);
  });
}

MRT_API mrt_status mrt_graph_flatten(mrt_graph *graph, mrt_tensor tensor, mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_flatten", graph, [&](mrt_graph &g) {
    requireOut(out);
    const TensorEntry &e = tensorOf(g, tensor, "tensor");
    hwsim::Tensor view = e.tensor.flatten();
    *out = addTensor(g, std::move(view), e.name);
  });
}

MRT_API mrt_status mrt_graph_transpose(mrt_graph *graph, mrt_tensor tensor, mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_transpose", graph, [&](mrt_graph &g) {
    requireOut(out);
    const TensorEntry &e = tensorOf(g, tensor, "tensor");
    if (e.shape.size() != 2) {
      throw Error(ErrorCode::InvalidArgument, "cannot transpose {} of shape {}: it must have rank 2",
                  describeTensor(g, tensor), shapeText(e.tensor.shape()));
    }
    hwsim::Tensor view = e.tensor.transpose();
    *out = addTensor(g, std::move(view), e.name + "^T");
  });
}

MRT_API mrt_status mrt_graph_concat(mrt_graph *graph, const mrt_tensor *tensors, size_t num_tensors, uint32_t dim,
                                    mrt_tensor *out) noexcept {
  return changeGraph("mrt_graph_concat", graph, [&](mrt_graph &g) {
    requireOut(out);
    requireNotNull(tensors, "tensors");
    if (num_tensors == 0) throw Error(ErrorCode::InvalidArgument, "num_tensors is 0; concat needs at least 1");
    std::vector<hwsim::Tensor> parts;
    parts.reserve(num_tensors);
    for (std::size_t i = 0; i < num_tensors; ++i) {
      const std::string argument = fmt::format("tensors[{}]", i);
      const hwsim::Tensor &t = tensorOf(g, tensors[i], argument.c_str()).tensor;
      const hwsim::Tensor &first = parts.empty() ? t : parts.front();
      if (dim >= t.rank()) {
        throw Error(ErrorCode::InvalidArgument, "dim {} is out of range for {} = {} of shape {}", dim, argument,
                    describeTensor(g, tensors[i]), shapeText(t.shape()));
      }
      if (t.elementType() != first.elementType()) {
        throw Error(ErrorCode::InvalidArgument, "{} = {} is {}, but tensors[0] is {}", argument,
                    describeTensor(g, tensors[i]), hwsim::toString(t.elementType()),
                    hwsim::toString(first.elementType()));
      }
      bool compatible = t.rank() == first.rank();
      for (unsigned d = 0; compatible && d < t.rank(); ++d) compatible = d == dim || t.dim(d) == first.dim(d);
      if (!compatible) {
        throw Error(ErrorCode::InvalidArgument,
                    "{} = {} has shape {}, which cannot join tensors[0] of shape {} along dimension {}", argument,
                    describeTensor(g, tensors[i]), shapeText(t.shape()), shapeText(first.shape()), dim);
      }
      parts.push_back(t);
    }
    *out = addTensor(g, hwsim::concat(parts, dim), "concat");
  });
}

MRT_API mrt_status mrt_graph_set_tile_mapping(mrt_graph *graph, mrt_tensor tensor, uint32_t tile) noexcept {
  return changeGraph("mrt_graph_set_tile_mapping", graph, [&](mrt_graph &g) {
    const TensorEntry &e = tensorOf(g, tensor, "tensor");
    requireTile(g, tile, "tile");
    g.graph.setTileMapping(e.tensor, tile);
  });
}

MRT_API mrt_status mrt_graph_map_linearly(mrt_graph *graph, mrt_tensor tensor, uint64_t grain_size,
                                          uint32_t first_tile, uint32_t num_tiles) noexcept {
  return changeGraph("mrt_graph_map_linearly", graph, [&](mrt_graph &g) {
    const TensorEntry &e = tensorOf(g, tensor, "tensor");
    if (grain_size == 0) throw Error(ErrorCode::InvalidArgument, "grain_size is 0; it must be at least 1");
    requireTile(g, first_tile, "first_tile");
    if (std::uint64_t{first_tile} + num_tiles > numTiles(g)) {
      throw Error(ErrorCode::InvalidArgument, "tiles [{}, {}) are out of range: the target has {} tiles", first_tile,
                  std::uint64_t{first_tile} + num_tiles, numTiles(g));
    }
    g.graph.mapLinearly(e.tensor, grain_size, first_tile, num_tiles);
  });
}

MRT_API mrt_status mrt_graph_tile_mapping(const mrt_graph *graph, mrt_tensor tensor, mrt_tile_interval *intervals,
                                          size_t capacity, size_t *out_count) noexcept {
  return onGraph("mrt_graph_tile_mapping", graph, [&](const mrt_graph &g) {
    requireNotNull(out_count, "out_count");
    if (capacity > 0) requireNotNull(intervals, "intervals");
    const auto mapping = g.graph.getTileMapping(tensorOf(g, tensor, "tensor").tensor);
    for (std::size_t i = 0; i < mapping.size() && i < capacity; ++i) {
      intervals[i] = {mapping[i].begin, mapping[i].end, mapping[i].tile};
    }
    *out_count = mapping.size();
  });
}
