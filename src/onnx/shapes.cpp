#include "onnx/shapes.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <map>
#include <set>

#include <onnx/defs/data_type_utils.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include "common/error.hpp"
#include "onnx/context.hpp"

namespace mrt::onnx {

namespace {

// Replaces input's shape by `dims`, keeping its rank when it declares one.
void overrideShape(::onnx::ValueInfoProto &input, const std::vector<std::int64_t> &dims) {
  auto &tensor = *input.mutable_type()->mutable_tensor_type();
  if (tensor.has_shape() && static_cast<std::size_t>(tensor.shape().dim_size()) != dims.size()) {
    throw Error(ErrorCode::InvalidArgument, "the input shape {} given for '{}' has rank {}; the model declares rank {}",
                toString(dims), input.name(), dims.size(), tensor.shape().dim_size());
  }
  auto &shape = *tensor.mutable_shape();
  shape.clear_dim();
  for (const std::int64_t d : dims) {
    if (d < 1) {
      throw Error(ErrorCode::InvalidArgument, "the input shape {} given for '{}' has a dimension below 1",
                  toString(dims), input.name());
    }
    shape.add_dim()->set_dim_value(d);
  }
}

// Drops the intermediate value_info and the outputs' dimensions (keeping
// their rank and type).
void forgetRecordedShapes(::onnx::GraphProto &graph) {
  graph.clear_value_info();
  for (auto &output : *graph.mutable_output()) {
    if (!output.type().has_tensor_type() || !output.type().tensor_type().has_shape()) continue;
    for (auto &dim : *output.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) dim.Clear();
  }
}

}  // namespace

void resolveShapes(::onnx::ModelProto &model, std::int64_t batchSize,
                   const std::map<std::string, std::vector<std::int64_t>> &inputShapes, std::uint64_t limitBytes,
                   const std::string &target) {
  std::set<std::string> initializers;
  for (const auto &init : model.graph().initializer()) initializers.insert(init.name());
  std::set<std::string> overridden;
  std::string inputNames;
  for (auto &input : *model.mutable_graph()->mutable_input()) {
    if (initializers.count(input.name()) || !input.type().has_tensor_type()) continue;
    inputNames += (inputNames.empty() ? "'" : ", '") + input.name() + "'";
    if (const auto shape = inputShapes.find(input.name()); shape != inputShapes.end()) {
      overrideShape(input, shape->second);
      overridden.insert(input.name());
    }
    if (!input.type().tensor_type().has_shape()) continue;
    for (auto &dim : *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!dim.has_dim_value() || dim.dim_value() <= 0) dim.set_dim_value(batchSize);
    }
  }
  for (const auto &[name, dims] : inputShapes) {
    if (!overridden.count(name)) {
      throw Error(ErrorCode::InvalidArgument, "an input shape is given for '{}', which is not an input of the model "
                  "(its inputs: {})", name, inputNames);
    }
  }
  // The shapes the exporter recorded for the old input shapes would
  // contradict the new ones: inference recomputes them all.
  if (!overridden.empty()) forgetRecordedShapes(*model.mutable_graph());
  checkBeforeInference(model, limitBytes, target);
  addKernelShapes(model);
  try {
    ::onnx::shape_inference::InferShapes(model);
  } catch (const std::exception &e) {
    throw Error(ErrorCode::CorruptModel, "ONNX shape inference rejects the model: {}", e.what());
  }
  checkInputTypes(model);
}

namespace {

// Bytes of one element on the device (INT64 is S32 there), at least 1.
std::uint64_t deviceElementBytes(std::int32_t onnxType) {
  using TP = ::onnx::TensorProto;
  switch (onnxType) {
    case TP::DOUBLE: case TP::UINT64: case TP::COMPLEX64: return 8;
    case TP::COMPLEX128: return 16;
    case TP::FLOAT: case TP::INT32: case TP::UINT32: case TP::INT64: return 4;
    case TP::FLOAT16: case TP::BFLOAT16: case TP::INT16: case TP::UINT16: return 2;
    default: return 1;
  }
}

// dims' bytes (0 dimensions counted as 1), saturated at limit + 1 so that no
// product overflows; 0 when a dimension is unknown (negative).
template <typename DimRange, typename Value>
std::uint64_t tensorBytes(const DimRange &dims, std::int32_t type, std::uint64_t limit, const Value &value) {
  std::uint64_t bytes = deviceElementBytes(type);
  bool over = false;
  for (const auto &d : dims) {
    const std::int64_t v = value(d);
    if (v < 0) return 0;
    // An empty tensor counts as if its 0s were 1s: lowering loops over its
    // other dimensions ([2^25, 0] made 2 GiB of view regions).
    if (v == 0) continue;
    if (bytes > limit / static_cast<std::uint64_t>(v)) over = true;
    else bytes *= static_cast<std::uint64_t>(v);
  }
  return over ? limit + 1 : bytes;
}

}  // namespace

void checkTensorSizes(const ::onnx::GraphProto &graph, std::uint64_t limitBytes, const std::string &target) {
  auto refuse = [&](const std::string &name, const std::string &shape) {
    throw Error(ErrorCode::ResourceExhausted, "tensor '{}' of shape {} needs more than the {} bytes of the whole "
                                              "target ({})", name, shape, limitBytes, target);
  };
  auto checkInfo = [&](const ::onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
    const auto &dims = info.type().tensor_type().shape().dim();
    for (const auto &d : dims) {
      if (d.has_dim_value() && d.dim_value() < 0) {
        throw Error(ErrorCode::CorruptModel, "tensor '{}' has the negative dimension {}", info.name(), d.dim_value());
      }
    }
    const auto value = [](const ::onnx::TensorShapeProto::Dimension &d) {
      return d.has_dim_value() ? d.dim_value() : std::int64_t{-1};
    };
    if (tensorBytes(dims, info.type().tensor_type().elem_type(), limitBytes, value) > limitBytes) {
      Dims shape;
      for (const auto &d : dims) shape.push_back(value(d));
      refuse(info.name(), toString(shape));
    }
  };
  for (const auto &info : graph.input()) checkInfo(info);
  for (const auto &info : graph.output()) checkInfo(info);
  for (const auto &info : graph.value_info()) checkInfo(info);
  for (const auto &init : graph.initializer()) {
    if (tensorBytes(init.dims(), init.data_type(), limitBytes, [](std::int64_t d) { return d; }) > limitBytes) {
      refuse(init.name(), toString(Dims(init.dims().begin(), init.dims().end())));
    }
  }
}

void checkInputTypes(const ::onnx::ModelProto &model) {
  const ::onnx::GraphProto &graph = model.graph();
  int opset = 1;
  for (const auto &o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  }
  std::map<std::string, std::int32_t> types;
  for (const auto &init : graph.initializer()) types[init.name()] = init.data_type();
  for (const auto *infos : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const auto &info : *infos) {
      if (info.type().has_tensor_type() && !types.count(info.name())) types[info.name()] = info.type().tensor_type().elem_type();
    }
  }
  for (const auto &node : graph.node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
    const ::onnx::OpSchema *schema = ::onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
    if (schema == nullptr || schema->inputs().empty()) continue;
    const auto &formals = schema->inputs();
    std::map<std::string, std::pair<std::int32_t, std::string>> bound;  // type parameter -> (type, input)
    for (int i = 0; i < node.input_size(); ++i) {
      const auto f = std::min(static_cast<std::size_t>(i), formals.size() - 1);
      if (static_cast<std::size_t>(i) >= formals.size() &&
          formals.back().GetOption() != ::onnx::OpSchema::FormalParameterOption::Variadic) {
        break;
      }
      if (formals[f].GetOption() == ::onnx::OpSchema::FormalParameterOption::Variadic && !formals[f].GetIsHomogeneous()) {
        continue;
      }
      const auto type = types.find(node.input(i));
      if (node.input(i).empty() || type == types.end() || type->second == 0) continue;
      ::onnx::TypeProto proto;
      proto.mutable_tensor_type()->set_elem_type(type->second);
      const auto &allowed = formals[f].GetTypes();
      if (!::onnx::TensorProto_DataType_IsValid(type->second) ||
          (!allowed.empty() && allowed.count(::onnx::Utils::DataTypeUtils::ToType(proto)) == 0)) {
        throw Error(ErrorCode::CorruptModel, "node '{}' ({}): input '{}' is {}, which the op does not take", nodeLabel(node),
                    node.op_type(), node.input(i), typeName(type->second));
      }
      const auto [it, added] = bound.emplace(formals[f].GetTypeStr(), std::make_pair(type->second, node.input(i)));
      if (!added && it->second.first != type->second) {
        throw Error(ErrorCode::CorruptModel, "node '{}' ({}): inputs '{}' ({}) and '{}' ({}) must have one type ({})",
                    nodeLabel(node), node.op_type(), it->second.second, typeName(it->second.first), node.input(i),
                    typeName(type->second), formals[f].GetTypeStr());
      }
    }
  }
}

void addKernelShapes(::onnx::ModelProto &model) {
  ::onnx::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, std::vector<std::int64_t>> shapes;  // of initializers and graph inputs
  for (const auto &init : graph.initializer()) shapes[init.name()].assign(init.dims().begin(), init.dims().end());
  for (const auto &info : graph.input()) {
    if (shapes.count(info.name()) || !info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) continue;
    std::vector<std::int64_t> dims;
    for (const auto &d : info.type().tensor_type().shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
    shapes[info.name()] = dims;
  }
  for (auto &node : *graph.mutable_node()) {
    const std::string &op = node.op_type();
    const int weights = op == "QLinearConv" ? 3 : (op == "Conv" || op == "ConvTranspose" || op == "ConvInteger") ? 1 : -1;
    if (weights < 0 || node.input_size() <= weights) continue;
    if (std::any_of(node.attribute().begin(), node.attribute().end(),
                    [](const ::onnx::AttributeProto &a) { return a.name() == "kernel_shape"; })) {
      continue;
    }
    const auto w = shapes.find(node.input(weights));
    if (w == shapes.end()) continue;
    if (w->second.size() < 3) {
      throw Error(ErrorCode::CorruptModel, "node '{}' ({}): weights '{}' of rank {}; a convolution's have rank 3 or more",
                  nodeLabel(node), op, node.input(weights), w->second.size());
    }
    const std::vector<std::int64_t> kernel(w->second.begin() + 2, w->second.end());
    // An unknown dimension (-1): libonnx's inference gives up on the node.
    if (std::any_of(kernel.begin(), kernel.end(), [](std::int64_t d) { return d < 0; })) continue;
    if (std::any_of(kernel.begin(), kernel.end(), [](std::int64_t d) { return d == 0; })) {
      throw Error(ErrorCode::CorruptModel, "node '{}' ({}): weights '{}' have an empty kernel dimension", nodeLabel(node),
                  op, node.input(weights));
    }
    auto *attribute = node.add_attribute();
    attribute->set_name("kernel_shape");
    attribute->set_type(::onnx::AttributeProto::INTS);
    for (const auto d : kernel) attribute->add_ints(d);
  }
}

namespace {

// A LayerNormalization's axis: its attribute, or the spec's default -1 (which
// is out of range for a rank-0 input, and libonnx 1.12 then writes at dim -1).
std::int64_t layerNormAxis(const ::onnx::NodeProto &node) {
  for (const auto &a : node.attribute()) {
    if (a.name() == "axis") return a.i();
  }
  return -1;
}

}  // namespace

void checkBeforeInference(const ::onnx::ModelProto &model, std::uint64_t limitBytes, const std::string &target) {
  const ::onnx::GraphProto &graph = model.graph();
  // Inputs and initializers only: value_info and outputs may still hold
  // what the file claims, checked after inference.
  ::onnx::GraphProto known;
  *known.mutable_input() = graph.input();
  *known.mutable_initializer() = graph.initializer();
  checkTensorSizes(known, limitBytes, target);

  bool negativeLayerNormAxis = false;
  for (const auto &node : graph.node()) {
    for (const auto &a : node.attribute()) {
      if (a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape") {
        for (const auto v : a.ints()) {
          if (v < 1) {
            throw Error(ErrorCode::CorruptModel, "node '{}' ({}): {} {} must be at least 1", nodeLabel(node), node.op_type(),
                        a.name(), v);
          }
          // The device's vertices take strides and dilations up to 2^24.
          if (v > (std::int64_t{1} << 24) && a.name() != "kernel_shape") {
            throw Error(ErrorCode::Unimplemented, "node '{}' ({}): {} {} is beyond the 16777216 the device supports",
                        nodeLabel(node), node.op_type(), a.name(), v);
          }
        }
      }
      if (node.op_type() == "LayerNormalization" && a.name() == "axis" && (a.i() < INT32_MIN || a.i() > INT32_MAX)) {
        throw Error(ErrorCode::CorruptModel, "node '{}' (LayerNormalization): axis {} is out of range", nodeLabel(node), a.i());
      }
    }
    negativeLayerNormAxis = negativeLayerNormAxis || (node.op_type() == "LayerNormalization" && layerNormAxis(node) < 0);
  }
  if (!negativeLayerNormAxis) return;
  // libonnx adds the rank to a negative axis without checking the result:
  // learn the ranks by inferring a copy whose LayerNormalization axes are 0
  // (always in range; the output Y has X's shape whatever the axis).
  ::onnx::ModelProto copy = model;
  for (auto &node : *copy.mutable_graph()->mutable_node()) {
    if (node.op_type() != "LayerNormalization") continue;
    auto &attributes = *node.mutable_attribute();
    attributes.erase(std::remove_if(attributes.begin(), attributes.end(),
                                    [](const ::onnx::AttributeProto &a) { return a.name() == "axis"; }),
                     attributes.end());
    auto *axis = node.add_attribute();
    axis->set_name("axis");
    axis->set_type(::onnx::AttributeProto::INT);
    axis->set_i(0);
  }
  try {
    ::onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception &) {
    // The real inference below reports it.
  }
  std::map<std::string, int> ranks;
  auto note = [&](const ::onnx::ValueInfoProto &info) {
    if (info.type().has_tensor_type() && info.type().tensor_type().has_shape()) {
      ranks[info.name()] = info.type().tensor_type().shape().dim_size();
    }
  };
  for (const auto &info : copy.graph().input()) note(info);
  for (const auto &info : copy.graph().value_info()) note(info);
  for (const auto &init : copy.graph().initializer()) ranks[init.name()] = init.dims_size();
  for (const auto &node : graph.node()) {
    if (node.op_type() != "LayerNormalization" || node.input_size() == 0) continue;
    const std::int64_t axis = layerNormAxis(node);
    const auto rank = ranks.find(node.input(0));
    // An unknown rank: libonnx's inference function returns early then.
    if (axis < 0 && rank != ranks.end() && axis < -rank->second) {
      throw Error(ErrorCode::CorruptModel, "node '{}' (LayerNormalization): axis {} is out of range for rank {}",
                  nodeLabel(node), axis, rank->second);
    }
  }
}

Dims staticDims(const ::onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type()) {
    throw Error(ErrorCode::Unimplemented, "'{}' is not a tensor (sequences and maps are not supported)", info.name());
  }
  const auto &tensor = info.type().tensor_type();
  if (!tensor.has_shape()) throw Error(ErrorCode::Unimplemented, "'{}' has no shape (not even its rank)", info.name());
  Dims dims;
  for (const auto &d : tensor.shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) {
      throw Error(ErrorCode::Unimplemented, "'{}' has the unknown dimension '{}'", info.name(), d.dim_param());
    }
    dims.push_back(d.dim_value());
  }
  return dims;
}

std::optional<Dims> knownDims(const ::onnx::ValueInfoProto &info) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return std::nullopt;
  Dims dims;
  for (const auto &d : info.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

Dims reshapeDims(const Dims &in, const std::vector<std::int64_t> &shape, bool allowZero, const std::string &what) {
  Dims out;
  int inferred = -1;
  std::size_t known = 1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    std::int64_t d = shape[i];
    if (d == 0 && !allowZero) {
      if (i >= in.size()) throw Error(ErrorCode::CorruptModel, "{}: shape {} copies dimension {} of a rank-{} input", what, toString(shape), i, in.size());
      d = in[i];
    }
    if (d == -1) {
      if (inferred >= 0) throw Error(ErrorCode::CorruptModel, "{}: shape {} has two -1 dimensions", what, toString(shape));
      inferred = static_cast<int>(i);
      d = 1;
    } else if (d < 0) {
      throw Error(ErrorCode::CorruptModel, "{}: shape {} has the negative dimension {}", what, toString(shape), d);
    } else if (__builtin_mul_overflow(known, static_cast<std::size_t>(d), &known)) {
      throw Error(ErrorCode::CorruptModel, "{}: shape {} has more elements than a size_t holds", what, toString(shape));
    }
    out.push_back(d);
  }
  const std::size_t total = numElements(in);
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) {
      throw Error(ErrorCode::CorruptModel, "{}: cannot reshape {} into {}", what, toString(in), toString(shape));
    }
    out[static_cast<std::size_t>(inferred)] = static_cast<std::int64_t>(total / known);
  }
  if (numElements(out) != total) {
    throw Error(ErrorCode::CorruptModel, "{}: cannot reshape {} ({} elements) into {}", what, toString(in), total,
                toString(out));
  }
  return out;
}

Dims flattenDims(const Dims &in, std::int64_t axis, const std::string &what) {
  const std::int64_t rank = static_cast<std::int64_t>(in.size());
  if (axis < -rank || axis > rank) throw Error(ErrorCode::CorruptModel, "{}: axis {} is out of range for rank {}", what, axis, rank);
  const std::size_t a = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  const Dims head(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(a));
  const Dims tail(in.begin() + static_cast<std::ptrdiff_t>(a), in.end());
  return {static_cast<std::int64_t>(numElements(head)), static_cast<std::int64_t>(numElements(tail))};
}

Dims squeezeDims(const Dims &in, const std::vector<std::int64_t> &axes, const std::string &what) {
  std::set<std::size_t> drop;
  for (const auto a : axes) {
    const std::size_t axis = normalizeAxis(a, in.size(), what);
    if (in[axis] != 1) throw Error(ErrorCode::CorruptModel, "{}: cannot squeeze axis {} of size {}", what, a, in[axis]);
    drop.insert(axis);
  }
  Dims out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (axes.empty() ? in[i] != 1 : drop.count(i) == 0) out.push_back(in[i]);
  }
  return out;
}

Dims unsqueezeDims(const Dims &in, const std::vector<std::int64_t> &axes, const std::string &what) {
  const std::size_t rank = in.size() + axes.size();
  std::set<std::size_t> add;
  for (const auto a : axes) {
    if (!add.insert(normalizeAxis(a, rank, what)).second) {
      throw Error(ErrorCode::CorruptModel, "{}: axis {} is repeated", what, a);
    }
  }
  Dims out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < rank; ++i) out.push_back(add.count(i) ? 1 : in[next++]);
  return out;
}

std::vector<AxisTake> sliceTakes(const Dims &in, const std::vector<std::int64_t> &starts,
                                 const std::vector<std::int64_t> &ends, const std::vector<std::int64_t> &axesIn,
                                 const std::vector<std::int64_t> &stepsIn, const std::string &what) {
  if (starts.size() != ends.size()) {
    throw Error(ErrorCode::CorruptModel, "{}: {} starts but {} ends", what, starts.size(), ends.size());
  }
  std::vector<std::int64_t> axes = axesIn;
  if (axes.empty()) {
    for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  }
  const std::vector<std::int64_t> steps = stepsIn.empty() ? std::vector<std::int64_t>(starts.size(), 1) : stepsIn;
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    throw Error(ErrorCode::CorruptModel, "{}: starts, ends, axes and steps differ in length", what);
  }
  std::vector<AxisTake> takes;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    AxisTake take;
    take.axis = normalizeAxis(axes[i], in.size(), what);
    const std::int64_t dim = in[take.axis];
    const std::int64_t step = steps[i];
    if (step == 0) throw Error(ErrorCode::CorruptModel, "{}: step 0 on axis {}", what, axes[i]);
    auto clampIndex = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
      if (v < 0) v += dim;
      return std::clamp(v, lo, hi);
    };
    // ONNX clamps to [0, dim] for positive steps and [-1, dim-1] for negative ones.
    const std::int64_t lo = step > 0 ? 0 : -1;
    const std::int64_t hi = step > 0 ? dim : dim - 1;
    const std::int64_t start = clampIndex(std::clamp<std::int64_t>(starts[i], -dim - 1, dim), lo, hi);
    const std::int64_t end = clampIndex(std::clamp<std::int64_t>(ends[i], -dim - 1, dim), lo, hi);
    for (std::int64_t j = start; step > 0 ? j < end : j > end; j += step) take.indices.push_back(j);
    takes.push_back(std::move(take));
  }
  return takes;
}

}  // namespace mrt::onnx
