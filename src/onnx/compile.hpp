// compileOnnx: an ONNX model to a PopEF model for the simulated IPU. The
// pipeline: shapes resolved and inferred (shapes.hpp), then each node in
// graph order is folded on the host (fold.hpp) or lowered by its operator
// (registry.hpp) into one hwsim graph with a Load program (program 0: the
// initializers as TensorData) and a Main program (program 1: inputs in,
// compute, outputs out); popef::buildModel compiles and packages it.
#pragma once

#include <memory>

#include <onnx/onnx_pb.h>

#include "onnx/onnx_options.hpp"
#include "popef/model.hpp"

namespace mrt::onnx {

// Throws mrt::Error: CorruptModel for an inconsistent model, Unimplemented
// listing every unsupported node (name, op type, why) in one message,
// ResourceExhausted when the graph does not fit the target (naming what).
std::shared_ptr<popef::Model> compileOnnx(::onnx::ModelProto model, const OnnxOptions &options);

}  // namespace mrt::onnx
