// `mrt-run --input NAME=file.pb`: an ONNX TensorProto file (the test data of
// the ONNX model zoo and of ONNX's backend tests) as the bytes of a request
// input, so a model compiled with mrt-compile runs on the inputs it ships with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runner/data_desc.hpp"

namespace mrt::run {

// NotFound "--input NAME=PATH: no such file" unless PATH is a regular file
// (a directory opens as a stream, of a nonsense size).
void requireReadableFile(const std::string &name, const std::string &path);

// The tensor in `path` as `desc`'s element type, holding `expectedBytes`.
// Throws mrt::Error naming `name` and `path` when the file is not a
// TensorProto, its element type is not the input's (INT64 may feed an S32
// input: hwsim's integers are 32-bit) or its element count differs.
std::vector<std::byte> readOnnxTensorFile(const std::string &name, const std::string &path, const DataDesc &desc,
                                          std::uint64_t expectedBytes);

}  // namespace mrt::run
