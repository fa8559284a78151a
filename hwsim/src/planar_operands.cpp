#include "planar_operands.hpp"

namespace hwsim::detail {

Planes planesOf(Type type, const Shape &shape) {
  if (shape.size() < 2) return {};
  std::uint64_t count = shape[0] * shape[1], elements = 1;
  for (std::size_t i = 2; i < shape.size(); ++i) elements *= shape[i];
  return {count, elements * sizeOf(type)};
}

std::uint64_t viewPlanePitch(ByteSpan ranges, Type type, const Shape &shape) {
  const Planes planes = planesOf(type, shape);
  // Ranges in element order: plane i's bytes start at view byte i * bytes.
  return uniformPitch(planes, sizeOf(type), [&](std::uint64_t i) -> std::optional<std::uint64_t> {
    std::uint64_t skip = i * planes.bytes;
    for (const auto &[off, len] : ranges) {
      if (skip < len) {
        if (skip + planes.bytes > len) return std::nullopt;
        return off + skip;
      }
      skip -= len;
    }
    return std::nullopt;
  });
}

}  // namespace hwsim::detail
