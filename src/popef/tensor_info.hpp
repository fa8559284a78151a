// popef::DataType and popef::TensorInfo: the element type and shape of a
// tensor, as the seeds' popef::TensorInfo (sizeInBytes() sizes anchors,
// queues and TensorData blobs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mrt::popef {

// The numbering is part of the file format (docs/popef.md) and of the C API
// (mrt_data_type): only append.
enum class DataType : std::uint8_t { BOOL, U8, S8, U16, S16, S32, U32, S64, U64, F16, F32, F64 };

inline constexpr std::size_t kNumDataTypes = 12;

// Bytes per element: 1 for BOOL/U8/S8, 2 for U16/S16/F16, 4, 8.
std::size_t elementSize(DataType type) noexcept;
// "F32", "BOOL", ...: the names used by the tools and in error messages.
std::string_view toString(DataType type) noexcept;
std::optional<DataType> dataTypeFromString(std::string_view name) noexcept;
// DataType for a raw enumerator value read from a file; nullopt if unknown.
std::optional<DataType> dataTypeFromValue(std::uint64_t value) noexcept;

class TensorInfo {
 public:
  using ShapeDimType = std::int64_t;

  TensorInfo() = default;  // a scalar F32
  // Throws mrt::Error(InvalidArgument) for a negative dimension or a size
  // in bytes that does not fit in int64.
  TensorInfo(DataType dataType, std::vector<ShapeDimType> shape);

  DataType dataType() const noexcept { return dataType_; }
  const std::vector<ShapeDimType> &shape() const noexcept { return shape_; }
  std::int64_t numElements() const noexcept { return numElements_; }
  std::int64_t sizeInBytes() const noexcept { return sizeInBytes_; }

  // "F32[2,16]"
  std::string toString() const;

  friend bool operator==(const TensorInfo &a, const TensorInfo &b) noexcept {
    return a.dataType_ == b.dataType_ && a.shape_ == b.shape_;
  }

 private:
  DataType dataType_ = DataType::F32;
  std::vector<ShapeDimType> shape_;
  std::int64_t numElements_ = 1;
  std::int64_t sizeInBytes_ = 4;
};

}  // namespace mrt::popef
