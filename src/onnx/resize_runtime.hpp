// Resize and Upsample with scales computed at run time (resize_runtime.cpp);
// constant scales and sizes are ops_resize.cpp's.
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "onnx/context.hpp"

namespace mrt::onnx {

enum class ResizeMode { Nearest, Linear, Cubic };

// The node resized by the run-time scales of input `scalesInput` to its
// declared output shape, with these coordinate transform and nearest
// rounding (names as Resize's attributes give them).
void resizeByRuntimeScales(LoweringContext &ctx, const ::onnx::NodeProto &node, ResizeMode mode,
                           const std::string &transform, const std::string &nearestMode, int scalesInput);

}  // namespace mrt::onnx
