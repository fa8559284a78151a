#include "hwsim/graph.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "codelets/registry.hpp"
#include "codelets/type_dispatch.hpp"
#include "fail.hpp"
#include "graph_data.hpp"
#include "program_node.hpp"

namespace hwsim {

using detail::fail;

namespace {
std::atomic<std::uint32_t> nextGraphId{1};

void checkName(std::string_view what, std::string_view name) {
  if (name.empty()) fail(ErrorKind::InvalidArgument, "{} handle must not be empty", what);
}
}  // namespace

Graph::Graph(const Target &target, unsigned replicationFactor) : data_(std::make_unique<detail::GraphData>()) {
  if (replicationFactor == 0) fail(ErrorKind::InvalidArgument, "replication factor must be at least 1");
  if (target.numIpus == 0 || target.tilesPerIpu == 0) fail(ErrorKind::InvalidArgument, "target has no tiles");
  data_->id = nextGraphId.fetch_add(1);
  data_->target = target;
  data_->replicationFactor = replicationFactor;
}
Graph::~Graph() = default;
Graph::Graph(Graph &&) noexcept = default;
Graph &Graph::operator=(Graph &&) noexcept = default;

const Target &Graph::getTarget() const { return data_->target; }
void Graph::setDefaultTiles(unsigned first, unsigned count) {
  if (count != 0 && (first >= data_->target.numTiles() || count > data_->target.numTiles() - first)) {
    fail(ErrorKind::InvalidArgument, "default tiles {} to {} are not all among the {} tiles", first, first + count - 1,
         data_->target.numTiles());
  }
  data_->defaultFirstTile = count == 0 ? 0 : first;
  data_->defaultTileCount = count;
}
std::pair<unsigned, unsigned> Graph::defaultTiles() const { return {data_->defaultFirstTile, data_->defaultTileCount}; }
unsigned Graph::replicationFactor() const { return data_->replicationFactor; }
std::uint32_t Graph::id() const { return data_->id; }
std::size_t Graph::numVariables() const { return data_->variables.size(); }
std::size_t Graph::numComputeSets() const { return data_->computeSets.size(); }

Tensor Graph::addVariable(Type type, const Shape &shape, std::string_view debugName) {
  if (!isValidType(static_cast<std::uint8_t>(type))) fail(ErrorKind::InvalidArgument, "unknown element type");
  detail::VariableDef v;
  v.name = debugName.empty() ? "var" + std::to_string(data_->variables.size()) : std::string(debugName);
  v.type = type;
  v.shape = shape;
  v.numElements = numElementsOf(shape);
  const auto id = static_cast<std::uint32_t>(data_->variables.size());
  data_->variables.push_back(std::move(v));
  std::vector<Region> regions;
  if (numElementsOf(shape) > 0) regions.push_back({id, 0, numElementsOf(shape)});
  return Tensor(data_->id, type, shape, std::move(regions));
}

Tensor Graph::addConstant(Type type, const Shape &shape, const void *data, std::size_t numBytes,
                          std::string_view debugName) {
  const std::size_t want = numElementsOf(shape) * sizeOf(type);
  if (numBytes != want) {
    fail(ErrorKind::InvalidArgument, "constant '{}': expected {} bytes, got {}", debugName, want, numBytes);
  }
  Tensor t = addVariable(type, shape, debugName);
  auto &v = data_->variables.back();
  v.isConstant = true;
  v.constantData.resize(numBytes);
  if (numBytes) std::memcpy(v.constantData.data(), data, numBytes);
  return t;
}

Tensor Graph::addConstant(Type type, const Shape &shape, double value, std::string_view debugName) {
  return addConstant(type, shape, std::vector<double>(numElementsOf(shape), value), debugName);
}

Tensor Graph::addConstant(Type type, const Shape &shape, const std::vector<double> &values,
                          std::string_view debugName) {
  if (values.size() != numElementsOf(shape)) {
    fail(ErrorKind::InvalidArgument, "constant '{}': expected {} values, got {}", debugName, numElementsOf(shape), values.size());
  }
  std::vector<std::uint8_t> bytes(values.size() * sizeOf(type));
  detail::dispatchType(type, [&](auto tag) {
    constexpr Type T = decltype(tag)::value;
    auto *p = reinterpret_cast<detail::Storage<T> *>(bytes.data());
    for (std::size_t i = 0; i < values.size(); ++i) p[i] = detail::fromDouble<T>(values[i]);
  });
  return addConstant(type, shape, bytes.data(), bytes.size(), debugName);
}

void Graph::setTileMapping(const Tensor &t, unsigned tile) {
  if (t.graphId() != data_->id) fail(ErrorKind::InvalidArgument, "setTileMapping: tensor is not from this graph");
  if (tile >= data_->target.numTiles()) {
    fail(ErrorKind::InvalidArgument, "setTileMapping: tile {} out of range (the target has {} tiles)", tile, data_->target.numTiles());
  }
  for (const auto &r : t.regions()) data_->variables[r.var].mapping.assign(r.begin, r.end, tile);
}

std::vector<TileInterval> Graph::getTileMapping(const Tensor &t) const {
  if (t.graphId() != data_->id) fail(ErrorKind::InvalidArgument, "getTileMapping: tensor is not from this graph");
  std::vector<TileInterval> out;
  std::uint64_t pos = 0;
  for (const auto &r : t.regions()) {
    data_->variables[r.var].mapping.forEach(r.begin, r.end, [&](std::uint64_t b, std::uint64_t e, std::uint32_t tile) {
      const std::uint64_t fb = pos + (b - r.begin), fe = pos + (e - r.begin);
      if (!out.empty() && out.back().end == fb && out.back().tile == tile) out.back().end = fe;
      else out.push_back({fb, fe, tile});
    });
    pos += r.size();
  }
  return out;
}

void Graph::mapLinearly(const Tensor &t, std::size_t grainSize, unsigned firstTile, unsigned numTiles) {
  const unsigned total = data_->target.numTiles();
  if (firstTile >= total) fail(ErrorKind::InvalidArgument, "mapLinearly: first tile {} out of range", firstTile);
  if (numTiles == 0 || firstTile + numTiles > total) numTiles = total - firstTile;
  grainSize = std::max<std::size_t>(grainSize, 1);
  const std::size_t n = t.numElements();
  const std::size_t grains = (n + grainSize - 1) / grainSize;
  const std::size_t grainsPerTile = std::max<std::size_t>(1, (grains + numTiles - 1) / numTiles);
  const std::size_t chunk = grainsPerTile * grainSize;
  const Tensor flat = t.flatten();
  for (std::size_t begin = 0, i = 0; begin < n; begin += chunk, ++i) {
    setTileMapping(flat.slice(begin, std::min(n, begin + chunk)), firstTile + static_cast<unsigned>(i));
  }
}

ComputeSet Graph::addComputeSet(std::string_view debugName) {
  detail::ComputeSetDef cs;
  cs.name = debugName.empty() ? "cs" + std::to_string(data_->computeSets.size()) : std::string(debugName);
  data_->computeSets.push_back(std::move(cs));
  return {data_->id, static_cast<unsigned>(data_->computeSets.size() - 1)};
}

VertexRef Graph::addVertex(ComputeSet cs, std::string_view codelet, const std::vector<Connection> &connections) {
  if (cs.graphId != data_->id || cs.id >= data_->computeSets.size()) {
    fail(ErrorKind::InvalidArgument, "addVertex: compute set is not from this graph");
  }
  if (!detail::findCodelet(codelet)) fail(ErrorKind::InvalidArgument, "addVertex: unknown codelet '{}'", codelet);
  auto &vertices = data_->computeSets[cs.id].vertices;
  vertices.push_back({});
  vertices.back().codelet = std::string(codelet);
  VertexRef v{data_->id, cs.id, static_cast<unsigned>(vertices.size() - 1)};
  for (const auto &[field, tensor] : connections) connect(v, field, tensor);
  return v;
}

VertexRef Graph::addVertex(ComputeSet cs, std::string_view codelet, const std::vector<Connection> &connections,
                           unsigned tile) {
  VertexRef v = addVertex(cs, codelet, connections);
  setTileMapping(v, tile);
  return v;
}

namespace {
detail::VertexDef &vertexOf(detail::GraphData &g, VertexRef v) {
  if (v.graphId != g.id || v.computeSet >= g.computeSets.size() ||
      v.index >= g.computeSets[v.computeSet].vertices.size()) {
    fail(ErrorKind::InvalidArgument, "vertex is not from this graph");
  }
  return g.computeSets[v.computeSet].vertices[v.index];
}
}  // namespace

void Graph::connect(VertexRef v, std::string_view field, const Tensor &t) {
  auto &vertex = vertexOf(*data_, v);
  if (t.graphId() != data_->id) fail(ErrorKind::InvalidArgument, "connect '{}': tensor is not from this graph", field);
  const auto &spec = detail::codeletLibrary()[*detail::findCodelet(vertex.codelet)];
  const bool known = std::any_of(spec.fields.begin(), spec.fields.end(), [&](const auto &f) { return f.name == field; });
  if (!known) fail(ErrorKind::InvalidArgument, "codelet {} has no field '{}'", vertex.codelet, field);
  for (auto &[name, tensor] : vertex.fields) {
    if (name == field) {
      tensor = t;
      return;
    }
  }
  vertex.fields.emplace_back(std::string(field), t);
}

void Graph::setTileMapping(VertexRef v, unsigned tile) {
  auto &vertex = vertexOf(*data_, v);
  if (tile >= data_->target.numTiles()) {
    fail(ErrorKind::InvalidArgument, "vertex tile {} out of range (the target has {} tiles)", tile, data_->target.numTiles());
  }
  vertex.tile = tile;
}

void Graph::setInitialValue(VertexRef v, std::string_view field, double value) {
  setInitialValue(v, field, std::vector<double>{value});
}

void Graph::setInitialValue(VertexRef v, std::string_view field, const std::vector<double> &values) {
  auto &vertex = vertexOf(*data_, v);
  const auto &spec = detail::codeletLibrary()[*detail::findCodelet(vertex.codelet)];
  const bool known = std::any_of(spec.attrs.begin(), spec.attrs.end(), [&](const auto &a) { return a.name == field; });
  if (!known) fail(ErrorKind::InvalidArgument, "codelet {} has no attribute '{}'", vertex.codelet, field);
  for (auto &[name, vals] : vertex.attrs) {
    if (name == field) {
      vals = values;
      return;
    }
  }
  vertex.attrs.emplace_back(std::string(field), values);
}

namespace {
void checkUniqueHandle(const detail::GraphData &g, std::string_view handle) {
  for (const auto &s : g.streams) {
    if (s.handle == handle) fail(ErrorKind::InvalidArgument, "handle '{}' is already a stream", handle);
  }
  for (const auto &h : g.hostCopies) {
    if (h.handle == handle) fail(ErrorKind::InvalidArgument, "handle '{}' is already a host read/write", handle);
  }
  for (const auto &r : g.remoteBuffers) {
    if (r.handle == handle) fail(ErrorKind::InvalidArgument, "handle '{}' is already a remote buffer", handle);
  }
}
}  // namespace

DataStream Graph::addHostToDeviceFIFO(std::string_view handle, Type type, std::size_t numElements) {
  checkName("stream", handle);
  checkUniqueHandle(*data_, handle);
  data_->streams.push_back({std::string(handle), StreamDirection::HostToDevice, type, numElements});
  return {data_->id, static_cast<unsigned>(data_->streams.size() - 1)};
}

DataStream Graph::addDeviceToHostFIFO(std::string_view handle, Type type, std::size_t numElements) {
  checkName("stream", handle);
  checkUniqueHandle(*data_, handle);
  data_->streams.push_back({std::string(handle), StreamDirection::DeviceToHost, type, numElements});
  return {data_->id, static_cast<unsigned>(data_->streams.size() - 1)};
}

void Graph::createHostWrite(std::string_view handle, const Tensor &t) {
  checkName("host write", handle);
  checkUniqueHandle(*data_, handle);
  if (t.graphId() != data_->id) fail(ErrorKind::InvalidArgument, "createHostWrite '{}': tensor is not from this graph", handle);
  data_->hostCopies.push_back({std::string(handle), t, false});
}

void Graph::createHostRead(std::string_view handle, const Tensor &t) {
  checkName("host read", handle);
  checkUniqueHandle(*data_, handle);
  if (t.graphId() != data_->id) fail(ErrorKind::InvalidArgument, "createHostRead '{}': tensor is not from this graph", handle);
  data_->hostCopies.push_back({std::string(handle), t, true});
}

RemoteBuffer Graph::addRemoteBuffer(std::string_view handle, Type type, std::size_t numElements, std::size_t repeats) {
  checkName("remote buffer", handle);
  checkUniqueHandle(*data_, handle);
  if (repeats == 0) fail(ErrorKind::InvalidArgument, "remote buffer '{}' needs at least one slot", handle);
  data_->remoteBuffers.push_back({std::string(handle), type, numElements, repeats});
  return {data_->id, static_cast<unsigned>(data_->remoteBuffers.size() - 1)};
}

Function Graph::addFunction(const program::Program &body) {
  data_->functions.push_back(body);
  return {data_->id, static_cast<unsigned>(data_->functions.size() - 1)};
}

}  // namespace hwsim
