#include "popef/blob_type.hpp"

#include <fmt/format.h>

namespace mrt::popef {

std::string_view toString(BlobType type) noexcept {
  switch (type) {
    case BlobType::Metadata: return "Metadata";
    case BlobType::Executable: return "Executable";
    case BlobType::TensorData: return "TensorData";
    case BlobType::FeedData: return "FeedData";
    case BlobType::Opaque: return "Opaque";
  }
  return "Unknown";
}

std::optional<BlobType> blobTypeFromValue(std::uint32_t value) noexcept {
  if (value < static_cast<std::uint32_t>(BlobType::Metadata) ||
      value > static_cast<std::uint32_t>(BlobType::Opaque)) {
    return std::nullopt;
  }
  return static_cast<BlobType>(value);
}

std::string BlobLocation::describe() const {
  return fmt::format("'{}' blob {} ({}) at byte {}", file, index, toString(type), offset);
}

std::string describe(const std::optional<BlobLocation> &origin, BlobType type) {
  return BlobWhere(origin, type).str();
}

std::string BlobWhere::str() const {
  if (location_ != nullptr) return location_->describe();
  return fmt::format("in-memory {} blob", toString(type_));
}

}  // namespace mrt::popef
