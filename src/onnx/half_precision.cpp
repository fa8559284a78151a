#include "onnx/half_precision.hpp"

#include <set>
#include <string>

#include "onnx/host_tensor.hpp"

namespace mrt::onnx {

namespace {

using TP = ::onnx::TensorProto;

void tensorToHalf(TP &tensor) {
  if (tensor.data_type() != TP::FLOAT) return;
  const std::vector<std::uint8_t> half = toDeviceBytes(fromProto(tensor), hwsim::Type::F16, tensor.name());
  tensor.clear_float_data();
  tensor.set_data_type(TP::FLOAT16);
  tensor.set_raw_data(half.data(), half.size());
}

void nodeToHalf(::onnx::NodeProto &node) {
  for (auto &attr : *node.mutable_attribute()) {
    if (attr.has_t()) tensorToHalf(*attr.mutable_t());
    if (node.op_type() == "Cast" && attr.name() == "to" && attr.i() == TP::FLOAT) attr.set_i(TP::FLOAT16);
  }
}

// Renames every use of `from` as a node input to `to`.
void renameUses(::onnx::GraphProto &graph, const std::string &from, const std::string &to) {
  for (auto &node : *graph.mutable_node()) {
    for (auto &input : *node.mutable_input()) {
      if (input == from) input = to;
    }
  }
}

::onnx::NodeProto castNode(const std::string &from, const std::string &to, std::int32_t type) {
  ::onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(to);
  cast.add_input(from);
  cast.add_output(to);
  auto *attr = cast.add_attribute();
  attr->set_name("to");
  attr->set_type(::onnx::AttributeProto::INT);
  attr->set_i(type);
  return cast;
}

bool isFloat(const ::onnx::ValueInfoProto &value) {
  return value.type().has_tensor_type() && value.type().tensor_type().elem_type() == TP::FLOAT;
}

}  // namespace

void convertToHalfPrecision(::onnx::ModelProto &model) {
  ::onnx::GraphProto &graph = *model.mutable_graph();
  std::set<std::string> initializers;
  for (auto &init : *graph.mutable_initializer()) {
    tensorToHalf(init);
    initializers.insert(init.name());
  }
  for (auto &node : *graph.mutable_node()) nodeToHalf(node);

  ::onnx::GraphProto edges;  // the casts at the inputs (first) and outputs (last)
  for (auto &input : *graph.mutable_input()) {
    if (!isFloat(input)) continue;
    if (initializers.count(input.name())) {  // IR < 4 lists initializers as inputs too
      input.mutable_type()->mutable_tensor_type()->set_elem_type(TP::FLOAT16);
      continue;
    }
    const std::string half = input.name() + "/f16";
    renameUses(graph, input.name(), half);
    *edges.add_node() = castNode(input.name(), half, TP::FLOAT16);
  }
  std::vector<::onnx::NodeProto> outputCasts;
  for (const auto &output : graph.output()) {
    if (!isFloat(output)) continue;
    const std::string half = output.name() + "/f16";
    bool produced = false;
    for (auto &node : *graph.mutable_node()) {
      for (auto &name : *node.mutable_output()) {
        if (name == output.name()) {
          name = half;
          produced = true;
        }
      }
    }
    // An output that is an input or an initializer keeps its FLOAT value.
    if (!produced) continue;
    renameUses(graph, output.name(), half);
    outputCasts.push_back(castNode(half, output.name(), TP::FLOAT));
  }
  for (auto &node : *graph.mutable_node()) *edges.add_node() = std::move(node);
  for (auto &cast : outputCasts) *edges.add_node() = std::move(cast);
  graph.mutable_node()->Swap(edges.mutable_node());
  graph.clear_value_info();
}

}  // namespace mrt::onnx
