// LoweringContext: the state of lowering one ONNX graph onto an hwsim graph.
// Every ONNX tensor name maps to a Value: a host constant (initializers,
// Constants and everything folded from them) or a device tensor. Constants
// reach the device only when a device op needs them (device()), as TensorData
// anchors loaded by the Load program, or as small graph constants.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <hwsim/graph.hpp>
#include <hwsim/program.hpp>
#include <onnx/onnx_pb.h>

#include "common/error.hpp"
#include "onnx/host_tensor.hpp"
#include "popef/graph_model_builder.hpp"

namespace mrt::onnx {

// Thrown by an operator's lowering for a valid node this frontend cannot
// lower (an attribute value, a type, a run-time operand it needs constant).
// The compiler collects them all into one mrt::Error(Unimplemented).
class UnsupportedNode : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Value {
  std::int32_t type = ::onnx::TensorProto::FLOAT;  // the ONNX element type
  std::optional<HostTensor> host;                  // set for constants
  hwsim::Tensor device;                            // set for run-time values
  Dims dims() const { return host ? host->dims : toDims(device.shape()); }
};

class LoweringContext {
 public:
  LoweringContext(hwsim::Graph &graph, std::int64_t opset);

  hwsim::Graph &graph() { return graph_; }
  hwsim::program::Sequence &main() { return main_; }
  hwsim::program::Sequence &load() { return load_; }
  std::int64_t opset() const { return opset_; }

  bool has(const std::string &name) const { return values_.count(name) != 0; }
  const Value &value(const std::string &name) const;
  // A constant: known on the host, and its device tensor, once made, is
  // written only by the Load program (ops may add copies of it to Load:
  // weights stay on the tiles that use them across runs).
  bool isHost(const std::string &name) const { return value(name).host.has_value(); }
  const HostTensor &host(const std::string &name) const;
  // The device tensor of `name`, materializing a constant on first use.
  // `layout`, if given, creates the variable a TensorData constant is loaded
  // into (e.g. laid out for a matmul); by default createTensor over all tiles.
  using LayoutFn = std::function<hwsim::Tensor(hwsim::Type, const hwsim::Shape &, const std::string &)>;
  hwsim::Tensor device(const std::string &name, const LayoutFn &layout = {});

  void setHost(const std::string &name, HostTensor t);
  void setDevice(const std::string &name, hwsim::Tensor t, std::int32_t onnxType);
  // Marks `name` as the initializer of the same name: it is loaded as
  // TensorData under that name when a device op needs it.
  void markInitializer(const std::string &name) { initializers_.insert(name); }
  // The static shape the model gives `name` (graph outputs and value_info,
  // after ONNX shape inference), when every dimension is known.
  void declareDims(const std::string &name, Dims dims) { declared_[name] = std::move(dims); }
  std::optional<Dims> declaredDims(const std::string &name) const;

  // A new variable over the current tiles (rank 0 handled as one element).
  hwsim::Tensor newTensor(hwsim::Type type, const hwsim::Shape &shape, const std::string &name);
  // The first of the tiles ops use now (where small constants go).
  unsigned firstTile() const { return graph_.defaultTiles().first; }
  // Layers over IPUs: later ops use tiles [first, first + count), and each
  // device value in `live` is copied there in one step per value, so the ops
  // of one IPU read only that IPU's data (a pipeline stage, docs/hwsim.md
  // "Pipelining"): a run-time value by Main, a constant already on the
  // device by Load (once per load).
  void moveToTiles(unsigned first, unsigned count, const std::set<std::string> &live);
  // A device tensor holding `t`: TensorData loaded by Load if it is an
  // initializer or big, a graph constant otherwise.
  hwsim::Tensor deviceConstant(const HostTensor &t, const std::string &name, const LayoutFn &layout = {});
  // A name no stream or anchor uses yet, derived from `base`.
  std::string uniqueName(const std::string &base);

  // The graph's user inputs and outputs become anchors of the Main program.
  void addInput(const std::string &name, std::int32_t onnxType, const Dims &dims);
  void addOutput(const std::string &name);

  std::vector<popef::GraphAnchor> &anchors() { return anchors_; }
  std::vector<popef::TensorData> &tensorData() { return tensorData_; }

 private:
  hwsim::Graph &graph_;
  hwsim::program::Sequence load_;
  hwsim::program::Sequence main_;
  std::int64_t opset_;
  std::map<std::string, Value> values_;
  std::set<std::string> initializers_;
  std::map<std::string, Dims> declared_;
  std::set<std::string> usedNames_;
  std::vector<popef::GraphAnchor> anchors_;
  std::vector<popef::TensorData> tensorData_;
};

// Attributes of a node, with ONNX's defaults.
const ::onnx::AttributeProto *findAttribute(const ::onnx::NodeProto &node, const std::string &name);
std::int64_t attrInt(const ::onnx::NodeProto &node, const std::string &name, std::int64_t fallback);
float attrFloat(const ::onnx::NodeProto &node, const std::string &name, float fallback);
std::string attrString(const ::onnx::NodeProto &node, const std::string &name, const std::string &fallback);
std::optional<std::vector<std::int64_t>> attrInts(const ::onnx::NodeProto &node, const std::string &name);

// The node's input i, or "" when it is absent (an optional input left out).
const std::string &inputName(const ::onnx::NodeProto &node, int i);
// A node's name for messages: its name, or "<op type> #index" when unnamed.
std::string nodeLabel(const ::onnx::NodeProto &node);

// The values of input i, which must be a constant (shapes, axes, pads,
// scales); throws UnsupportedNode naming `what` when it is computed at run
// time. constantInts truncates them to integers.
std::vector<double> constantValues(const LoweringContext &ctx, const ::onnx::NodeProto &node, int i,
                                   const std::string &what);
std::vector<std::int64_t> constantInts(const LoweringContext &ctx, const ::onnx::NodeProto &node, int i,
                                       const std::string &what);
// Whether input i is given and its values are known: a constant, or a
// run-time tensor with no elements.
bool isConstantInput(const LoweringContext &ctx, const ::onnx::NodeProto &node, int i);

// The shape the model declares for the node's output i. Operators whose
// shape operand (Reshape's shape, Expand's shape, Tile's repeats, Split's
// split...) is computed at run time are lowered to this shape: it fixes
// their result, and ONNX requires the operand to agree with it. Throws
// UnsupportedNode naming `what` when the shape is not known statically.
Dims declaredOutputDims(const LoweringContext &ctx, const ::onnx::NodeProto &node, int i, const std::string &what);

}  // namespace mrt::onnx
