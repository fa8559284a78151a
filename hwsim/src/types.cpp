#include "hwsim/types.hpp"

#include <array>
#include <cstring>

#include <Eigen/Core>

namespace hwsim {

namespace {
constexpr std::array<std::string_view, kNumTypes> kNames = {"BOOL", "U8",  "S8",  "U16", "S16",
                                                            "S32",  "U32", "F16", "F32"};
constexpr std::array<std::size_t, kNumTypes> kSizes = {1, 1, 1, 2, 2, 4, 4, 2, 4};
}  // namespace

std::size_t sizeOf(Type type) noexcept { return kSizes[static_cast<std::size_t>(type) % kNumTypes]; }

std::string_view toString(Type type) noexcept {
  auto i = static_cast<std::size_t>(type);
  return i < kNumTypes ? kNames[i] : std::string_view("?");
}

std::optional<Type> typeFromString(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kNumTypes; ++i) {
    if (kNames[i] == name) return static_cast<Type>(i);
  }
  return std::nullopt;
}

bool isFloatingPoint(Type type) noexcept { return type == Type::F16 || type == Type::F32; }
bool isValidType(std::uint8_t raw) noexcept { return raw < kNumTypes; }

std::uint16_t floatToHalf(float value) noexcept {
  return Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(value));
}

float halfToFloat(std::uint16_t bits) noexcept {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(bits));
}

std::size_t numElementsOf(const Shape &shape) noexcept {
  std::size_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

}  // namespace hwsim
