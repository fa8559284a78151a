// compileGraph: Graph + programs -> ExecutableData (views, vertices in codelet
// field order, a program DAG in post-order), semantic checks, the static cycle
// cost of every step and the memory layout of every tile.
#include "hwsim/compiler.hpp"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "codelets/registry.hpp"
#include "cost_model.hpp"
#include "exe_data.hpp"
#include "fail.hpp"
#include "graph_data.hpp"
#include "io_tiles.hpp"
#include "program_node.hpp"
#include "validate.hpp"

namespace hwsim {

using detail::fail;

namespace detail {
namespace {

// Estimated bytes of code per codelet kind present on a tile, and of vertex state.
constexpr std::uint64_t kCodeletCodeBytes = 512;
constexpr std::uint64_t kVertexStateBytes = 16;
constexpr std::uint64_t kBytesPerOperand = 8;
constexpr std::uint64_t kAlignment = 8;

std::uint64_t alignUp(std::uint64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

class Builder {
 public:
  Builder(const GraphData &g, ExecutableData &exe) : g_(g), exe_(exe) {}

  void variables() {
    exe_.target = g_.target;
    exe_.replicationFactor = g_.replicationFactor;
    for (const auto &v : g_.variables) {
      ExeVariable ev;
      ev.name = v.name;
      ev.type = v.type;
      ev.shape = v.shape;
      ev.numElements = v.numElements;
      ev.isConstant = v.isConstant;
      ev.constantData = v.constantData;
      ev.mapping = v.mapping.intervals();
      if (auto unmapped = v.mapping.firstUnmapped(0, v.numElements)) {
        fail(ErrorKind::GraphError, "variable '{}' element {} has no tile mapping", v.name, *unmapped);
      }
      exe_.variables.push_back(std::move(ev));
    }
  }

  std::uint32_t view(const Tensor &t, std::string_view what) {
    if (!t.valid()) fail(ErrorKind::GraphError, "{}: tensor is not set", what);
    if (t.graphId() != g_.id) fail(ErrorKind::GraphError, "{}: tensor is from another graph", what);
    ExeView v;
    v.type = t.elementType();
    v.shape = exe_.shapePool.intern(t.shape());
    v.numElements = t.numElements();
    v.regions = exe_.regionPool.copy(t.regions(), [](const auto &r) { return ExeRegion{r.var, r.begin, r.end}; });
    exe_.views.push_back(std::move(v));
    return static_cast<std::uint32_t>(exe_.views.size() - 1);
  }

  void computeSets() {
    const auto &lib = codeletLibrary();
    for (const auto &cs : g_.computeSets) {
      ExeComputeSet ecs;
      ecs.name = cs.name;
      for (std::size_t vi = 0; vi < cs.vertices.size(); ++vi) {
        const auto &vd = cs.vertices[vi];
        const auto id = *findCodelet(vd.codelet);
        const auto &spec = lib[id];
        const auto where = fmt::format("compute set '{}' vertex {} ({})", cs.name, vi, spec.name);
        if (vd.tile == kUnmappedTile) fail(ErrorKind::GraphError, "{} has no tile mapping", where);
        ExeVertex ev;
        ev.codelet = id;
        ev.tile = vd.tile;
        const std::span<std::uint32_t> operands = exe_.operandPool.allocate(spec.fields.size());
        for (std::size_t f = 0; f < spec.fields.size(); ++f) {
          const auto &name = spec.fields[f].name;
          auto it = std::find_if(vd.fields.begin(), vd.fields.end(), [&](const auto &field) { return field.first == name; });
          if (it == vd.fields.end()) fail(ErrorKind::GraphError, "{}: field '{}' is not connected", where, name);
          operands[f] = view(it->second, where);
        }
        ev.operands = operands;
        for (const auto &attr : spec.attrs) {
          auto it = std::find_if(vd.attrs.begin(), vd.attrs.end(), [&](const auto &a) { return a.first == attr.name; });
          ev.attrs.push_back(it == vd.attrs.end() ? attr.defaults : it->second);
        }
        ecs.vertices.push_back(std::move(ev));
      }
      std::stable_sort(ecs.vertices.begin(), ecs.vertices.end(), [](const auto &a, const auto &b) { return a.tile < b.tile; });
      exe_.computeSets.push_back(std::move(ecs));
    }
  }

  void handles() {
    for (const auto &s : g_.streams) exe_.streams.push_back({s.handle, s.direction, s.type, s.numElements});
    for (const auto &h : g_.hostCopies) exe_.hostCopies.push_back({h.handle, view(h.tensor, h.handle), h.isRead});
    for (const auto &r : g_.remoteBuffers) exe_.remoteBuffers.push_back({r.handle, r.type, r.numElements, r.repeats});
  }

  std::uint32_t program(const std::shared_ptr<ProgramNode> &p) { return node(p); }

 private:
  void checkGraph(const ProgramNode &n) const {
    if (n.graphId != 0 && n.graphId != g_.id) fail(ErrorKind::GraphError, "program {} '{}' uses another graph", toString(n.kind), n.name);
  }

  // Post-order: children get their indices first, so every child index is
  // smaller than its parent's (the verifier relies on this to rule out cycles).
  std::uint32_t node(const std::shared_ptr<ProgramNode> &p) {
    if (auto it = done_.find(p.get()); it != done_.end()) return it->second;
    if (!onStack_.insert(p.get()).second) fail(ErrorKind::GraphError, "program {} '{}' contains itself", toString(p->kind), p->name);
    const ProgramNode &n = *p;
    checkGraph(n);
    ExeNode en;
    en.kind = n.kind;
    en.name = n.name;
    en.index = n.index;
    en.count = n.count;
    en.caseValues = n.caseValues;
    if (n.kind == NodeKind::Call) {
      if (n.index >= g_.functions.size()) fail(ErrorKind::GraphError, "Call of function {} of {}", n.index, g_.functions.size());
      en.children.push_back(node(g_.functions[n.index].node()));
    } else {
      for (const auto &c : n.children) en.children.push_back(node(c));
    }
    const std::string what = fmt::format("{} '{}'", toString(n.kind), n.name);
    switch (n.kind) {
      case NodeKind::Execute:
        if (n.index >= g_.computeSets.size()) fail(ErrorKind::GraphError, "{}: unknown compute set", what);
        if (en.name.empty()) en.name = g_.computeSets[n.index].name;
        break;
      case NodeKind::Copy:
        en.view0 = view(n.t0, what);
        en.view1 = view(n.t1, what);
        break;
      case NodeKind::StreamToTensor:
      case NodeKind::TensorToStream:
        if (n.index >= g_.streams.size()) fail(ErrorKind::GraphError, "{}: unknown stream", what);
        if (en.name.empty()) en.name = g_.streams[n.index].handle;
        if (n.kind == NodeKind::StreamToTensor) en.view1 = view(n.t1, what);
        else en.view0 = view(n.t0, what);
        break;
      case NodeKind::RemoteToTensor:
      case NodeKind::TensorToRemote:
        if (n.index >= g_.remoteBuffers.size()) fail(ErrorKind::GraphError, "{}: unknown remote buffer", what);
        if (en.name.empty()) en.name = g_.remoteBuffers[n.index].handle;
        en.view0 = view(n.t0, what);
        if (n.t1.valid()) en.view1 = view(n.t1, what);
        break;
      case NodeKind::RepeatWhileTrue:
      case NodeKind::RepeatWhileFalse:
      case NodeKind::If:
      case NodeKind::Switch:
      case NodeKind::WriteUndef:
      case NodeKind::PrintTensor:
        en.view0 = view(n.t0, what);
        break;
      default: break;
    }
    onStack_.erase(p.get());
    exe_.nodes.push_back(std::move(en));
    const auto id = static_cast<std::uint32_t>(exe_.nodes.size() - 1);
    done_.emplace(p.get(), id);
    return id;
  }

  const GraphData &g_;
  ExecutableData &exe_;
  std::unordered_map<const ProgramNode *, std::uint32_t> done_;
  std::unordered_set<const ProgramNode *> onStack_;
};

void computeCosts(ExecutableData &exe) {
  const auto &lib = codeletLibrary();
  const Target &t = exe.target;
  for (auto &cs : exe.computeSets) {
    for (auto &vx : cs.vertices) {
      const auto &spec = lib[vx.codelet];
      std::vector<Operand> ops;
      for (auto v : vx.operands) ops.push_back({nullptr, exe.views[v].type, exe.views[v].shape, exe.views[v].numElements});
      vx.cycles = static_cast<std::uint64_t>(spec.cycles(spec, t, ops.data(), vx.attrs));
    }
  }
  for (auto &n : exe.nodes) {
    CopyCost c;
    switch (n.kind) {
      case NodeKind::Execute:
        c = computeSetCost(exe, exe.computeSets[n.index]);
        n.computeTiles = c.tiles;
        n.syncTiles = t.numTiles();
        break;
      case NodeKind::Copy:
        c = deviceCopyCost(exe, exe.views[n.view0], exe.views[n.view1]);
        n.exchangeTiles = c.tiles;
        n.syncTiles = t.numTiles();
        break;
      case NodeKind::StreamToTensor:
      case NodeKind::TensorToStream: {
        const auto &v = exe.views[n.kind == NodeKind::StreamToTensor ? n.view1 : n.view0];
        c = hostCopyCost(exe, v, v.numElements * sizeOf(v.type), true);
        n.exchangeTiles = c.tiles;
        n.syncTiles = t.numTiles();
        break;
      }
      case NodeKind::RemoteToTensor:
      case NodeKind::TensorToRemote: {
        const auto &v = exe.views[n.view0];
        c = hostCopyCost(exe, v, v.numElements * sizeOf(v.type), false);
        n.exchangeTiles = c.tiles;
        n.syncTiles = t.numTiles();
        break;
      }
      case NodeKind::PrintTensor: {
        const auto &v = exe.views[n.view0];
        c = hostCopyCost(exe, v, v.numElements * sizeOf(v.type), true);
        n.exchangeTiles = c.tiles;
        n.syncTiles = t.numTiles();
        break;
      }
      case NodeKind::Sync: {
        const double s = n.index == 0 ? t.internalSyncCycles : n.index == 1 ? t.externalSyncCycles : t.hostSyncCycles;
        c.cycles = static_cast<std::uint64_t>(s);
        n.syncTiles = t.numTiles();
        break;
      }
      case NodeKind::If:
      case NodeKind::Switch:
      case NodeKind::RepeatWhileTrue:
      case NodeKind::RepeatWhileFalse:
        // The predicate is broadcast to every tile: a sync plus the branch.
        c.cycles = kControlFlowCycles + static_cast<std::uint64_t>(t.internalSyncCycles);
        n.syncTiles = t.numTiles();
        break;
      case NodeKind::Repeat:
      case NodeKind::Call: c.cycles = kControlFlowCycles; break;
      default: break;
    }
    n.cycles = c.cycles;
  }
}

void layoutMemory(ExecutableData &exe, bool allowOutOfMemory) {
  const Target &t = exe.target;
  // The IO tiles' stream landing buffers count as variables.
  std::vector<std::uint64_t> vars = ioTileStreamBytes(exe, numIOTiles(exe.options));
  std::vector<std::uint64_t> state(t.numTiles(), 0), code(t.numTiles(), 0);
  for (const auto &v : exe.variables) {
    for (const auto &iv : v.mapping) vars[iv.tile] += alignUp((iv.end - iv.begin) * sizeOf(v.type));
  }
  const auto &lib = codeletLibrary();
  std::vector<std::vector<bool>> codeletOnTile(lib.size());
  for (const auto &cs : exe.computeSets) {
    for (const auto &vx : cs.vertices) {
      std::uint64_t attrValues = 0;
      for (const auto &a : vx.attrs) attrValues += a.size();
      state[vx.tile] += kVertexStateBytes + kBytesPerOperand * (vx.operands.size() + attrValues);
      auto &seen = codeletOnTile[vx.codelet];
      if (seen.empty()) seen.assign(t.numTiles(), false);
      if (!seen[vx.tile]) {
        seen[vx.tile] = true;
        code[vx.tile] += kCodeletCodeBytes;
      }
    }
  }
  exe.tileBytes.assign(t.numTiles(), 0);
  for (unsigned tile = 0; tile < t.numTiles(); ++tile) {
    const std::uint64_t need = vars[tile] + state[tile] + code[tile];
    exe.tileBytes[tile] = need;
    if (need > t.bytesPerTile && !allowOutOfMemory) {
      throw LinkError(tile, need, t.bytesPerTile,
                      fmt::format("tile {} needs {} bytes of memory but has {} (variables {}, vertex state {}, code {})",
                                  tile, need, t.bytesPerTile, vars[tile], state[tile], code[tile]));
    }
  }
}

}  // namespace
}  // namespace detail

Executable compileGraph(const Graph &graph, const std::vector<program::Program> &programs, const OptionFlags &options,
                        const ProgressFunc &progress) {
  constexpr int kSteps = 5;
  auto report = [&](int step) {
    if (progress) progress(step, kSteps);
  };
  const OptionFlags resolved = resolveEngineOptions(options);
  auto exe = std::make_shared<detail::ExecutableData>();
  exe->options = resolved;
  detail::Builder builder(graph.data(), *exe);
  builder.variables();
  report(1);
  builder.computeSets();
  builder.handles();
  for (const auto &p : programs) exe->programs.push_back(builder.program(p.node()));
  report(2);
  exe->tileBytes.assign(exe->target.numTiles(), 0);
  detail::checkExecutable(*exe, ErrorKind::GraphError);
  detail::checkIOTiles(*exe, detail::numIOTiles(resolved), ErrorKind::GraphError);
  report(3);
  detail::computeCosts(*exe);
  const auto oom = resolved.find("debug.allowOutOfMemory");
  detail::layoutMemory(*exe, oom != resolved.end() && oom->second == "true");
  report(4);
  exe->finalize();
  report(5);
  return Executable(std::move(exe));
}

}  // namespace hwsim
