// Graph handles (include/mrt_c.h, "Building models: targets and graphs").
#include <memory>

#include "capi/graph.hpp"
#include "capi/target.hpp"

using mrt::Error;
using mrt::ErrorCode;
using namespace mrt::capi;

MRT_API mrt_status mrt_graph_create(const mrt_target *target, uint32_t replication_factor,
                                    mrt_graph **out) noexcept {
  return guard("mrt_graph_create", [&] {
    requireNotNull(out, "out");
    const hwsim::Target t = target == nullptr ? hwsim::Target::gc200() : targetOf(target, "target");
    if (replication_factor == 0) {
      throw Error(ErrorCode::InvalidArgument, "replication_factor is 0; it must be at least 1");
    }
    auto graph = mrt::callHwsim([&] { return std::make_unique<mrt_graph>(t, replication_factor); });
    *out = graph.release();
  });
}

MRT_API void mrt_graph_destroy(mrt_graph *graph) noexcept { delete graph; }

MRT_API mrt_status mrt_graph_get_target(const mrt_graph *graph, mrt_target *out_target) noexcept {
  return onGraph("mrt_graph_get_target", graph,
                 [&](const mrt_graph &g) { fillTarget(g.graph.getTarget(), out_target, "out_target"); });
}

MRT_API mrt_status mrt_graph_replication_factor(const mrt_graph *graph,
                                                uint32_t *out_replication_factor) noexcept {
  return onGraph("mrt_graph_replication_factor", graph, [&](const mrt_graph &g) {
    requireNotNull(out_replication_factor, "out_replication_factor");
    *out_replication_factor = g.graph.replicationFactor();
  });
}
