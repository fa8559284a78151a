// hwsim::ops: a small PopLibs-like layer that builds whole operations out of
// vertices, spreading work over a range of tiles and inserting the exchange
// copies that bring operands to the tiles of the vertices using them. Each
// function appends its programs to `prog` and returns the result tensor
// (a new variable) unless it works in place. Example models (add_one, mlp,
// stateful, conditional, remote_buffer, pipeline2) are built with these.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "hwsim/graph.hpp"
#include "hwsim/program.hpp"

namespace hwsim::ops {

// Tiles an operation may use: [first, first + count); count 0 = to the last tile.
struct TileRange {
  unsigned first = 0;
  unsigned count = 0;
};

// A new variable spread linearly over the range, in chunks of whole rows
// (grain = last dimension) so row-wise ops stay on one tile.
Tensor createTensor(Graph &graph, Type type, const Shape &shape, std::string_view name, TileRange tiles = {});

// Returns t if it is already laid out exactly like `layout`; otherwise a new
// variable with layout's tile mapping and a Copy of t into it appended to prog.
Tensor localize(Graph &graph, program::Sequence &prog, const Tensor &t, const Tensor &layout, std::string_view name);

// out = codelet(in) elementwise (Neg, Exp, Relu, Cast, ...). outType defaults to in's type.
Tensor unary(Graph &graph, program::Sequence &prog, std::string_view codelet, const Tensor &in,
             std::string_view name, std::optional<Type> outType = std::nullopt);
// out = codelet(a, b) elementwise; b has a's shape, one element, or a's last
// dimension. Comparisons give BOOL.
Tensor binary(Graph &graph, program::Sequence &prog, std::string_view codelet, const Tensor &a, const Tensor &b,
              std::string_view name);
// a = codelet(a, b) in place (a must be a variable laid out by createTensor or similar).
void binaryInPlace(Graph &graph, program::Sequence &prog, std::string_view codelet, const Tensor &a, const Tensor &b);
void fill(Graph &graph, program::Sequence &prog, const Tensor &t, double value);

// [M,K] x [K,N] -> [M,N] (outType F32, or F16 for F16 inputs). The output is
// split in blocks over a grid of tiles; each tile gets copies of its rows of a
// and columns of b (unless they already live there contiguously), and one
// MatMul vertex multiplies the whole block.
//
// rhsLoad, when given, says b holds weights: values written only by rhsLoad
// (a program that runs before prog, such as the model's Load program, with
// b's writes already appended to it), never by prog. The copies of b's blocks
// to the tiles that multiply them are then appended to rhsLoad, so they are
// made once per load and each run of prog exchanges only a; the plan counts
// no exchange of b. Lay such operands out with rhsPreloaded = true below.
Tensor matMul(Graph &graph, program::Sequence &prog, const Tensor &a, const Tensor &b, std::string_view name,
              TileRange tiles = {}, Type outType = Type::F32, program::Sequence *rhsLoad = nullptr);
// Like poplin::createMatMulInputLhs/Rhs: a new [M,K] (Lhs) or [K,N] (Rhs)
// variable laid out the way matMul over the same range tiles its blocks, so
// the matMul uses it in place instead of exchanging it every run (weights
// streamed in once by a Load program stay where the multiply needs them).
// rhsPreloaded: lay out for a matMul given an rhsLoad program (its plan differs).
Tensor createMatMulInputLhs(Graph &graph, Type type, const Shape &aShape, const Shape &bShape, std::string_view name,
                            TileRange tiles = {}, bool rhsPreloaded = false);
Tensor createMatMulInputRhs(Graph &graph, Type type, const Shape &aShape, const Shape &bShape, std::string_view name,
                            TileRange tiles = {}, bool rhsPreloaded = false);

// Reduce (ReduceSum/Max/Min/Mean/Prod) over `axes` (empty: all). Big enough
// reductions run in two stages over the range's tiles (partials of slices
// of the outermost reduced dimension, then a reduce of the partials, spread
// by columns); others on the first tile of the range (docs/hwsim.md).
Tensor reduce(Graph &graph, program::Sequence &prog, std::string_view codelet, const Tensor &in,
              const std::vector<std::size_t> &axes, std::string_view name, TileRange tiles = {});
// ONNX Gather with run-time integer indices, on the first tile of the range:
// in.shape[:axis] + indices.shape + in.shape[axis+1:] (a rank-0 result as [1]).
Tensor gather(Graph &graph, program::Sequence &prog, const Tensor &in, const Tensor &indices, std::size_t axis,
              std::string_view name, TileRange tiles = {});
// ONNX GatherElements: indices of in's rank, the result of indices' shape.
Tensor gatherElements(Graph &graph, program::Sequence &prog, const Tensor &in, const Tensor &indices, std::size_t axis,
                      std::string_view name, TileRange tiles = {});
// ONNX ScatterElements: a copy of in with updates (indices' shape, indices
// of in's rank) written along axis, added or multiplied by `reduction`; an
// out-of-range index drops its update. On the first tile of the range.
enum class ScatterReduction { None = 0, Add = 1, Mul = 2 };
Tensor scatterElements(Graph &graph, program::Sequence &prog, const Tensor &in, const Tensor &indices,
                       const Tensor &updates, std::size_t axis, ScatterReduction reduction, std::string_view name,
                       TileRange tiles = {});
// Softmax / ArgMax over the last dimension, rows spread over tiles.
Tensor softmax(Graph &graph, program::Sequence &prog, const Tensor &in, std::string_view name, TileRange tiles = {});
Tensor argMax(Graph &graph, program::Sequence &prog, const Tensor &in, std::string_view name, TileRange tiles = {});

// ---- Convolution and pooling (ops_conv.cpp): ONNX semantics on [N, C, *spatial]
// tensors with 1 or 2 spatial dimensions (rank 3 or 4). In every list below an
// empty vector means the default for each spatial dimension (stride 1, pad 0,
// dilation 1); otherwise it has one value per spatial dimension.
struct ConvParams {
  std::vector<std::size_t> strides;
  std::vector<std::size_t> padsBegin;  // ONNX pads[0 .. S)
  std::vector<std::size_t> padsEnd;    // ONNX pads[S .. 2S)
  std::vector<std::size_t> dilations;
  std::size_t group = 1;               // group == C == M: depthwise
};
// [N, M, *out] for in [N, C, *spatial] and weights [M, C/group, *kernel];
// throws InvalidArgument naming the mismatch.
Shape convOutputShape(const Shape &inShape, const Shape &weightShape, const ConvParams &params);
// Convolution (no bias: add it per channel afterwards). The output is split in
// blocks of images x output channels (whole groups when group > 1) x rows of
// the first spatial dimension over the range's tiles, chosen within tile
// memory for the fewest modelled cycles; each tile gets a copy of the input
// rows (with their halo) and channels it needs and its weights, unless they
// already live there, and one Conv vertex computes its block. outType: F32, or
// F16 for F16 inputs.
//
// weightsLoad, when given, says weights are written only by that program
// (the model's Load, as matMul's rhsLoad): the copies of the weights to the
// tiles of a block that do not hold them are appended to it, made once per
// load, and the plan counts no exchange of weights.
Tensor conv(Graph &graph, program::Sequence &prog, const Tensor &in, const Tensor &weights, const ConvParams &params,
            std::string_view name, TileRange tiles = {}, Type outType = Type::F32,
            program::Sequence *weightsLoad = nullptr);
// Like createMatMulInputRhs: new weights [M, C/group, *kernel] laid out the way
// conv over the same input shape, params and range uses them, so weights
// loaded once stay where the convolution needs them (no exchange for the
// tiles holding each output-channel block; other tiles of the block get copies).
// weightsPreloaded: lay out for a conv given a weightsLoad program.
Tensor createConvWeights(Graph &graph, Type type, const Shape &inShape, const Shape &weightShape,
                         const ConvParams &params, std::string_view name, TileRange tiles = {},
                         bool weightsPreloaded = false);

struct PoolParams {
  std::vector<std::size_t> kernelShape;  // required: one per spatial dimension
  std::vector<std::size_t> strides;
  std::vector<std::size_t> padsBegin;
  std::vector<std::size_t> padsEnd;
  std::vector<std::size_t> dilations;
  bool countIncludePad = false;  // AveragePool: divide by the window size including padding
  bool ceilMode = false;         // output size rounded up (a last window starting in the end padding is dropped, as ONNX Runtime)
};
// [N, C, *out] for in [N, C, *spatial].
Shape poolOutputShape(const Shape &inShape, const PoolParams &params);
// codelet: "MaxPool" or "AveragePool" (F16/F32). Work is split over the range's
// tiles by images x channels; each tile gets a copy of its channels of in.
// Max pads with -inf; average excludes padding unless countIncludePad.
Tensor pool(Graph &graph, program::Sequence &prog, std::string_view codelet, const Tensor &in, const PoolParams &params,
            std::string_view name, TileRange tiles = {});

}  // namespace hwsim::ops
