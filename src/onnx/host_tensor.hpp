// HostTensor: a constant the frontend knows on the host (an initializer, a
// Constant, or the result of folding), with ONNX's element type. Values are
// held as doubles: exact for every integer a shape computation produces and
// for float weights, and one representation keeps the folding code single.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <hwsim/types.hpp>
#include <onnx/onnx_pb.h>

namespace mrt::onnx {

using Dims = std::vector<std::int64_t>;

struct HostTensor {
  std::int32_t type = ::onnx::TensorProto::FLOAT;  // a TensorProto::DataType
  Dims dims;
  std::vector<double> values;  // row-major, numElements(dims) of them

  std::size_t numElements() const { return values.size(); }
};

std::size_t numElements(const Dims &dims);
// A host value as an integer. Values are held as doubles, in which INT64_MAX
// (Slice's "to the end") rounds up to 2^63, and a float input (OneHot's
// depth) may hold anything: values beyond int64 saturate and NaN is 0, since
// converting them directly is undefined.
std::int64_t saturatingInt64(double v);
std::string toString(const Dims &dims);  // "[1, 3, 224, 224]"
hwsim::Shape toShape(const Dims &dims);
Dims toDims(const hwsim::Shape &shape);
// "FLOAT", "INT64", ... (or the number for an unknown type).
std::string typeName(std::int32_t onnxType);

// The values of an initializer or Constant; throws mrt::Error(CorruptModel)
// naming the tensor when its data does not match its type and dimensions,
// Unimplemented for element types the frontend does not read (strings, complex).
HostTensor fromProto(const ::onnx::TensorProto &tensor);

// The device type of an ONNX element type: hwsim has no 64-bit types, so
// INT64 is narrowed to S32, UINT64 to U32 and DOUBLE to F32 (computed in
// single precision); nullopt for strings, BFLOAT16 and complex numbers.
std::optional<hwsim::Type> deviceType(std::int32_t onnxType);

// t's values in `type`'s host representation (F16 as half bits, BOOL 0/1).
// Throws mrt::Error(Unimplemented) naming `name` for an integer that does not
// fit the device type (an INT64 beyond S32).
std::vector<std::uint8_t> toDeviceBytes(const HostTensor &t, hwsim::Type type, const std::string &name);

// Rounds every value the way storing it in `onnxType` would (integers
// truncate toward zero, BOOL is x != 0, FLOAT rounds to single precision).
void convertValues(std::vector<double> &values, std::int32_t onnxType);

// The transpose of the rows x cols matrix stored in t's values from element
// `offset` on: a [cols, rows] tensor of t's type (weights laid out for a
// multiply by the lhs, e.g. Gemm's transB and the recurrent ops' W and R).
HostTensor transposedMatrix(const HostTensor &t, std::size_t offset, std::int64_t rows, std::int64_t cols);

// NumPy broadcasting of two shapes; nullopt if they do not broadcast.
std::optional<Dims> broadcastDims(const Dims &a, const Dims &b);
// t's values broadcast to `to` (which broadcastDims(t.dims, to) == to).
HostTensor broadcastTo(const HostTensor &t, const Dims &to);

// Normalizes a possibly negative axis of a rank-`rank` tensor; throws
// mrt::Error(CorruptModel) naming `what` when it is out of range.
std::size_t normalizeAxis(std::int64_t axis, std::size_t rank, const std::string &what);

}  // namespace mrt::onnx
