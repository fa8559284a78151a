// Reading ONNX models: protobuf parsing, external data and the ONNX checker.
// Every failure is mrt::Error(CorruptModel) (NotFound for a missing file)
// naming what is wrong, so untrusted files never crash the caller.
#pragma once

#include <cstddef>
#include <filesystem>

#include <onnx/onnx_pb.h>

namespace mrt::onnx {

// The model at `path`; tensors stored as external data are read from files
// relative to the model's directory (never outside it) and inlined.
::onnx::ModelProto readModelFile(const std::filesystem::path &path);
// A model held in memory; it may not use external data (there is no
// directory to read it from).
::onnx::ModelProto readModelMemory(const void *data, std::size_t size);

}  // namespace mrt::onnx
