// DataDesc (seed 001): the name, size, shape and element type of one input
// or output of a ModelRunner, and whether the model carries TensorData for
// it (then the input is optional: the model's bytes are used by default).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "popef/anchor.hpp"
#include "popef/tensor_info.hpp"

namespace mrt {

struct DataDesc {
  DataDesc(std::string tensor_name, std::int64_t size_bytes, std::vector<std::int64_t> dims,
           popef::DataType type, bool has_tensor_data = false);

  // The description of an anchor: its name and TensorInfo.
  static DataDesc fromAnchor(const popef::Anchor &anchor, bool popef_contains_tensor_data = false);

  // "x: F32[2,16] (128 bytes)" plus ", has TensorData" when set.
  std::string toString() const;

  friend bool operator==(const DataDesc &, const DataDesc &) = default;

  std::string name;
  std::int64_t size_in_bytes;
  std::vector<std::int64_t> shape;
  popef::DataType data_type;
  bool popef_contains_tensor_data;
};

using InputDesc = DataDesc;
using OutputDesc = DataDesc;

}  // namespace mrt
