#include "vertex_operands.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "codelets/kernels.hpp"
#include "engine_plan.hpp"
#include "planar_operands.hpp"

namespace hwsim {

namespace {

// The direction a vertex's field has for the host: MatMul's out is InOut
// only for its accumulating form; a MatMul that does not accumulate writes
// every element of out without reading any (Eigen assigns, oneDNN's beta is
// 0), so a scattered out (a column block of the mlp's layer outputs from
// batch 16 up: one memcpy per row) need not be gathered before it runs,
// only scattered after. The codelet gets the same operands and writes the
// same bytes.
detail::FieldDir hostDirection(const detail::CodeletSpec &spec, std::size_t field, const detail::Attrs &attrs) {
  const detail::FieldDir dir = spec.fields[field].dir;
  if (dir == detail::FieldDir::InOut && spec.execute == detail::activeKernels().matMul && attrs[0][0] == 0.0) {
    return detail::FieldDir::Out;
  }
  return dir;
}

// What the vertex's codelet prepares from its operands' types and shapes
// and its attributes (codelets/registry.hpp), or null.
detail::PreparedState prepareState(const detail::CodeletSpec &spec, const detail::PreparedOperand *operands,
                           std::size_t numOperands, const detail::Attrs &attrs) {
  if (spec.prepare == nullptr) return nullptr;
  std::vector<detail::Operand> ops(numOperands);
  for (std::size_t f = 0; f < numOperands; ++f) {
    if (operands[f].view == detail::kNoView) return nullptr;
    ops[f].type = operands[f].type;
    ops[f].shape = operands[f].shape;
    ops[f].numElements = operands[f].numElements;
  }
  return spec.prepare(spec, ops.data(), attrs);
}

}  // namespace

void detail::EnginePlan::prepareVertices() {
  const auto &lib = detail::codeletLibrary();
  // Whether a field the vertex writes shares a byte with another of its fields.
  const auto writesAFieldItTouches = [&](const detail::ExeVertex &vx, const detail::PreparedOperand *ops) {
    for (std::size_t w = 0; w < vx.operands.size(); ++w) {
      if (vx.operands[w] == detail::kNoView || ops[w].dir == detail::FieldDir::In) continue;
      const auto &written = views[vx.operands[w]].segments;
      for (std::size_t f = 0; f < vx.operands.size(); ++f) {
        if (f != w && vx.operands[f] != detail::kNoView && detail::overlap(written, views[vx.operands[f]].segments)) {
          return true;
        }
      }
    }
    return false;
  };
  csVertices.assign(d->computeSets.size(), {});
  for (std::size_t c = 0; c < d->computeSets.size(); ++c) {
    detail::PreparedVertices &prepared = csVertices[c];
    const auto &vs = d->computeSets[c].vertices;
    prepared.vertices.reserve(vs.size());
    for (const auto &vx : vs) {
      detail::PreparedVertex pv;
      pv.spec = &lib[vx.codelet];
      pv.attrs = &vx.attrs;
      pv.firstOperand = static_cast<std::uint32_t>(prepared.operands.size());
      pv.numOperands = static_cast<std::uint8_t>(vx.operands.size());
      for (std::size_t f = 0; f < vx.operands.size(); ++f) {
        detail::PreparedOperand op;
        op.view = vx.operands[f];
        op.dir = hostDirection(*pv.spec, f, vx.attrs);
        if (op.view != detail::kNoView) {
          const auto &ev = d->views[op.view];
          const ResolvedView &rv = views[op.view];
          op.type = ev.type;
          op.shape = ev.shape;
          op.numElements = ev.numElements;
          const bool planar = settings.planarOperands && pv.spec->fields[f].planar;
          op.inPlace = rv.contiguous;
          op.offset = rv.offset;
          if (!rv.contiguous && planar) {
            op.planePitch = detail::viewPlanePitch(rv.segments, ev.type, *ev.shape);
            op.inPlace = op.planePitch != 0;
            if (op.inPlace) op.offset = rv.segments[0].first;
          }
          if (op.dir == detail::FieldDir::In) op.read = mirrors.readFor(op.view, planar);
        }
        prepared.operands.push_back(op);
      }
      detail::PreparedOperand *ops = prepared.operands.data() + pv.firstOperand;
      // Gathered, a view is read before the codelet writes anything, and
      // scattered, written after it read everything: so a vertex writing a
      // byte another of its fields holds keeps its planar views gathered
      // and scattered.
      if (std::any_of(ops, ops + pv.numOperands, [](const detail::PreparedOperand &o) { return o.planePitch != 0; }) &&
          writesAFieldItTouches(vx, ops)) {
        for (std::size_t f = 0; f < pv.numOperands; ++f) {
          if (ops[f].planePitch == 0) continue;
          ops[f].planePitch = 0;
          ops[f].inPlace = false;
        }
      }
      for (std::size_t f = 0; f < pv.numOperands; ++f) pv.anyScattered = pv.anyScattered || !ops[f].inPlace;
      if (auto made = prepareState(*pv.spec, prepared.operands.data() + pv.firstOperand, pv.numOperands, vx.attrs)) {
        pv.prepared = made.get();
        prepared.states.push_back(std::move(made));
      }
      prepared.vertices.push_back(pv);
    }
  }
}

}  // namespace hwsim
