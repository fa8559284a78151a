// An ONNX TensorProto file (the test data ONNX models ship with) as the bytes
// of a device tensor, decoded and typed as the frontend reads constants.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hwsim/types.hpp>

namespace mrt::onnx {

// The tensor in the file at `path` as `elements` values of `type`. Throws
// mrt::Error naming the path: NotFound "no such file"; InvalidArgument for
// a path that is not a regular file, a file that is not a TensorProto, an
// element type whose device type is not `type` (INT64 feeds S32: hwsim has
// no 64-bit types), another element count, or a value `type` cannot hold.
std::vector<std::uint8_t> readTensorFile(const std::string &path, hwsim::Type type, std::uint64_t elements);

}  // namespace mrt::onnx
