// The built-in codelet library. Graph::addVertex takes one of these names;
// fields are connected by name and attributes set with setInitialValue.
// All of a vertex's tensors must be on the vertex's tile (checked by the
// compiler). Math runs on the host through Eigen.
//
// Elementwise unary     fields in, out (same number of elements)
//   Neg Abs Relu        numeric types (not BOOL); out type == in type
//   Exp Log Sqrt Sigmoid Tanh   F16, F32
//   Not                 BOOL -> BOOL
//   Cast                any -> any (float->int truncates toward zero and
//                       saturates, NaN -> 0; to BOOL is x != 0)
// Elementwise binary    fields in0, in1, out; in1 has in0's number of elements,
//                       or 1 (scalar broadcast), or in0's last dimension (row
//                       broadcast over the leading dimensions). out may alias in0.
//   Add Sub Mul Div Max Min Pow   numeric, out type == in type. Integer
//                       arithmetic wraps; integer division by zero gives 0.
//   Equal NotEqual Less LessEqual Greater GreaterEqual   any type -> BOOL out
//   And Or              BOOL -> BOOL
// Fill                  field out; attribute "value" (default 0)
// MatMul                fields a [M,K], b [K,N], out [M,N]; F32 x F32 -> F32, or
//                       F16 x F16 -> F16 or F32 with F32 accumulation;
//                       attribute "accumulate" (1: out += a.b)
// ReduceSum ReduceMax ReduceMin ReduceMean   fields in, out; attribute "axes"
//                       (dimensions of in to reduce; empty or absent = all);
//                       out holds the kept dimensions in order; out type == in type
// Softmax               fields in, out (F16/F32) over the last dimension
// ArgMax                fields in [..., N], out (S32 or U32) with one index per row
//                       (the first maximum)
// Increment             field counter (in/out); attribute "step" (default 1):
//                       counter += step, for loop counters
// Conv                  fields in [N,C,*s], weights [M,C/group,*k], out [N,M,*o]
//                       (in/out), 1 or 2 spatial dims (rank 3 or 4), ONNX Conv with
//                       zero padding. Attributes "strides" (one per spatial dim),
//                       "pads" (begins then ends), "dilations" (empty = 1s / 0s),
//                       "group" (1; C == M == group: depthwise), "accumulate"
//                       (1: out += conv). Types as MatMul. out's spatial dims must
//                       be floor((s + pads - dilation*(k-1) - 1) / stride) + 1.
// MaxPool AveragePool   fields in [N,C,*s], out [N,C,*o] (F16/F32, same type);
//                       attributes "kernel_shape" (required), "strides", "pads",
//                       "dilations"; AveragePool also "count_include_pad" (0).
//                       Max pads with -inf; average divides by the in-input count,
//                       or with count_include_pad by the count inside the padded
//                       extent. ceil_mode: the caller gives out the rounded-up
//                       size (floor or ceil are accepted); a window with no
//                       element gives -inf (max) or 0 (average).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace hwsim {

// Names of all built-in codelets, in library order.
std::vector<std::string> codeletNames();

// What a binding or tool needs to discover the library: every string is a
// NUL-terminated literal and every array lives as long as the process, so
// they can be lent out through a C API.
enum class FieldDirection : std::uint8_t { In = 0, Out = 1, InOut = 2 };
struct CodeletField {
  const char *name;
  FieldDirection direction;
};
struct CodeletAttribute {
  const char *name;
  const double *defaults;     // nullptr when numDefaults is 0
  std::size_t numDefaults;
};
struct CodeletInfo {
  const char *name;
  const char *description;    // one line: what it computes, the types it takes
  std::vector<CodeletField> fields;
  std::vector<CodeletAttribute> attributes;
};
// Every codelet, in library order (the order of codeletNames()).
const std::vector<CodeletInfo> &codeletInfos();

}  // namespace hwsim
