// Slice and Pad whose starts, steps, axes, pads or constant_value are
// computed at run time. The output shape is the one the model declares (ONNX
// requires the operands to agree with it); the operands move the window, so
// the input positions each output position reads are computed on the device
// from them, one axis at a time, and picked with hwsim's Gather.
#pragma once

#include <onnx/onnx_pb.h>

#include "onnx/context.hpp"

namespace mrt::onnx {

enum class PadMode { Constant, Edge, Reflect };

// Slice (opset 10+) with any of starts, ends, axes, steps computed at run time.
void lowerRuntimeSlice(LoweringContext &ctx, const ::onnx::NodeProto &node);
// Pad (opset 11+) with pads or constant_value computed at run time (axes constant).
void lowerRuntimePad(LoweringContext &ctx, const ::onnx::NodeProto &node, PadMode mode);

}  // namespace mrt::onnx
