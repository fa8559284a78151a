// Planar operands (FieldSpec::planar): a codelet that takes a field's planes
// (one per index of its first two dimensions: a Conv's images and channels)
// at any pitch is handed, in place, a view whose planes lie at one pitch in
// the arena but not end to end (a Conv vertex's out of two channels of one
// row: two pieces 784 bytes apart), instead of the view gathered into
// scratch and scattered back; and an input that a copy's pieces fill plane
// by plane, from sources at one pitch, is read from the sources while the
// copy mirrors them (operand_mirrors.hpp; mnist-8's second Conv reads its 8
// input channels from the first pool's output instead of the exchange's 229
// KB of per-tile copies). The codelet reads and writes the same elements,
// so results and modelled cycles do not change; a vertex that writes a byte
// another of its fields holds keeps its views gathered and scattered (the
// codelet then reads all before it writes, as before: vertex_operands.cpp).
// host.planarOperands=false turns this off.
#pragma once

#include <cstdint>
#include <optional>

#include "copy_plan.hpp"
#include "hwsim/types.hpp"

namespace hwsim::detail {

struct Planes {
  std::uint64_t count = 0;  // 0: the shape has no planes (fewer than 2 dimensions)
  std::uint64_t bytes = 0;  // of one plane
};

Planes planesOf(Type type, const Shape &shape);

// The pitch at which the planes lie when plane i starts at startOf(i)
// (nullopt where a plane is not in one piece): 0 unless each plane is in one
// piece, plane i at startOf(0) + i * pitch for one pitch, a positive multiple
// of elementBytes, and there are at least two planes.
template <typename StartOf>
std::uint64_t uniformPitch(Planes planes, std::uint64_t elementBytes, StartOf startOf) {
  if (planes.count < 2 || planes.bytes == 0) return 0;
  const std::optional<std::uint64_t> first = startOf(0), second = startOf(1);
  if (!first || !second || *second <= *first) return 0;
  const std::uint64_t pitch = *second - *first;
  if (pitch % elementBytes != 0) return 0;
  for (std::uint64_t i = 2; i < planes.count; ++i) {
    const std::optional<std::uint64_t> at = startOf(i);
    if (!at || *at != *first + i * pitch) return 0;
  }
  return pitch;
}

// The pitch at which a view whose byte ranges (in element order) are
// `ranges` holds its planes, as uniformPitch; 0 if it does not.
std::uint64_t viewPlanePitch(ByteSpan ranges, Type type, const Shape &shape);

}  // namespace hwsim::detail
