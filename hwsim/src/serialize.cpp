// ExecutableData <-> FlatBuffers (schema/executable.fbs). Reading runs the
// FlatBuffers verifier first; if it fails, a field-by-field walk finds which
// part is malformed and at which byte offset, for the error message. Then the
// semantic checks of validate.cpp run, so nothing read is trusted unchecked.
#include <cstring>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "exe_data.hpp"
#include "hwsim/error.hpp"
#include "executable_generated.h"
#include "serialize.hpp"

namespace hwsim::detail {

namespace {

constexpr std::uint32_t kFormatVersion = 1;

template <typename T>
flatbuffers::Offset<flatbuffers::Vector<T>> vec(flatbuffers::FlatBufferBuilder &b, const std::vector<T> &v) {
  return b.CreateVector(v);
}

flatbuffers::Offset<flatbuffers::Vector<std::uint64_t>> shapeVec(flatbuffers::FlatBufferBuilder &b, const Shape &s) {
  std::vector<std::uint64_t> v(s.begin(), s.end());
  return b.CreateVector(v);
}

flatbuffers::Offset<fb::Target> writeTarget(flatbuffers::FlatBufferBuilder &b, const Target &t) {
  return fb::CreateTarget(b, static_cast<std::uint32_t>(t.ipuVersion), b.CreateString(t.name), t.numIpus, t.tilesPerIpu,
                          t.bytesPerTile, t.workerContextsPerTile, t.clockHz, t.f32MatMulFlopsPerCycle,
                          t.f16MatMulFlopsPerCycle, t.f32VectorWidth, t.f16VectorWidth, t.intVectorWidth,
                          t.transcendentalCyclesPerElement, t.vertexOverheadCycles, t.exchangeBytesPerCycle,
                          t.hostLinkBytesPerSecond, t.ipuLinkBytesPerSecond, t.internalSyncCycles,
                          t.externalSyncCycles, t.hostSyncCycles);
}

}  // namespace

std::vector<std::uint8_t> serializeExecutable(const ExecutableData &e) {
  flatbuffers::FlatBufferBuilder b(1024);
  b.ForceDefaults(false);
  const auto target = writeTarget(b, e.target);

  std::vector<flatbuffers::Offset<fb::Variable>> vars;
  vars.reserve(e.variables.size());
  for (const auto &v : e.variables) {
    std::vector<fb::TileInterval> mapping;
    mapping.reserve(v.mapping.size());
    for (const auto &iv : v.mapping) mapping.emplace_back(iv.begin, iv.end, iv.tile);
    vars.push_back(fb::CreateVariable(b, b.CreateString(v.name), static_cast<std::uint8_t>(v.type), shapeVec(b, v.shape),
                                      v.numElements, v.isConstant, v.isConstant ? vec(b, v.constantData) : 0,
                                      b.CreateVectorOfStructs(mapping)));
  }
  std::vector<flatbuffers::Offset<fb::View>> views;
  views.reserve(e.views.size());
  for (const auto &v : e.views) {
    std::vector<fb::Region> regions;
    regions.reserve(v.regions.size());
    for (const auto &r : v.regions) regions.emplace_back(r.var, r.begin, r.end);
    views.push_back(fb::CreateView(b, static_cast<std::uint8_t>(v.type), shapeVec(b, *v.shape), v.numElements,
                                   b.CreateVectorOfStructs(regions)));
  }
  std::vector<flatbuffers::Offset<fb::ComputeSet>> css;
  for (const auto &cs : e.computeSets) {
    std::vector<flatbuffers::Offset<fb::Vertex>> vertices;
    vertices.reserve(cs.vertices.size());
    for (const auto &vx : cs.vertices) {
      std::vector<flatbuffers::Offset<fb::Attr>> attrs;
      for (const auto &a : vx.attrs) attrs.push_back(fb::CreateAttr(b, vec(b, a)));
      vertices.push_back(fb::CreateVertex(b, vx.codelet, vx.tile, b.CreateVector(vx.operands.data(), vx.operands.size()), b.CreateVector(attrs), vx.cycles));
    }
    css.push_back(fb::CreateComputeSet(b, b.CreateString(cs.name), b.CreateVector(vertices)));
  }
  std::vector<flatbuffers::Offset<fb::Stream>> streams;
  for (const auto &s : e.streams) {
    streams.push_back(fb::CreateStream(b, b.CreateString(s.handle), static_cast<std::uint8_t>(s.direction),
                                       static_cast<std::uint8_t>(s.type), s.numElements));
  }
  std::vector<flatbuffers::Offset<fb::HostCopy>> hostCopies;
  for (const auto &h : e.hostCopies) hostCopies.push_back(fb::CreateHostCopy(b, b.CreateString(h.handle), h.view, h.isRead));
  std::vector<flatbuffers::Offset<fb::RemoteBuffer>> rbs;
  for (const auto &r : e.remoteBuffers) {
    rbs.push_back(fb::CreateRemoteBuffer(b, b.CreateString(r.handle), static_cast<std::uint8_t>(r.type), r.numElements, r.repeats));
  }
  std::vector<flatbuffers::Offset<fb::Node>> nodes;
  nodes.reserve(e.nodes.size());
  for (const auto &n : e.nodes) {
    nodes.push_back(fb::CreateNode(b, static_cast<std::uint8_t>(n.kind), b.CreateString(n.name), vec(b, n.children), n.index,
                                   n.count, n.view0, n.view1, vec(b, n.caseValues), n.cycles, n.computeTiles,
                                   n.exchangeTiles, n.syncTiles));
  }
  std::vector<flatbuffers::Offset<fb::Option>> options;
  for (const auto &[k, v] : e.options) options.push_back(fb::CreateOption(b, b.CreateString(k), b.CreateString(v)));

  const auto root = fb::CreateExecutable(b, kFormatVersion, target, e.replicationFactor, b.CreateVector(vars),
                                         b.CreateVector(views), b.CreateVector(css), b.CreateVector(streams),
                                         b.CreateVector(hostCopies), b.CreateVector(rbs), b.CreateVector(nodes),
                                         vec(b, e.programs), b.CreateVector(options), vec(b, e.tileBytes));
  fb::FinishExecutableBuffer(b, root);
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

namespace {

[[noreturn]] void corrupt(std::uint64_t offset, const std::string &what) {
  throw CorruptExecutable(offset, fmt::format("corrupt executable at byte offset {}: {}", offset, what));
}

flatbuffers::Verifier::Options verifierOptions() {
  flatbuffers::Verifier::Options o;
  o.max_depth = 16;
  o.max_tables = 100'000'000;
  return o;
}

std::uint64_t offsetOf(const void *p, const std::uint8_t *buf) {
  return static_cast<std::uint64_t>(static_cast<const std::uint8_t *>(p) - buf);
}

// Verifies one vector-of-tables field of the root element by element.
template <typename T>
void diagnoseTables(flatbuffers::Verifier &v, const flatbuffers::Table *root, flatbuffers::voffset_t field,
                    const char *name, const std::uint8_t *buf) {
  if (!root->VerifyOffset(v, field)) corrupt(offsetOf(root, buf), fmt::format("field '{}' has a bad offset", name));
  const auto *vecp = root->GetPointer<const flatbuffers::Vector<flatbuffers::Offset<T>> *>(field);
  if (!v.VerifyVector(vecp)) corrupt(vecp ? offsetOf(vecp, buf) : 0, fmt::format("vector '{}' is out of bounds", name));
  if (!vecp) return;
  for (flatbuffers::uoffset_t i = 0; i < vecp->size(); ++i) {
    const auto *elem = vecp->Get(i);
    if (!v.VerifyTable(elem)) corrupt(offsetOf(vecp->Data() + i * 4, buf), fmt::format("{}[{}] is malformed", name, i));
  }
}

template <typename T>
void diagnoseScalars(flatbuffers::Verifier &v, const flatbuffers::Table *root, flatbuffers::voffset_t field,
                     const char *name, const std::uint8_t *buf) {
  if (!root->VerifyOffset(v, field)) corrupt(offsetOf(root, buf), fmt::format("field '{}' has a bad offset", name));
  const auto *vecp = root->GetPointer<const flatbuffers::Vector<T> *>(field);
  if (!v.VerifyVector(vecp)) corrupt(vecp ? offsetOf(vecp, buf) : 0, fmt::format("vector '{}' is out of bounds", name));
}

[[noreturn]] void diagnose(const std::uint8_t *buf, std::size_t size) {
  if (size < 8) corrupt(size, fmt::format("truncated: only {} bytes", size));
  if (!flatbuffers::BufferHasIdentifier(buf, fb::ExecutableIdentifier())) corrupt(4, "bad file identifier (not an hwsim executable)");
  const auto rootOffset = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(buf);
  if (rootOffset >= size) corrupt(0, fmt::format("root offset {} is past the end ({} bytes)", rootOffset, size));
  flatbuffers::Verifier v(buf, size, verifierOptions());
  const auto *root = reinterpret_cast<const flatbuffers::Table *>(buf + rootOffset);
  if (!v.VerifyTableStart(buf + rootOffset)) corrupt(rootOffset, "root table header is malformed");
  using E = fb::Executable;
  if (!root->VerifyOffset(v, E::VT_TARGET) || !v.VerifyTable(root->GetPointer<const fb::Target *>(E::VT_TARGET))) {
    corrupt(rootOffset, "target is malformed");
  }
  diagnoseTables<fb::Variable>(v, root, E::VT_VARIABLES, "variables", buf);
  diagnoseTables<fb::View>(v, root, E::VT_VIEWS, "views", buf);
  diagnoseTables<fb::ComputeSet>(v, root, E::VT_COMPUTE_SETS, "compute_sets", buf);
  diagnoseTables<fb::Stream>(v, root, E::VT_STREAMS, "streams", buf);
  diagnoseTables<fb::HostCopy>(v, root, E::VT_HOST_COPIES, "host_copies", buf);
  diagnoseTables<fb::RemoteBuffer>(v, root, E::VT_REMOTE_BUFFERS, "remote_buffers", buf);
  diagnoseTables<fb::Node>(v, root, E::VT_NODES, "nodes", buf);
  diagnoseTables<fb::Option>(v, root, E::VT_OPTIONS, "options", buf);
  diagnoseScalars<std::uint32_t>(v, root, E::VT_PROGRAMS, "programs", buf);
  diagnoseScalars<std::uint64_t>(v, root, E::VT_TILE_BYTES, "tile_bytes", buf);
  corrupt(rootOffset, "a scalar field of the root table is misaligned or out of bounds");
}

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

// The verifier only checks a vector's 4-byte length field alignment; 8-byte
// elements (ulong, double, structs) must be aligned before they are read.
template <typename U> void checkAligned(const flatbuffers::Vector<U> *v) {
  // (FlatBuffers does not align empty vectors, and nothing is read from them.)
  if (v && v->size() > 0 && reinterpret_cast<std::uintptr_t>(v->Data()) % alignof(U) != 0) {
    corrupt(0, fmt::format("a vector of {}-byte elements is misaligned", alignof(U)));
  }
}

template <typename T, typename U> std::vector<T> toVec(const flatbuffers::Vector<U> *v) {
  std::vector<T> out;
  if (!v) return out;
  checkAligned(v);
  out.reserve(v->size());
  for (auto x : *v) out.push_back(static_cast<T>(x));
  return out;
}

// Copies a vector into the pool: one pool block for all of them (see reserve).
template <typename T, typename U> std::span<const T> toPool(FlatPool<T> &pool, const flatbuffers::Vector<U> *v) {
  if (!v) return {};
  checkAligned(v);
  return pool.copy(*v, [](U x) { return static_cast<T>(x); });
}

void checkDims(const flatbuffers::Vector<std::uint64_t> &v) {
  checkAligned(&v);
  for (auto d : v) {
    if (d > (std::uint64_t{1} << 40)) corrupt(0, fmt::format("dimension {} is out of range", d));
  }
}

Shape toShape(const flatbuffers::Vector<std::uint64_t> *v) {
  if (!v) return {};
  checkDims(*v);
  return Shape(v->begin(), v->end());
}

// A view's shape, held once per distinct shape in the pool.
const Shape *toShape(ShapePool &pool, const flatbuffers::Vector<std::uint64_t> *v) {
  if (!v) return pool.intern(Shape{});
  checkDims(*v);
  return pool.intern(*v);
}

Type toType(std::uint8_t raw, const char *what) {
  if (!isValidType(raw)) corrupt(0, fmt::format("{} has unknown element type {}", what, raw));
  return static_cast<Type>(raw);
}

template <typename T> std::size_t count(const flatbuffers::Vector<T> *v) { return v ? v->size() : 0; }

void requireHeader(const std::uint8_t *input, std::size_t size) {
  if (input == nullptr || size < 8) corrupt(size, fmt::format("truncated: only {} bytes", size));
}

}  // namespace

std::shared_ptr<ExecutableData> deserializeExecutable(const std::uint8_t *input, std::size_t size) {
  requireHeader(input, size);
  // Work on an 8-byte aligned copy so alignment checks relative to the buffer
  // start are also true of the addresses actually read, and so a mapped file
  // changed under us cannot change what was verified. Not value-initialized:
  // the copy writes every byte read (only [0, size) is).
  const std::unique_ptr<std::uint64_t[]> storage(new std::uint64_t[(size + 7) / 8]);
  std::memcpy(storage.get(), input, size);
  return deserializeOwnCopy(reinterpret_cast<const std::uint8_t *>(storage.get()), size);
}

std::shared_ptr<ExecutableData> deserializeOwnCopy(const std::uint8_t *buf, std::size_t size) {
  requireHeader(buf, size);
  if (size >= FLATBUFFERS_MAX_BUFFER_SIZE) corrupt(0, "buffer too large");
  {
    flatbuffers::Verifier v(buf, size, verifierOptions());
    if (!fb::VerifyExecutableBuffer(v)) diagnose(buf, size);
  }
  const fb::Executable *r = fb::GetExecutable(buf);
  if (r->format_version() != kFormatVersion) {
    corrupt(0, fmt::format("format version {} is not {}", r->format_version(), kFormatVersion));
  }
  auto e = std::make_shared<ExecutableData>();
  const fb::Target *t = r->target();
  if (!t) corrupt(0, "target is missing");
  e->target.ipuVersion = static_cast<IpuVersion>(t->ipu_version());
  e->target.name = str(t->name());
  e->target.numIpus = t->num_ipus();
  e->target.tilesPerIpu = t->tiles_per_ipu();
  e->target.bytesPerTile = t->bytes_per_tile();
  e->target.workerContextsPerTile = t->worker_contexts();
  e->target.clockHz = t->clock_hz();
  e->target.f32MatMulFlopsPerCycle = t->f32_matmul_flops_per_cycle();
  e->target.f16MatMulFlopsPerCycle = t->f16_matmul_flops_per_cycle();
  e->target.f32VectorWidth = t->f32_vector_width();
  e->target.f16VectorWidth = t->f16_vector_width();
  e->target.intVectorWidth = t->int_vector_width();
  e->target.transcendentalCyclesPerElement = t->transcendental_cycles_per_element();
  e->target.vertexOverheadCycles = t->vertex_overhead_cycles();
  e->target.exchangeBytesPerCycle = t->exchange_bytes_per_cycle();
  e->target.hostLinkBytesPerSecond = t->host_link_bytes_per_second();
  e->target.ipuLinkBytesPerSecond = t->ipu_link_bytes_per_second();
  e->target.internalSyncCycles = t->internal_sync_cycles();
  e->target.externalSyncCycles = t->external_sync_cycles();
  e->target.hostSyncCycles = t->host_sync_cycles();
  e->replicationFactor = r->replication_factor();

  if (const auto *vars = r->variables()) {
    e->variables.reserve(vars->size());
    for (const auto *v : *vars) {
      ExeVariable ev;
      ev.name = str(v->name());
      ev.type = toType(v->type(), "a variable");
      ev.shape = toShape(v->shape());
      ev.numElements = v->num_elements();
      ev.isConstant = v->is_constant();
      ev.constantData = toVec<std::uint8_t>(v->constant_data());
      if (const auto *m = v->mapping()) {
        checkAligned(m);
        ev.mapping.reserve(m->size());
        for (const auto *iv : *m) ev.mapping.push_back({iv->begin(), iv->end(), iv->tile()});
      }
      e->variables.push_back(std::move(ev));
    }
  }
  if (const auto *views = r->views()) {
    std::size_t totalRegions = 0;
    for (const auto *v : *views) totalRegions += count(v->regions());
    e->regionPool.reserve(totalRegions);
    e->views.reserve(views->size());
    for (const auto *v : *views) {
      ExeView ev;
      ev.type = toType(v->type(), "a view");
      ev.shape = toShape(e->shapePool, v->shape());
      ev.numElements = v->num_elements();
      if (const auto *regions = v->regions()) {
        checkAligned(regions);
        ev.regions = e->regionPool.copy(*regions, [](const fb::Region *rg) { return ExeRegion{rg->var(), rg->begin(), rg->end()}; });
      }
      e->views.push_back(std::move(ev));
    }
  }
  if (const auto *css = r->compute_sets()) {
    std::size_t totalOperands = 0;
    for (const auto *cs : *css) {
      if (const auto *vertices = cs->vertices()) {
        for (const auto *vx : *vertices) totalOperands += count(vx->operands());
      }
    }
    e->operandPool.reserve(totalOperands);
    e->computeSets.reserve(css->size());
    for (const auto *cs : *css) {
      ExeComputeSet ecs;
      ecs.name = str(cs->name());
      if (const auto *vertices = cs->vertices()) {
        ecs.vertices.reserve(vertices->size());
        for (const auto *vx : *vertices) {
          ExeVertex ev;
          ev.codelet = vx->codelet();
          ev.tile = vx->tile();
          ev.operands = toPool(e->operandPool, vx->operands());
          if (const auto *attrs = vx->attrs()) {
            ev.attrs.reserve(attrs->size());
            for (const auto *a : *attrs) ev.attrs.push_back(toVec<double>(a->values()));
          }
          ev.cycles = vx->cycles();
          ecs.vertices.push_back(std::move(ev));
        }
      }
      e->computeSets.push_back(std::move(ecs));
    }
  }
  if (const auto *streams = r->streams()) {
    for (const auto *s : *streams) {
      if (s->direction() > 1) corrupt(0, fmt::format("stream '{}' has unknown direction {}", str(s->handle()), s->direction()));
      e->streams.push_back({str(s->handle()), static_cast<StreamDirection>(s->direction()), toType(s->type(), "a stream"), s->num_elements()});
    }
  }
  if (const auto *hcs = r->host_copies()) {
    for (const auto *h : *hcs) e->hostCopies.push_back({str(h->handle()), h->view(), h->is_read()});
  }
  if (const auto *rbs = r->remote_buffers()) {
    for (const auto *rb : *rbs) {
      e->remoteBuffers.push_back({str(rb->handle()), toType(rb->type(), "a remote buffer"), rb->num_elements(), rb->repeats()});
    }
  }
  if (const auto *nodes = r->nodes()) {
    e->nodes.reserve(nodes->size());
    for (const auto *n : *nodes) {
      ExeNode en;
      if (n->kind() >= kNumNodeKinds) corrupt(0, fmt::format("program step has unknown kind {}", n->kind()));
      en.kind = static_cast<NodeKind>(n->kind());
      en.name = str(n->name());
      en.children = toVec<std::uint32_t>(n->children());
      en.index = n->index();
      en.count = n->count();
      en.view0 = n->view0();
      en.view1 = n->view1();
      en.caseValues = toVec<std::int64_t>(n->case_values());
      en.cycles = n->cycles();
      en.computeTiles = n->compute_tiles();
      en.exchangeTiles = n->exchange_tiles();
      en.syncTiles = n->sync_tiles();
      e->nodes.push_back(std::move(en));
    }
  }
  e->programs = toVec<std::uint32_t>(r->programs());
  if (const auto *opts = r->options()) {
    for (const auto *o : *opts) e->options[str(o->key())] = str(o->value());
  }
  e->tileBytes = toVec<std::uint64_t>(r->tile_bytes());
  validateExecutable(*e);
  try {
    validateEngineOptions(e->options);
  } catch (const InvalidOption &err) {
    corrupt(0, err.what());
  }
  e->finalize();
  return e;
}

}  // namespace hwsim::detail
