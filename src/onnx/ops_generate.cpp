// Operators that generate a tensor from shapes and scalars rather than
// transform their input's elements: ConstantOfShape with a shape computed at
// run time (its constant-shape form is folded), EyeLike, Range with run-time
// start or delta, and the Hann, Hamming and Blackman windows. Results fixed
// at compile time are host constants.
#include <cmath>

#include "onnx/device_ops.hpp"
#include "onnx/registry.hpp"

namespace mrt::onnx {
namespace {

using ::onnx::NodeProto;
using TP = ::onnx::TensorProto;

// The value attribute's element everywhere, in the declared output shape.
void lowerConstantOfShape(LoweringContext &ctx, const NodeProto &node) {
  const Dims dims = declaredOutputDims(ctx, node, 0, "ConstantOfShape's shape");
  const auto *attr = findAttribute(node, "value");
  const HostTensor value = attr ? fromProto(attr->t()) : HostTensor{TP::FLOAT, {1}, {0.0}};
  if (value.numElements() != 1) {
    throw Error(ErrorCode::CorruptModel, "{}: value has {} elements, not 1", nodeLabel(node), value.numElements());
  }
  ctx.setHost(node.output(0), HostTensor{value.type, dims, std::vector<double>(numElements(dims), value.values[0])});
}

// Ones on the k-th diagonal of a matrix shaped like the input (only its shape
// is read), of type dtype (the input's when absent).
void lowerEyeLike(LoweringContext &ctx, const NodeProto &node) {
  const Value &x = ctx.value(node.input(0));
  const Dims dims = x.dims();
  if (dims.size() != 2) throw Error(ErrorCode::CorruptModel, "{}: input of rank {}, not 2", nodeLabel(node), dims.size());
  const std::int64_t k = attrInt(node, "k", 0);
  HostTensor eye{static_cast<std::int32_t>(attrInt(node, "dtype", x.type)), dims,
                 std::vector<double>(numElements(dims), 0.0)};
  for (std::int64_t r = 0; r < dims[0]; ++r) {
    const std::int64_t c = r + k;
    if (c >= 0 && c < dims[1]) eye.values[static_cast<std::size_t>(r * dims[1] + c)] = 1.0;
  }
  ctx.setHost(node.output(0), std::move(eye));
}

// start + i * delta for i < n, n the declared output length (ONNX requires
// it to be max(ceil((limit - start) / delta), 0)); limit is then not read.
void lowerRange(LoweringContext &ctx, const NodeProto &node) {
  const Dims dims = declaredOutputDims(ctx, node, 0, "Range's length");
  if (dims.size() != 1) throw Error(ErrorCode::CorruptModel, "{}: output of rank {}, not 1", nodeLabel(node), dims.size());
  const std::int32_t type = ctx.value(node.input(0)).type;
  HostTensor iota{type, dims, {}};
  for (std::int64_t i = 0; i < dims[0]; ++i) iota.values.push_back(static_cast<double>(i));
  const std::string &out = node.output(0);
  const std::string iotaName = ctx.uniqueName(out + "/iota"), steps = ctx.uniqueName(out + "/steps");
  ctx.setHost(iotaName, std::move(iota));
  ctx.setDevice(steps, broadcastBinary(ctx, "Mul", iotaName, node.input(2), steps), type);
  ctx.setDevice(out, broadcastBinary(ctx, "Add", steps, node.input(0), out), type);
}

// HannWindow, HammingWindow, BlackmanWindow: sum_k a_k cos(2 pi k n / N) for
// n < size, N = size (periodic, the default) or size - 1 (symmetric), of
// type output_datatype. A size computed at run time is the declared length.
LowerFn windowOp(std::vector<double> a) {
  return [a](LoweringContext &ctx, const NodeProto &node) {
    std::int64_t size = 0;
    if (ctx.isHost(node.input(0))) {
      size = saturatingInt64(ctx.host(node.input(0)).values.at(0));
    } else {
      const Dims dims = declaredOutputDims(ctx, node, 0, node.op_type() + "'s size");
      if (dims.size() != 1) throw Error(ErrorCode::CorruptModel, "{}: output of rank {}, not 1", nodeLabel(node), dims.size());
      size = dims[0];
    }
    if (size <= 0) throw UnsupportedNode(node.op_type() + " of size " + std::to_string(size));
    const double n = static_cast<double>(attrInt(node, "periodic", 1) != 0 ? size : size - 1);
    HostTensor w{static_cast<std::int32_t>(attrInt(node, "output_datatype", TP::FLOAT)), {size}, {}};
    for (std::int64_t i = 0; i < size; ++i) {
      double v = 0;
      for (std::size_t k = 0; k < a.size(); ++k) v += a[k] * std::cos(2 * M_PI * static_cast<double>(k * i) / n);
      w.values.push_back(v);
    }
    convertValues(w.values, w.type);
    ctx.setHost(node.output(0), std::move(w));
  };
}

}  // namespace

void registerGenerateOps(OpRegistry &registry) {
  registry.add("HannWindow", windowOp({0.5, -0.5}));
  registry.add("HammingWindow", windowOp({25.0 / 46.0, -21.0 / 46.0}));
  registry.add("BlackmanWindow", windowOp({0.42, -0.5, 0.08}));
  registry.add("ConstantOfShape", lowerConstantOfShape);
  registry.add("EyeLike", lowerEyeLike);
  registry.add("Range", lowerRange);
}

}  // namespace mrt::onnx
