// fuseExecutables: a linker for executables. Each input's objects are
// appended to the fused executable's tables, every index into a table moved
// by where the input's part of the table starts, every tile moved to the
// input's own tile range, and every host-visible handle put under the
// input's name so that the inputs' handles cannot collide.
#include "hwsim/fuse.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "exe_data.hpp"
#include "fail.hpp"
#include "validate.hpp"

namespace hwsim {

namespace {

using detail::ExecutableData;
using detail::fail;
using detail::kNoView;

// The lowest and highest tile an executable uses (memory, vertices or
// variable elements); empty if it uses none.
struct TileSpan {
  unsigned lo = 0;
  unsigned hi = 0;
  bool empty = true;
  unsigned size() const { return empty ? 0 : hi - lo + 1; }
  void add(unsigned tile) {
    lo = empty ? tile : std::min(lo, tile);
    hi = empty ? tile : std::max(hi, tile);
    empty = false;
  }
};

TileSpan usedTiles(const ExecutableData &d) {
  TileSpan span;
  for (std::size_t tile = 0; tile < d.tileBytes.size(); ++tile) {
    if (d.tileBytes[tile] != 0) span.add(static_cast<unsigned>(tile));
  }
  for (const auto &cs : d.computeSets) {
    for (const auto &vertex : cs.vertices) span.add(vertex.tile);
  }
  for (const auto &variable : d.variables) {
    for (const auto &interval : variable.mapping) span.add(interval.tile);
  }
  return span;
}

// The same IPU with the same cost-model rates: the fused executable has one target.
bool sameTarget(const Target &a, const Target &b) {
  const auto fields = [](const Target &t) {
    return std::tie(t.ipuVersion, t.name, t.numIpus, t.tilesPerIpu, t.bytesPerTile, t.workerContextsPerTile, t.clockHz,
                    t.f32MatMulFlopsPerCycle, t.f16MatMulFlopsPerCycle, t.f32VectorWidth, t.f16VectorWidth,
                    t.intVectorWidth, t.transcendentalCyclesPerElement, t.vertexOverheadCycles,
                    t.exchangeBytesPerCycle, t.hostLinkBytesPerSecond, t.ipuLinkBytesPerSecond,
                    t.internalSyncCycles, t.externalSyncCycles, t.hostSyncCycles);
  };
  return fields(a) == fields(b);
}

void checkInput(const FusionInput &input, const FusionInput &first, std::set<std::string> &names) {
  if (input.name.empty() || input.name.find('/') != std::string::npos) {
    fail(ErrorKind::InvalidArgument, "fusion: model name '{}' must be non-empty and contain no '/'", input.name);
  }
  if (!names.insert(input.name).second) fail(ErrorKind::InvalidArgument, "fusion: two models are named '{}'", input.name);
  if (!input.executable.valid()) fail(ErrorKind::InvalidArgument, "fusion: model '{}' has no executable", input.name);
  const Executable &exe = input.executable;
  if (exe.replicationFactor() != 1 || exe.target().numIpus != 1) {
    fail(ErrorKind::InvalidArgument,
         "fusion: model '{}' runs on {} IPU(s) with replication factor {}; only models on one IPU without "
         "replication can be fused",
         input.name, exe.target().numIpus, exe.replicationFactor());
  }
  if (!sameTarget(exe.target(), first.executable.target())) {
    fail(ErrorKind::InvalidArgument, "fusion: model '{}' is compiled for {}, model '{}' for {}; fused models share one target",
         input.name, describe(exe.target()), first.name, describe(first.executable.target()));
  }
}

// The inputs' compile options together; a key with two values is an error.
OptionFlags mergeOptions(const std::vector<FusionInput> &inputs) {
  OptionFlags merged;
  std::map<std::string, std::string> from;  // key -> the input that set it
  for (const FusionInput &input : inputs) {
    for (const auto &[key, value] : input.executable.options()) {
      const auto [it, inserted] = merged.emplace(key, value);
      if (inserted) {
        from[key] = input.name;
      } else if (it->second != value) {
        fail(ErrorKind::InvalidArgument, "fusion: compile option '{}' is '{}' in model '{}' and '{}' in model '{}'", key,
             it->second, from[key], value, input.name);
      }
    }
  }
  return merged;
}

// Places each input's tile span after the previous one's; LinkError naming
// every input's tiles if they do not fit on one IPU together.
std::vector<FusedPart> placeParts(const std::vector<FusionInput> &inputs, const std::vector<TileSpan> &spans,
                                  unsigned tilesPerIpu) {
  std::vector<FusedPart> parts;
  std::uint64_t next = 0;
  std::string needs;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    FusedPart part;
    part.name = inputs[i].name;
    part.numPrograms = inputs[i].executable.numPrograms();
    part.firstTile = static_cast<unsigned>(std::min<std::uint64_t>(next, tilesPerIpu));
    part.numTiles = spans[i].size();
    next += part.numTiles;
    needs += fmt::format("{}'{}' {} tile(s){}", needs.empty() ? "" : ", ", part.name, part.numTiles,
                         spans[i].empty ? "" : fmt::format(" ({}..{})", spans[i].lo, spans[i].hi));
    parts.push_back(std::move(part));
  }
  if (next > tilesPerIpu) {
    fail(ErrorKind::LinkError, "fusion: the models need {} tiles together ({}), the IPU has {}", next, needs,
         tilesPerIpu);
  }
  return parts;
}

// Appends `in` to `out`, its tiles moved by `part`, its handles renamed.
void append(ExecutableData &out, const ExecutableData &in, const TileSpan &span, FusedPart &part) {
  const auto tile = [&](std::uint32_t t) { return t - span.lo + part.firstTile; };
  const auto varBase = static_cast<std::uint32_t>(out.variables.size());
  const auto viewBase = static_cast<std::uint32_t>(out.views.size());
  const auto csBase = static_cast<std::uint32_t>(out.computeSets.size());
  const auto streamBase = static_cast<std::uint32_t>(out.streams.size());
  const auto remoteBase = static_cast<std::uint32_t>(out.remoteBuffers.size());
  const auto nodeBase = static_cast<std::uint32_t>(out.nodes.size());
  const auto view = [&](std::uint32_t v) { return v == kNoView ? v : v + viewBase; };

  for (detail::ExeVariable variable : in.variables) {
    for (auto &interval : variable.mapping) interval.tile = tile(interval.tile);
    out.variables.push_back(std::move(variable));
  }
  // Regions, shapes and operands are copied into out's pools: in's may go first.
  for (detail::ExeView v : in.views) {
    v.shape = out.shapePool.intern(*v.shape);
    v.regions = out.regionPool.copy(v.regions, [&](detail::ExeRegion region) {
      region.var += varBase;
      return region;
    });
    out.views.push_back(std::move(v));
  }
  for (detail::ExeComputeSet cs : in.computeSets) {
    for (auto &vertex : cs.vertices) {
      vertex.tile = tile(vertex.tile);
      vertex.operands = out.operandPool.copy(vertex.operands, view);
    }
    out.computeSets.push_back(std::move(cs));
  }
  for (StreamInfo stream : in.streams) {
    stream.handle = fusedHandle(part.name, stream.handle);
    out.streams.push_back(std::move(stream));
  }
  for (detail::ExeHostCopy copy : in.hostCopies) {
    copy.handle = fusedHandle(part.name, copy.handle);
    copy.view += viewBase;
    out.hostCopies.push_back(std::move(copy));
  }
  for (RemoteBufferInfo buffer : in.remoteBuffers) {
    buffer.handle = fusedHandle(part.name, buffer.handle);
    out.remoteBuffers.push_back(std::move(buffer));
  }
  for (detail::ExeNode node : in.nodes) {
    for (auto &child : node.children) child += nodeBase;
    switch (node.kind) {
      case detail::NodeKind::Execute: node.index += csBase; break;
      case detail::NodeKind::StreamToTensor:
      case detail::NodeKind::TensorToStream: node.index += streamBase; break;
      case detail::NodeKind::RemoteToTensor:
      case detail::NodeKind::TensorToRemote: node.index += remoteBase; break;
      default: break;  // Sync: a sync type; Call: its body is its child
    }
    node.view0 = view(node.view0);
    node.view1 = view(node.view1);
    out.nodes.push_back(std::move(node));
  }
  part.firstProgram = static_cast<unsigned>(out.programs.size());
  std::set<std::uint32_t> renamed;  // a root shared by two programs is renamed once
  for (const std::uint32_t root : in.programs) {
    out.programs.push_back(root + nodeBase);
    if (renamed.insert(root).second) out.nodes[root + nodeBase].name = fusedHandle(part.name, in.nodes[root].name);
  }
  if (!span.empty) {
    for (unsigned t = span.lo; t <= span.hi; ++t) out.tileBytes[tile(t)] = in.tileBytes[t];
  }
}

}  // namespace

std::string fusedHandle(const std::string &part, const std::string &handle) { return part + "/" + handle; }

Fusion fuseExecutables(const std::vector<FusionInput> &inputs) {
  if (inputs.empty()) fail(ErrorKind::InvalidArgument, "fusion: no models to fuse");
  std::set<std::string> names;
  for (const FusionInput &input : inputs) checkInput(input, inputs.front(), names);
  std::vector<TileSpan> spans;
  for (const FusionInput &input : inputs) spans.push_back(usedTiles(input.executable.data()));
  const Target &target = inputs.front().executable.target();

  Fusion fusion;
  fusion.parts = placeParts(inputs, spans, target.tilesPerIpu);
  auto out = std::make_shared<ExecutableData>();
  out->target = target;
  out->replicationFactor = 1;
  out->options = mergeOptions(inputs);
  out->tileBytes.assign(target.numTiles(), 0);
  for (std::size_t i = 0; i < inputs.size(); ++i) append(*out, inputs[i].executable.data(), spans[i], fusion.parts[i]);
  out->finalize();
  // The inputs were valid and only moved: a failure here is a bug in append().
  detail::checkExecutable(*out, ErrorKind::InvalidArgument);
  fusion.executable = Executable(std::move(out));
  return fusion;
}

}  // namespace hwsim
