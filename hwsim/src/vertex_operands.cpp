#include "vertex_operands.hpp"

#include <utility>
#include <vector>

#include "codelets/kernels.hpp"
#include "engine_impl.hpp"
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

void Engine::Impl::prepareVertices() {
  const auto &lib = detail::codeletLibrary();
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
          op.shape = &ev.shape;
          op.numElements = ev.numElements;
          const bool planar = planarOperands && pv.spec->fields[f].planar;
          op.inPlace = rv.contiguous;
          op.offset = rv.offset;
          if (!rv.contiguous && planar) {
            op.planePitch = detail::viewPlanePitch(rv.segments, ev.type, ev.shape);
            op.inPlace = op.planePitch != 0;
            if (op.inPlace) op.offset = rv.segments[0].first;
          }
          if (op.dir == detail::FieldDir::In) op.read = mirrors.readFor(op.view, planar);
          pv.anyScattered = pv.anyScattered || !op.inPlace;
        }
        prepared.operands.push_back(op);
      }
      if (auto made = prepareState(*pv.spec, prepared.operands.data() + pv.firstOperand, pv.numOperands, vx.attrs)) {
        pv.prepared = made.get();
        prepared.states.push_back(std::move(made));
      }
      prepared.vertices.push_back(pv);
    }
  }
}

}  // namespace hwsim
