// Shapes: fixing the dynamic dimensions of a model's inputs, ONNX shape
// inference, and the shape rules of the view operators, shared by constant
// folding (host) and lowering (device) so both agree on every result shape.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "onnx/host_tensor.hpp"

namespace mrt::onnx {

// Gives the inputs named in `inputShapes` those shapes, every other dynamic
// input dimension (symbolic, 0 or -1) the value batchSize, then runs
// onnx::shape_inference::InferShapes so value_info holds what ONNX can
// infer. Throws mrt::Error: InvalidArgument for an override naming no graph
// input or of the wrong rank, CorruptModel naming the problem when inference
// finds the model inconsistent.
// checkBeforeInference(model, limitBytes, target) runs between the two steps:
// libonnx's inference functions trust what they read, so sizes and the
// attributes that crash them are checked first.
void resolveShapes(::onnx::ModelProto &model, std::int64_t batchSize,
                   const std::map<std::string, std::vector<std::int64_t>> &inputShapes, std::uint64_t limitBytes,
                   const std::string &target);

// What Debian's libonnx (1.12) shape inference does not survive, refused
// with mrt::Error naming the tensor or node: inputs and initializers beyond
// limitBytes (ResourceExhausted; inference would build their shapes, e.g. a
// ConstantOfShape of a 2^31-element shape input), strides, dilations or
// kernel_shape below 1 (a division by zero), a LayerNormalization axis
// outside [-rank, rank) (an out-of-bounds read) (CorruptModel); and strides
// or dilations above 2^24, more than the device's vertices take
// (Unimplemented).
void checkBeforeInference(const ::onnx::ModelProto &model, std::uint64_t limitBytes, const std::string &target);

// Gives every Conv, ConvTranspose, ConvInteger and QLinearConv without a
// kernel_shape attribute the one its weights' shape implies, when that shape
// is known before inference (an initializer or a graph input): libonnx takes
// the kernel's rank from the weights without comparing it with the input's,
// and reads past the end of its arrays when they differ; with the attribute
// it checks them.
void addKernelShapes(::onnx::ModelProto &model);

// After inference: each input's element type, where known, must be one its
// schema allows, and the inputs a node binds to one type parameter of its
// schema (Sum's T, Add's T...) must have one element type;
// libonnx's inference (errors not raised) lets a mismatch through to the
// device ops. mrt::Error(CorruptModel) naming the node, both inputs and types.
void checkInputTypes(const ::onnx::ModelProto &model);

// Refuses, with mrt::Error(ResourceExhausted) naming the tensor, its shape
// and the target, any tensor whose shape is known (inputs, outputs,
// initializers, value_info of the graph) and which needs more than
// limitBytes, the memory of the whole target: such shapes (a corrupt or
// hostile model's) never reach the host allocations of folding and lowering.
// A negative dimension (e.g. inferred from an Expand to a negative shape) is
// mrt::Error(CorruptModel).
void checkTensorSizes(const ::onnx::GraphProto &graph, std::uint64_t limitBytes, const std::string &target);

// The element type and static dimensions of a graph input or output;
// throws mrt::Error(Unimplemented) naming it when a dimension is still unknown.
Dims staticDims(const ::onnx::ValueInfoProto &info);
// The same without throwing: nullopt unless `info` is a tensor of known shape.
std::optional<Dims> knownDims(const ::onnx::ValueInfoProto &info);

// ---- rules of the view operators (`what` names the node in messages) ----
// Reshape: 0 copies the input's dimension (unless allowzero), one -1 is inferred.
Dims reshapeDims(const Dims &in, const std::vector<std::int64_t> &shape, bool allowZero, const std::string &what);
// Flatten at axis: [prod(in[:axis]), prod(in[axis:])].
Dims flattenDims(const Dims &in, std::int64_t axis, const std::string &what);
// Squeeze the given axes (all dimensions of 1 when axes is empty).
Dims squeezeDims(const Dims &in, const std::vector<std::int64_t> &axes, const std::string &what);
Dims unsqueezeDims(const Dims &in, const std::vector<std::int64_t> &axes, const std::string &what);

// One axis of a Slice: the input indices it takes, in order.
struct AxisTake {
  std::size_t axis = 0;
  std::vector<std::int64_t> indices;
};
// Slice's starts/ends/axes/steps (clamped the ONNX way) as the indices taken
// along each sliced axis.
std::vector<AxisTake> sliceTakes(const Dims &in, const std::vector<std::int64_t> &starts,
                                 const std::vector<std::int64_t> &ends, const std::vector<std::int64_t> &axes,
                                 const std::vector<std::int64_t> &steps, const std::string &what);

}  // namespace mrt::onnx
