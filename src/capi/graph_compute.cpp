// Compute sets and vertices (include/mrt_c.h, "Compute sets, vertices and
// codelets"). Names are checked against the codelet library here so that a
// typo is NOT_FOUND with the choices, not a compile error later.
#include <fmt/format.h>

#include "capi/codelet.hpp"
#include "capi/graph.hpp"

using mrt::Error;
using mrt::ErrorCode;
using namespace mrt::capi;

MRT_API mrt_status mrt_graph_add_compute_set(mrt_graph *graph, const char *name, mrt_compute_set *out) noexcept {
  return changeGraph("mrt_graph_add_compute_set", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const std::uint64_t id = makeId(g, IdKind::ComputeSet, g.computeSets.size());
    g.computeSets.push_back(g.graph.addComputeSet(nameOf(name)));
    *out = id;
  });
}

MRT_API mrt_status mrt_graph_add_vertex(mrt_graph *graph, mrt_compute_set compute_set, const char *codelet,
                                        uint32_t tile, mrt_vertex *out) noexcept {
  return changeGraph("mrt_graph_add_vertex", graph, [&](mrt_graph &g) {
    requireNotNull(out, "out");
    const hwsim::ComputeSet cs = g.computeSets[indexOf(g, compute_set, IdKind::ComputeSet, "compute_set")];
    const std::size_t c = codeletIndexOf(codelet, "codelet");
    const unsigned tiles = g.graph.getTarget().numTiles();
    if (tile >= tiles) {
      throw Error(ErrorCode::InvalidArgument, "tile {} is out of range: the target has {} tiles", tile, tiles);
    }
    const std::uint64_t id = makeId(g, IdKind::Vertex, g.vertices.size());
    g.vertices.push_back({g.graph.addVertex(cs, hwsim::codeletInfos()[c].name, {}, tile), c});
    *out = id;
  });
}

MRT_API mrt_status mrt_graph_connect(mrt_graph *graph, mrt_vertex vertex, const char *field,
                                     mrt_tensor tensor) noexcept {
  return changeGraph("mrt_graph_connect", graph, [&](mrt_graph &g) {
    const VertexEntry &v = g.vertices[indexOf(g, vertex, IdKind::Vertex, "vertex")];
    const hwsim::CodeletField &f = codeletField(v.codelet, field, "field");
    const TensorEntry &t = tensorOf(g, tensor, "tensor");
    if (f.direction != hwsim::FieldDirection::In) {
      const std::string what = fmt::format("field '{}' of {} writes", f.name, hwsim::codeletInfos()[v.codelet].name);
      refuseConstantDestination(g, tensor, what.c_str());
    }
    g.graph.connect(v.vertex, f.name, t.tensor);
  });
}

MRT_API mrt_status mrt_graph_set_vertex_attribute(mrt_graph *graph, mrt_vertex vertex, const char *attribute,
                                                  const double *values, size_t num_values) noexcept {
  return changeGraph("mrt_graph_set_vertex_attribute", graph, [&](mrt_graph &g) {
    const VertexEntry &v = g.vertices[indexOf(g, vertex, IdKind::Vertex, "vertex")];
    const hwsim::CodeletAttribute &a = codeletAttribute(v.codelet, attribute, "attribute");
    if (num_values > 0) requireNotNull(values, "values");
    // 0 values restores the default, as documented.
    const std::vector<double> list =
        num_values > 0 ? std::vector<double>(values, values + num_values)
                       : std::vector<double>(a.defaults, a.defaults + a.numDefaults);
    g.graph.setInitialValue(v.vertex, a.name, list);
  });
}
