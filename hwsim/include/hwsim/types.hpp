// Element types of hwsim tensors and their host representation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace hwsim {

// The numeric values are part of the serialized Executable format: append only.
enum class Type : std::uint8_t {
  BOOL = 0,  // one byte, 0 or 1
  U8 = 1,
  S8 = 2,
  U16 = 3,
  S16 = 4,
  S32 = 5,
  U32 = 6,
  F16 = 7,  // IEEE half, stored as 2 bytes (see floatToHalf/halfToFloat)
  F32 = 8,
};
inline constexpr unsigned kNumTypes = 9;

std::size_t sizeOf(Type type) noexcept;
std::string_view toString(Type type) noexcept;          // "F32"
std::optional<Type> typeFromString(std::string_view name) noexcept;
bool isFloatingPoint(Type type) noexcept;
bool isValidType(std::uint8_t raw) noexcept;

// IEEE binary16 conversions (round to nearest even), for host code that fills
// or checks F16 tensors without depending on Eigen.
std::uint16_t floatToHalf(float value) noexcept;
float halfToFloat(std::uint16_t bits) noexcept;

using Shape = std::vector<std::size_t>;
// Product of the dimensions (1 for a scalar of rank 0).
std::size_t numElementsOf(const Shape &shape) noexcept;

}  // namespace hwsim
