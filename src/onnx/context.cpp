#include "onnx/context.hpp"

#include <cmath>

#include <hwsim/ops.hpp>

#include "common/error.hpp"
#include "popef/shared_bytes.hpp"

namespace mrt::onnx {

namespace p = hwsim::program;

namespace {

// Folded constants up to this many elements become graph constants (part of
// the executable); larger ones, and every initializer, are TensorData so
// weights stay replaceable blobs of the PopEF file.
constexpr std::size_t kMaxInlineConstant = 64;

std::vector<popef::TensorInfo::ShapeDimType> anchorShape(const hwsim::Shape &shape) {
  std::vector<popef::TensorInfo::ShapeDimType> out;
  for (const auto d : shape) out.push_back(static_cast<popef::TensorInfo::ShapeDimType>(d));
  return out;
}

}  // namespace

LoweringContext::LoweringContext(hwsim::Graph &graph, std::int64_t opset) : graph_(graph), opset_(opset) {}

const Value &LoweringContext::value(const std::string &name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw Error(ErrorCode::CorruptModel, "tensor '{}' is used before it is produced", name);
  return it->second;
}

const HostTensor &LoweringContext::host(const std::string &name) const {
  const Value &v = value(name);
  if (!v.host) throw UnsupportedNode("'" + name + "' must be a constant but is computed at run time");
  return *v.host;
}

std::optional<Dims> LoweringContext::declaredDims(const std::string &name) const {
  const auto it = declared_.find(name);
  if (it == declared_.end()) return std::nullopt;
  return it->second;
}

void LoweringContext::setHost(const std::string &name, HostTensor t) {
  Value v;
  v.type = t.type;
  v.host = std::move(t);
  values_[name] = std::move(v);
}

void LoweringContext::setDevice(const std::string &name, hwsim::Tensor t, std::int32_t onnxType) {
  Value v;
  v.type = onnxType;
  v.device = std::move(t);
  values_[name] = std::move(v);
}

void LoweringContext::moveToTiles(unsigned first, unsigned count, const std::set<std::string> &live) {
  graph_.setDefaultTiles(first, count);
  for (auto &[name, v] : values_) {
    if (!v.device.valid() || live.count(name) == 0) continue;
    const std::string moved = uniqueName(name + "@tile" + std::to_string(first));
    hwsim::Tensor t = newTensor(v.device.elementType(), v.device.shape(), moved);
    (v.host ? load_ : main_).add(p::Copy(v.device, t, "to_tile" + std::to_string(first) + "/" + name));
    v.device = t;
  }
}

hwsim::Tensor LoweringContext::newTensor(hwsim::Type type, const hwsim::Shape &shape, const std::string &name) {
  if (shape.empty()) return hwsim::ops::createTensor(graph_, type, {1}, name).reshape({});
  return hwsim::ops::createTensor(graph_, type, shape, name);
}

std::string LoweringContext::uniqueName(const std::string &base) {
  std::string name = base;
  for (int i = 1; usedNames_.count(name) != 0 || values_.count(name) != 0; ++i) name = base + "_" + std::to_string(i);
  usedNames_.insert(name);
  return name;
}

hwsim::Tensor LoweringContext::deviceConstant(const HostTensor &t, const std::string &name, const LayoutFn &layout) {
  const auto type = deviceType(t.type);
  if (!type) throw UnsupportedNode("constant '" + name + "' is " + typeName(t.type) + ", which the device lacks");
  const hwsim::Shape shape = toShape(t.dims);
  std::vector<std::uint8_t> bytes = toDeviceBytes(t, *type, name);
  const bool initializer = initializers_.count(name) != 0;
  if (!initializer && t.numElements() <= kMaxInlineConstant && !layout) {
    hwsim::Tensor c = graph_.addConstant(*type, shape.empty() ? hwsim::Shape{1} : shape, bytes.data(), bytes.size(),
                                         name);
    graph_.setTileMapping(c, firstTile());
    return shape.empty() ? c.reshape({}) : c;
  }
  const std::string handle = initializer ? name : uniqueName(name);
  usedNames_.insert(handle);
  hwsim::Tensor var = layout ? layout(*type, shape, handle) : newTensor(*type, shape, handle);
  const auto stream = graph_.addHostToDeviceFIFO(handle, *type, var.numElements());
  load_.add(p::Copy(stream, var, "load/" + handle));
  anchors_.push_back({handle, handle, anchorShape(shape), {0}, false, popef::DataSource::TensorData});
  tensorData_.emplace_back(handle, popef::TensorInfo(popef::toDataType(*type), anchorShape(shape)),
                           popef::SharedBytes::fromVector(std::move(bytes)));
  return var;
}

hwsim::Tensor LoweringContext::device(const std::string &name, const LayoutFn &layout) {
  auto it = values_.find(name);
  if (it == values_.end()) value(name);  // throws naming the tensor
  Value &v = it->second;
  if (!v.device.valid()) v.device = deviceConstant(*v.host, name, layout);
  return v.device;
}

void LoweringContext::addInput(const std::string &name, std::int32_t onnxType, const Dims &dims) {
  const auto type = deviceType(onnxType);
  if (!type) {
    throw Error(ErrorCode::Unimplemented, "input '{}' is {}, which the device has no type for", name,
                typeName(onnxType));
  }
  usedNames_.insert(name);
  const hwsim::Shape shape = toShape(dims);
  hwsim::Tensor t = newTensor(*type, shape, name);
  const auto stream = graph_.addHostToDeviceFIFO(name, *type, t.numElements());
  main_.add(p::Copy(stream, t, "input/" + name));
  anchors_.push_back({name, name, anchorShape(shape), {1}, false, popef::DataSource::None});
  setDevice(name, t, onnxType);
}

void LoweringContext::addOutput(const std::string &name) {
  if (usedNames_.count(name) != 0 && !isHost(name) && initializers_.count(name) == 0) {
    // An input passed straight through: the anchor name is taken by the input.
    for (const auto &a : anchors_) {
      if (a.name == name) throw UnsupportedNode("output '" + name + "' is also a graph input");
    }
  }
  const hwsim::Tensor t = device(name);
  const std::string handle = name;
  usedNames_.insert(handle);
  const auto stream = graph_.addDeviceToHostFIFO(handle, t.elementType(), t.numElements());
  main_.add(p::Copy(t, stream, "output/" + handle));
  anchors_.push_back({name, handle, anchorShape(t.shape()), {1}, false, popef::DataSource::None});
}

const ::onnx::AttributeProto *findAttribute(const ::onnx::NodeProto &node, const std::string &name) {
  for (const auto &a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::int64_t attrInt(const ::onnx::NodeProto &node, const std::string &name, std::int64_t fallback) {
  const auto *a = findAttribute(node, name);
  return a ? a->i() : fallback;
}

float attrFloat(const ::onnx::NodeProto &node, const std::string &name, float fallback) {
  const auto *a = findAttribute(node, name);
  return a ? a->f() : fallback;
}

std::string attrString(const ::onnx::NodeProto &node, const std::string &name, const std::string &fallback) {
  const auto *a = findAttribute(node, name);
  return a ? a->s() : fallback;
}

std::optional<std::vector<std::int64_t>> attrInts(const ::onnx::NodeProto &node, const std::string &name) {
  const auto *a = findAttribute(node, name);
  if (!a) return std::nullopt;
  return std::vector<std::int64_t>(a->ints().begin(), a->ints().end());
}

const std::string &inputName(const ::onnx::NodeProto &node, int i) {
  static const std::string empty;
  return i < node.input_size() ? node.input(i) : empty;
}

std::string nodeLabel(const ::onnx::NodeProto &node) {
  if (!node.name().empty()) return node.name();
  return node.op_type() + (node.output_size() > 0 ? " -> " + node.output(0) : std::string());
}

std::vector<double> constantValues(const LoweringContext &ctx, const ::onnx::NodeProto &node, int i,
                                   const std::string &what) {
  const std::string &name = inputName(node, i);
  if (!name.empty() && !ctx.isHost(name) && numElements(ctx.value(name).dims()) == 0) return {};
  if (name.empty() || !ctx.isHost(name)) {
    throw UnsupportedNode(what + " must be a constant (after folding) but '" + name + "' is computed at run time");
  }
  return ctx.host(name).values;
}

std::vector<std::int64_t> constantInts(const LoweringContext &ctx, const ::onnx::NodeProto &node, int i,
                                       const std::string &what) {
  std::vector<std::int64_t> out;
  for (const double v : constantValues(ctx, node, i, what)) {
    if (std::isnan(v)) throw UnsupportedNode(what + " holds NaN where an integer is expected");
    out.push_back(saturatingInt64(v));
  }
  return out;
}

}  // namespace mrt::onnx

namespace mrt::onnx {

bool isConstantInput(const LoweringContext &ctx, const ::onnx::NodeProto &node, int i) {
  const std::string &name = inputName(node, i);
  return !name.empty() && (ctx.isHost(name) || numElements(ctx.value(name).dims()) == 0);
}

Dims declaredOutputDims(const LoweringContext &ctx, const ::onnx::NodeProto &node, int i, const std::string &what) {
  const std::string out = i < node.output_size() ? node.output(i) : std::string();
  if (auto dims = ctx.declaredDims(out)) return *dims;
  throw UnsupportedNode(what + " is computed at run time and the shape of output '" + out +
                        "' is not known statically (declare it in value_info or make the operand a constant)");
}

}  // namespace mrt::onnx
