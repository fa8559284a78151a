// The ONNX frontend's entry points for the layers above (capi), free of
// protobuf and ONNX headers so only src/onnx/ compiles against them.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

#include "onnx/onnx_options.hpp"
#include "popef/model.hpp"

namespace mrt::onnx {

// readModelFile / readModelMemory (reader.hpp), then compileOnnx (compile.hpp).
std::shared_ptr<popef::Model> compileOnnxFile(const std::filesystem::path &path, const OnnxOptions &options);
std::shared_ptr<popef::Model> compileOnnxMemory(const void *data, std::size_t size, const OnnxOptions &options);

}  // namespace mrt::onnx
