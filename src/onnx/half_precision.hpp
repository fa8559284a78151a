// The f16 precision option: the model rewritten, as ONNX, to compute FLOAT
// as FLOAT16 before it is lowered, so every operator sees ordinary F16
// tensors (hwsim's matmul and convolution accumulate F16 in F32).
#pragma once

#include <onnx/onnx_pb.h>

namespace mrt::onnx {

// Converts FLOAT initializers and FLOAT tensor attributes (Constant,
// ConstantOfShape) to FLOAT16 and Cast/CastLike targets of FLOAT to
// FLOAT16; the model's FLOAT inputs and outputs keep their type, cast at
// the edges by Cast nodes this adds. Recorded intermediate shapes and types
// are dropped (shape inference recomputes them).
void convertToHalfPrecision(::onnx::ModelProto &model);

}  // namespace mrt::onnx
