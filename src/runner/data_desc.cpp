#include "runner/data_desc.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mrt {

DataDesc::DataDesc(std::string tensor_name, std::int64_t size_bytes, std::vector<std::int64_t> dims,
                   popef::DataType type, bool has_tensor_data)
    : name(std::move(tensor_name)),
      size_in_bytes(size_bytes),
      shape(std::move(dims)),
      data_type(type),
      popef_contains_tensor_data(has_tensor_data) {}

DataDesc DataDesc::fromAnchor(const popef::Anchor &anchor, bool popef_contains_tensor_data) {
  const popef::TensorInfo &info = anchor.tensorInfo();
  return DataDesc(anchor.name(), info.sizeInBytes(), info.shape(), info.dataType(),
                  popef_contains_tensor_data);
}

std::string DataDesc::toString() const {
  return fmt::format("{}: {}[{}] ({} bytes){}", name, popef::toString(data_type),
                     fmt::join(shape, ","), size_in_bytes,
                     popef_contains_tensor_data ? ", has TensorData" : "");
}

}  // namespace mrt
