// Vertex operands prepared once at engine creation: what the interpreter
// needs to hand a vertex's operands to its codelet (type, shape, arena
// offset, whether the view is contiguous, its field's direction, the mirror
// an input may be read through), copied out of the executable's views, the
// resolved views, the codelet's fields and the operand mirrors into one flat
// array per compute set. Each run of a compute set then reads its vertices'
// operands in order from consecutive memory instead of following five
// tables per operand (a profile of the mlp at batch 1 had 6% of samples in
// that setup; docs/performance.md, item 1). What the codelets get is the
// same as before: same pointers, same types and shapes. A non-accumulating
// MatMul's out counts as written only, so a scattered out is not gathered
// before the codelet overwrites it (vertex_operands.cpp). A codelet with a
// prepare step (Conv, pools: their geometry) gets what it made here at each
// run, instead of parsing its shapes and attributes again.
#pragma once

#include <cstdint>
#include <vector>

#include "codelets/registry.hpp"
#include "operand_mirrors.hpp"

namespace hwsim::detail {

struct PreparedOperand {
  std::uint64_t offset = 0;  // of the view's bytes in the arena, when in place
  std::uint64_t numElements = 0;
  const Shape *shape = nullptr;
  OperandMirrors::Read read;  // In fields only: the mirror the view may be read through
  std::uint32_t view = kNoView;  // for gathering and scattering a view that is not in place
  Type type = Type::F32;
  FieldDir dir = FieldDir::In;  // for the host: In read, Out written, InOut both
  // The codelet works on the view in the arena: contiguous, or a planar
  // field's planes at planePitch (planar_operands.hpp); otherwise the view
  // is gathered into scratch and scattered back.
  bool inPlace = true;
  std::uint64_t planePitch = 0;  // Operand::planePitch, when in place
};

struct PreparedVertex {
  const CodeletSpec *spec = nullptr;
  const Attrs *attrs = nullptr;
  const void *prepared = nullptr;  // spec->prepare's state (owned by PreparedVertices::states), or null
  std::uint32_t firstOperand = 0;  // index into PreparedVertices::operands
  std::uint8_t numOperands = 0;
  bool anyScattered = false;  // an operand view that is not in place (gathered/scattered through scratch)
};

// The vertices of one compute set, in the compute set's order.
struct PreparedVertices {
  std::vector<PreparedVertex> vertices;
  std::vector<PreparedOperand> operands;
  std::vector<PreparedState> states;  // what the vertices' prepared point to
};

}  // namespace hwsim::detail
