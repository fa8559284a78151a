#include "popef/tensor_info.hpp"

#include <array>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"

namespace mrt::popef {

namespace {

struct DataTypeTraits {
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DataTypeTraits, kNumDataTypes> kTraits{{
    {"BOOL", 1}, {"U8", 1}, {"S8", 1}, {"U16", 2}, {"S16", 2}, {"S32", 4},
    {"U32", 4}, {"S64", 8}, {"U64", 8}, {"F16", 2}, {"F32", 4}, {"F64", 8},
}};

}  // namespace

std::size_t elementSize(DataType type) noexcept {
  return kTraits[static_cast<std::size_t>(type)].size;
}

std::string_view toString(DataType type) noexcept {
  return kTraits[static_cast<std::size_t>(type)].name;
}

std::optional<DataType> dataTypeFromString(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kTraits.size(); ++i) {
    if (kTraits[i].name == name) return static_cast<DataType>(i);
  }
  return std::nullopt;
}

std::optional<DataType> dataTypeFromValue(std::uint64_t value) noexcept {
  if (value >= kNumDataTypes) return std::nullopt;
  return static_cast<DataType>(value);
}

TensorInfo::TensorInfo(DataType dataType, std::vector<ShapeDimType> shape)
    : dataType_(dataType), shape_(std::move(shape)) {
  if (!dataTypeFromValue(static_cast<std::uint64_t>(dataType_))) {
    throw Error(ErrorCode::InvalidArgument, "unknown data type {}",
                static_cast<unsigned>(dataType_));
  }
  // Sizes are int64 everywhere (the seeds' ShapeDimType), so reject shapes
  // whose byte size would overflow instead of wrapping around.
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  const auto elementBytes = static_cast<std::int64_t>(elementSize(dataType_));
  std::int64_t elements = 1;
  for (const ShapeDimType dim : shape_) {
    if (dim < 0) {
      throw Error(ErrorCode::InvalidArgument, "tensor shape [{}] has a negative dimension",
                  fmt::join(shape_, ","));
    }
    if (dim != 0 && elements > kMax / elementBytes / dim) {
      throw Error(ErrorCode::InvalidArgument, "tensor shape [{}] of {} is too large",
                  fmt::join(shape_, ","), popef::toString(dataType_));
    }
    elements *= dim;
  }
  numElements_ = elements;
  sizeInBytes_ = elements * elementBytes;
}

std::string TensorInfo::toString() const {
  return fmt::format("{}[{}]", popef::toString(dataType_), fmt::join(shape_, ","));
}

}  // namespace mrt::popef
