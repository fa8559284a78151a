// Semantic checks of an ExecutableData. The compiler runs them (as graph
// errors) on what it built and deserialize() runs them (as corrupt-executable
// errors) on what it read, so the engine only ever runs consistent data.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include <fmt/format.h>

#include "codelets/registry.hpp"
#include "cost_model.hpp"
#include "exe_data.hpp"
#include "hwsim/error.hpp"
#include "validate.hpp"

namespace hwsim::detail {

namespace {

constexpr std::uint64_t kMaxElements = std::uint64_t{1} << 40;
constexpr std::uint64_t kMaxRemoteBytes = std::uint64_t{1} << 36;

class Checker {
 public:
  Checker(const ExecutableData &exe, ErrorKind kind) : exe_(exe), kind_(kind) {}

  template <typename... Args>
  [[noreturn]] void bad(fmt::format_string<Args...> f, Args &&...args) const {
    const std::string msg = fmt::format(f, std::forward<Args>(args)...);
    if (kind_ == ErrorKind::CorruptExecutable) throw CorruptExecutable(0, "corrupt executable: " + msg);
    throw Error(kind_, msg);
  }

  void run() {
    target();
    variables();
    views();
    computeSets();
    handles();
    nodes();
  }

 private:
  static bool finitePositive(double v) { return std::isfinite(v) && v > 0; }

  std::uint64_t product(const Shape &shape, const char *what) const {
    std::uint64_t n = 1;
    for (auto d : shape) {
      if (d != 0 && n > kMaxElements / d) bad("{} shape is too large", what);
      n *= d;
    }
    return n;
  }

  void target() {
    const Target &t = exe_.target;
    if (t.ipuVersion != IpuVersion::Ipu2 && t.ipuVersion != IpuVersion::Ipu21) bad("unknown IPU version {}", static_cast<unsigned>(t.ipuVersion));
    if (t.numIpus == 0 || t.numIpus > 1024 || t.tilesPerIpu == 0 || t.tilesPerIpu > 8192) {
      bad("target of {} IPUs x {} tiles is out of range", t.numIpus, t.tilesPerIpu);
    }
    if (t.bytesPerTile == 0 || t.bytesPerTile > (std::uint64_t{1} << 30)) bad("target memory per tile {} is out of range", t.bytesPerTile);
    for (double v : {t.clockHz, t.f32MatMulFlopsPerCycle, t.f16MatMulFlopsPerCycle, t.f32VectorWidth, t.f16VectorWidth,
                     t.intVectorWidth, t.exchangeBytesPerCycle, t.hostLinkBytesPerSecond, t.ipuLinkBytesPerSecond}) {
      if (!finitePositive(v)) bad("target rate {} is not a positive number", v);
    }
    for (double v : {t.transcendentalCyclesPerElement, t.vertexOverheadCycles, t.internalSyncCycles,
                     t.externalSyncCycles, t.hostSyncCycles}) {
      if (!std::isfinite(v) || v < 0 || v > 1e12) bad("target latency {} is out of range", v);
    }
    if (exe_.replicationFactor == 0 || exe_.replicationFactor > 1024) bad("replication factor {} is out of range", exe_.replicationFactor);
    if (exe_.tileBytes.size() != t.numTiles()) bad("memory table has {} tiles, the target {}", exe_.tileBytes.size(), t.numTiles());
    for (std::size_t tile = 0; tile < exe_.tileBytes.size(); ++tile) {
      if (exe_.tileBytes[tile] > t.bytesPerTile) bad("tile {} uses {} bytes, the target has {} per tile", tile, exe_.tileBytes[tile], t.bytesPerTile);
    }
  }

  void variables() {
    const Target &t = exe_.target;
    std::uint64_t totalBytes = 0;
    for (const auto &v : exe_.variables) {
      if (!isValidType(static_cast<std::uint8_t>(v.type))) bad("variable '{}' has an unknown type", v.name);
      if (product(v.shape, "variable") != v.numElements) bad("variable '{}' has {} elements but shape of {}", v.name, v.numElements, product(v.shape, "variable"));
      totalBytes += v.numElements * sizeOf(v.type);
      if (totalBytes > t.totalMemoryBytes()) bad("variables need more than the target's {} bytes", t.totalMemoryBytes());
      const std::uint64_t bytes = v.numElements * sizeOf(v.type);
      if (v.isConstant ? v.constantData.size() != bytes : !v.constantData.empty()) {
        bad("variable '{}' has {} bytes of initial data, expected {}", v.name, v.constantData.size(), v.isConstant ? bytes : 0);
      }
      std::uint64_t cursor = 0;
      for (const auto &iv : v.mapping) {
        if (iv.begin < cursor || iv.end <= iv.begin || iv.end > v.numElements) bad("variable '{}' has a malformed tile mapping", v.name);
        if (iv.tile >= t.numTiles()) bad("variable '{}' is mapped to tile {} of {}", v.name, iv.tile, t.numTiles());
        if (iv.begin > cursor) bad("variable '{}' element {} has no tile mapping", v.name, cursor);
        cursor = iv.end;
      }
      if (cursor < v.numElements) bad("variable '{}' element {} has no tile mapping", v.name, cursor);
    }
  }

  void views() {
    for (std::size_t i = 0; i < exe_.views.size(); ++i) {
      const auto &view = exe_.views[i];
      if (!isValidType(static_cast<std::uint8_t>(view.type))) bad("view {} has an unknown type", i);
      if (product(*view.shape, "view") != view.numElements) bad("view {} has {} elements but a shape of {}", i, view.numElements, product(*view.shape, "view"));
      std::uint64_t total = 0;
      for (const auto &r : view.regions) {
        if (r.var >= exe_.variables.size()) bad("view {} references variable {} of {}", i, r.var, exe_.variables.size());
        const auto &v = exe_.variables[r.var];
        if (r.begin > r.end || r.end > v.numElements) bad("view {} region [{}, {}) is outside '{}' ({} elements)", i, r.begin, r.end, v.name, v.numElements);
        if (v.type != view.type) bad("view {} of type {} references '{}' of type {}", i, toString(view.type), v.name, toString(v.type));
        total += r.end - r.begin;
      }
      if (total != view.numElements) bad("view {} regions hold {} elements, its shape {}", i, total, view.numElements);
    }
  }

  const ExeView &view(std::uint32_t id, const char *what) const {
    if (id >= exe_.views.size()) bad("{} references view {} of {}", what, id, exe_.views.size());
    return exe_.views[id];
  }

  bool touchesConstant(const ExeView &v) const {
    return std::any_of(v.regions.begin(), v.regions.end(), [&](const ExeRegion &r) { return exe_.variables[r.var].isConstant; });
  }

  void computeSets() {
    const auto &lib = codeletLibrary();
    std::vector<Operand> ops;  // one vertex's, reused
    for (const auto &cs : exe_.computeSets) {
      for (std::size_t vi = 0; vi < cs.vertices.size(); ++vi) {
        const auto &vx = cs.vertices[vi];
        if (vx.codelet >= lib.size()) bad("compute set '{}' vertex {} has unknown codelet {}", cs.name, vi, vx.codelet);
        const auto &spec = lib[vx.codelet];
        // Formatted only for an error: a valid executable has many vertices.
        const auto where = [&] { return fmt::format("compute set '{}' vertex {} ({}) on tile {}", cs.name, vi, spec.name, vx.tile); };
        if (vx.tile >= exe_.target.numTiles()) bad("{}: tile out of range", where());
        if (vi > 0 && vx.tile < cs.vertices[vi - 1].tile) bad("compute set '{}' vertices are not sorted by tile", cs.name);
        if (vx.operands.size() != spec.fields.size()) bad("{}: has {} operands, needs {}", where(), vx.operands.size(), spec.fields.size());
        if (vx.attrs.size() != spec.attrs.size()) bad("{}: has {} attributes, needs {}", where(), vx.attrs.size(), spec.attrs.size());
        for (const auto &a : vx.attrs) {
          if (a.size() > 64) bad("{}: attribute has {} values", where(), a.size());
          for (double d : a) {
            if (!std::isfinite(d)) bad("{}: attribute value is not finite", where());
          }
        }
        ops.assign(spec.fields.size(), Operand{});
        for (std::size_t f = 0; f < spec.fields.size(); ++f) {
          const auto &v = view(vx.operands[f], "vertex");
          ops[f] = {nullptr, v.type, v.shape, v.numElements};
          if (spec.fields[f].dir != FieldDir::In && touchesConstant(v)) bad("{}: field '{}' writes a constant", where(), spec.fields[f].name);
          forEachTileRun(exe_, v, [&](std::uint64_t b, std::uint64_t, std::uint32_t tile) {
            if (tile != vx.tile) {
              bad("{}: field '{}' element {} is on tile {} (a vertex may only touch data on its own tile)", where(),
                  spec.fields[f].name, b, tile);
            }
          });
        }
        const std::string err = spec.validate(spec, ops.data(), vx.attrs);
        if (!err.empty()) bad("{}: {}", where(), err);
      }
    }
  }

  void handles() {
    std::set<std::string> seen;
    auto unique = [&](const std::string &h) {
      if (h.empty()) bad("a handle is empty");
      if (!seen.insert(h).second) bad("handle '{}' is defined twice", h);
    };
    for (const auto &s : exe_.streams) {
      unique(s.handle);
      if (!isValidType(static_cast<std::uint8_t>(s.type))) bad("stream '{}' has an unknown type", s.handle);
      if (s.direction != StreamDirection::HostToDevice && s.direction != StreamDirection::DeviceToHost) bad("stream '{}' has an unknown direction", s.handle);
      // A transfer lands in (or comes from) one replica's tile memory.
      if (s.numElements > kMaxElements || s.numBytes() > exe_.target.totalMemoryBytes()) {
        bad("stream '{}' of {} elements is larger than the target's {} bytes of memory", s.handle, s.numElements,
            exe_.target.totalMemoryBytes());
      }
    }
    for (const auto &h : exe_.hostCopies) {
      unique(h.handle);
      const auto &v = view(h.view, "host read/write");
      if (!h.isRead && touchesConstant(v)) bad("host write '{}' writes a constant", h.handle);
    }
    // Remote buffers live in host memory (the IPU's streaming memory), all of
    // them together within kMaxRemoteBytes per replica.
    std::uint64_t remoteBytes = 0;
    for (const auto &r : exe_.remoteBuffers) {
      unique(r.handle);
      if (!isValidType(static_cast<std::uint8_t>(r.type))) bad("remote buffer '{}' has an unknown type", r.handle);
      if (r.repeats == 0 || r.numElements > kMaxElements || r.repeats > kMaxElements ||
          r.slotBytes() > exe_.target.totalMemoryBytes() || (r.slotBytes() != 0 && r.repeats > (kMaxRemoteBytes - remoteBytes) / r.slotBytes())) {
        bad("remote buffer '{}' of {} x {} elements is out of range (remote buffers may hold {} bytes in all)",
            r.handle, r.repeats, r.numElements, kMaxRemoteBytes);
      }
      remoteBytes += r.slotBytes() * r.repeats;
    }
  }

  void scalar(const ExeView &v, const char *what) const {
    if (v.numElements != 1) bad("{} must have exactly one element, has {}", what, v.numElements);
  }

  void nodes() {
    for (std::size_t i = 0; i < exe_.nodes.size(); ++i) node(static_cast<std::uint32_t>(i));
    for (auto p : exe_.programs) {
      if (p >= exe_.nodes.size()) bad("program references step {} of {}", p, exe_.nodes.size());
    }
  }

  void children(const ExeNode &n, std::uint32_t id, std::size_t count) const {
    if (n.children.size() != count) bad("step {} ({}) has {} children, needs {}", id, toString(n.kind), n.children.size(), count);
  }

  void node(std::uint32_t id) {
    const ExeNode &n = exe_.nodes[id];
    if (static_cast<unsigned>(n.kind) >= kNumNodeKinds) bad("step {} has unknown kind {}", id, static_cast<unsigned>(n.kind));
    for (auto c : n.children) {
      // Children always come first, so the program graph cannot have a cycle.
      if (c >= id) bad("step {} has child {} that does not precede it", id, c);
    }
    // Formatted only for an error: a valid executable has many steps.
    const auto name = [&] { return fmt::format("step {} ({} '{}')", id, toString(n.kind), n.name); };
    switch (n.kind) {
      case NodeKind::Sequence: break;
      case NodeKind::Execute:
        children(n, id, 0);
        if (n.index >= exe_.computeSets.size()) bad("{}: compute set {} of {}", name(), n.index, exe_.computeSets.size());
        break;
      case NodeKind::Copy: {
        children(n, id, 0);
        const auto &s = view(n.view0, "Copy"), &d = view(n.view1, "Copy");
        if (s.type != d.type || s.numElements != d.numElements) {
          bad("{}: copies {} {} elements into {} {} elements", name(), s.numElements, toString(s.type), d.numElements, toString(d.type));
        }
        if (touchesConstant(d)) bad("{}: destination is a constant", name());
        break;
      }
      case NodeKind::StreamToTensor:
      case NodeKind::TensorToStream: {
        children(n, id, 0);
        if (n.index >= exe_.streams.size()) bad("{}: stream {} of {}", name(), n.index, exe_.streams.size());
        const auto &s = exe_.streams[n.index];
        const bool h2d = n.kind == NodeKind::StreamToTensor;
        if ((s.direction == StreamDirection::HostToDevice) != h2d) bad("{}: stream '{}' goes the other way", name(), s.handle);
        const auto &v = view(h2d ? n.view1 : n.view0, "stream copy");
        if (v.type != s.type || v.numElements != s.numElements) {
          bad("{}: stream '{}' carries {} {} elements, the tensor has {} {}", name(), s.handle, s.numElements,
              toString(s.type), v.numElements, toString(v.type));
        }
        if (h2d && touchesConstant(v)) bad("{}: destination is a constant", name());
        break;
      }
      case NodeKind::RemoteToTensor:
      case NodeKind::TensorToRemote: {
        children(n, id, 0);
        if (n.index >= exe_.remoteBuffers.size()) bad("{}: remote buffer {} of {}", name(), n.index, exe_.remoteBuffers.size());
        const auto &rb = exe_.remoteBuffers[n.index];
        const auto &v = view(n.view0, "remote copy");
        if (v.type != rb.type || v.numElements != rb.numElements) {
          bad("{}: remote buffer '{}' slots hold {} {} elements, the tensor has {} {}", name(), rb.handle, rb.numElements,
              toString(rb.type), v.numElements, toString(v.type));
        }
        if (n.kind == NodeKind::RemoteToTensor && touchesConstant(v)) bad("{}: destination is a constant", name());
        if (n.view1 == kNoView) {
          if (n.count >= rb.repeats) bad("{}: slot {} of remote buffer '{}' with {} slots", name(), n.count, rb.handle, rb.repeats);
        } else {
          const auto &idx = view(n.view1, "remote slot index");
          scalar(idx, "a remote slot index");
          if (idx.type != Type::U32 && idx.type != Type::S32) bad("{}: slot index must be U32 or S32", name());
        }
        break;
      }
      case NodeKind::Repeat: children(n, id, 1); break;
      case NodeKind::RepeatWhileTrue:
      case NodeKind::RepeatWhileFalse:
        children(n, id, 2);
        scalar(view(n.view0, "loop predicate"), "a loop predicate");
        break;
      case NodeKind::If:
        children(n, id, 2);
        scalar(view(n.view0, "If predicate"), "an If predicate");
        break;
      case NodeKind::Switch: {
        if (n.children.empty() || n.caseValues.size() != n.children.size() - 1) bad("{}: {} cases for {} bodies", name(), n.caseValues.size(), n.children.size());
        const auto &c = view(n.view0, "Switch control");
        scalar(c, "a Switch control");
        if (c.type != Type::S32 && c.type != Type::U32) bad("{}: control must be S32 or U32, is {}", name(), toString(c.type));
        break;
      }
      case NodeKind::Sync:
        children(n, id, 0);
        if (n.index > 2) bad("{}: unknown sync type {}", name(), n.index);
        break;
      case NodeKind::Call: children(n, id, 1); break;
      case NodeKind::WriteUndef:
      case NodeKind::PrintTensor:
        children(n, id, 0);
        view(n.view0, toString(n.kind));
        break;
    }
  }

  const ExecutableData &exe_;
  ErrorKind kind_;
};

}  // namespace

void checkExecutable(const ExecutableData &exe, ErrorKind kind) { Checker(exe, kind).run(); }

void validateExecutable(const ExecutableData &exe) { checkExecutable(exe, ErrorKind::CorruptExecutable); }

}  // namespace hwsim::detail
