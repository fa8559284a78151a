#include "elementwise_runs.hpp"

#include <algorithm>

#include "byte_intervals.hpp"
#include "codelets/kernels.hpp"
#include "engine_plan.hpp"

namespace hwsim::detail {

bool runsElementwise(const CodeletSpec &spec) {
  const KernelTable &k = activeKernels();
  // Every binary op is one IEEE operation or a scalar loop per element; every
  // unary op is exact in any lane or computed on the packet path wherever
  // its element lies (kernels/whole_packets.hpp).
  return spec.execute == k.binary || spec.execute == k.unary;
}

}  // namespace hwsim::detail

namespace hwsim {

void detail::EnginePlan::planElementwiseRuns() {
  csRuns.assign(d->computeSets.size(), {});
  if (!settings.elementwiseRuns) return;
  for (std::size_t c = 0; c < d->computeSets.size(); ++c) {
    const auto &vs = d->computeSets[c].vertices;
    if (vs.size() < 2) continue;
    const detail::PreparedVertices &prepared = csVertices[c];
    const auto &spec = *prepared.vertices[0].spec;
    if (!detail::runsElementwise(spec)) continue;
    auto operandsOf = [&](std::uint32_t v) { return prepared.operands.data() + prepared.vertices[v].firstOperand; };
    // Every vertex the same codelet on contiguous operands of one element
    // count (no broadcast); no output byte read or written by another operand.
    bool qualifies = true;
    std::vector<detail::ByteInterval> outputs, inputs;
    for (std::uint32_t v = 0; v < vs.size() && qualifies; ++v) {
      const detail::PreparedVertex &pv = prepared.vertices[v];
      if (vs[v].codelet != vs[0].codelet || pv.numOperands != spec.fields.size()) qualifies = false;
      const detail::PreparedOperand *ops = operandsOf(v);
      for (std::size_t f = 0; qualifies && f < pv.numOperands; ++f) {
        const detail::PreparedOperand &o = ops[f];
        if (o.view == detail::kNoView || !o.inPlace || o.planePitch != 0 || views[o.view].bytes == 0 ||
            o.numElements != ops[0].numElements) {
          qualifies = false;
          break;
        }
        const detail::ByteInterval r{o.offset, o.offset + views[o.view].bytes};
        (o.dir == detail::FieldDir::In ? inputs : outputs).push_back(r);
      }
    }
    if (!qualifies) continue;
    qualifies = detail::sortDisjoint(outputs);
    for (std::size_t i = 0; i < inputs.size() && qualifies; ++i) qualifies = !detail::overlapsAny(outputs, inputs[i]);
    if (!qualifies) continue;

    detail::ElementwiseRuns plan;
    plan.chunks.push_back(0);
    const std::vector<std::uint32_t> &vertexChunks = csChunks[c];
    const std::size_t outField = spec.fields.size() - 1;
    for (std::size_t k = 0; k + 1 < vertexChunks.size(); ++k) {
      // The chunk's vertices in the order of their outputs in the arena.
      std::vector<std::uint32_t> order;
      for (std::uint32_t v = vertexChunks[k]; v < vertexChunks[k + 1]; ++v) order.push_back(v);
      std::sort(order.begin(), order.end(),
                [&](std::uint32_t a, std::uint32_t b) { return operandsOf(a)[outField].offset < operandsOf(b)[outField].offset; });
      for (const std::uint32_t v : order) {
        const detail::PreparedOperand *ops = operandsOf(v);
        // Joins the last run where each operand, and the source it may be
        // read through, continues where the run's ends.
        bool joins = plan.runs.size() > plan.chunks.back();
        for (std::size_t f = 0; joins && f < spec.fields.size(); ++f) {
          const detail::ElementwiseRun &last = plan.runs.back();
          const detail::PreparedOperand &first = operandsOf(last.vertex)[f];
          const std::uint64_t lastBytes = last.numElements * sizeOf(first.type);
          joins = ops[f].offset == first.offset + lastBytes && ops[f].read.mirror == first.read.mirror &&
                  (ops[f].read.mirror == detail::OperandMirrors::kNone || ops[f].read.offset == first.read.offset + lastBytes);
        }
        if (joins) {
          plan.runs.back().numElements += ops[0].numElements;
          continue;
        }
        plan.runs.push_back({v, ops[0].numElements, {}});
      }
      plan.chunks.push_back(static_cast<std::uint32_t>(plan.runs.size()));
    }
    if (plan.runs.size() == vs.size()) continue;  // nothing joined
    for (auto &run : plan.runs) run.shape = {run.numElements};
    csRuns[c] = std::move(plan);
  }
}

}  // namespace hwsim
