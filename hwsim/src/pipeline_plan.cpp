// pipelinePlan: splits a program's top-level steps into per-IPU stages
// joined by inter-IPU copies (docs/hwsim.md "Pipelining"), or says why it
// cannot.
#include "hwsim/pipeline.hpp"

#include <algorithm>
#include <bit>
#include <optional>

#include <fmt/format.h>

#include "cost_model.hpp"
#include "exe_data.hpp"
#include "fail.hpp"

namespace hwsim {

namespace {

using detail::ExecutableData;
using detail::ExeNode;
using detail::NodeKind;

using IpuMask = std::uint64_t;  // bit i: the step touches data on IPU i
constexpr unsigned kMaxIpus = 64;

class Planner {
 public:
  explicit Planner(const ExecutableData &d) : d_(d), masks_(d.nodes.size()), cycles_(d.nodes.size()) {}

  PipelinePlan plan(std::uint32_t root) {
    std::vector<std::uint32_t> steps;
    flatten(root, steps);
    PipelinePlan p;
    p.stages.push_back({});
    if (d_.target.numIpus < 2) return whole(std::move(p), steps, "");
    if (d_.target.numIpus > kMaxIpus) return whole(std::move(p), steps, fmt::format("more than {} IPUs", kMaxIpus));
    std::vector<PipelineStage> stages;
    IpuMask used = 0;
    unsigned target = kMaxIpus;  // the IPU the pending transfers copy to, if any
    for (const std::uint32_t step : steps) {
      const auto &n = d_.nodes[step];
      if (const auto bad = unsupported(step)) return whole(std::move(p), steps, *bad);
      const IpuMask m = mask(step);
      const unsigned count = static_cast<unsigned>(std::popcount(m));
      if (count == 0) {  // a sync or an empty step: part of the current stage
        if (stages.empty()) stages.push_back(unplaced());
        stages.back().steps.push_back(step);
        continue;
      }
      const unsigned first = static_cast<unsigned>(std::countr_zero(m));
      if (count == 1) {
        if (stages.empty()) stages.push_back(unplaced());
        if (stages.back().ipu == kMaxIpus) stages.back().ipu = first;  // the first stage, after syncs
        if (stages.back().ipu != first || target != kMaxIpus) {
          if (target != kMaxIpus && target != first) {
            return whole(std::move(p), steps,
                         fmt::format("step {} ({} '{}') runs on IPU {}, but the copies before it go to IPU {}", step,
                                     detail::toString(n.kind), n.name, first, target));
          }
          if (used & m) {
            return whole(std::move(p), steps,
                         fmt::format("step {} ({} '{}') returns to IPU {} after another IPU's steps", step,
                                     detail::toString(n.kind), n.name, first));
          }
          stages.push_back(unplaced());
          stages.back().ipu = first;
          target = kMaxIpus;
        }
        used |= m;
        stages.back().steps.push_back(step);
        continue;
      }
      // Two IPUs: a transfer from the current stage's IPU to the next one's.
      const unsigned second = static_cast<unsigned>(63 - std::countl_zero(m));
      const bool isCopy = n.kind == NodeKind::Copy;
      if (count != 2 || !isCopy || stages.empty() || stages.back().ipu == kMaxIpus) {
        return whole(std::move(p), steps,
                     fmt::format("step {} ({} '{}') spans {} IPUs and is not a copy from one stage to the next", step,
                                 detail::toString(n.kind), n.name, count));
      }
      const unsigned from = stages.back().ipu;
      const unsigned to = from == first ? second : from == second ? first : kMaxIpus;
      if (to == kMaxIpus || (used & (IpuMask{1} << to)) || (target != kMaxIpus && target != to)) {
        return whole(std::move(p), steps,
                     fmt::format("copy step {} ('{}') between IPUs {} and {} does not join the stage on IPU {} to the "
                                 "next stage",
                                 step, n.name, first, second, from));
      }
      target = to;
      stages.back().transfers.push_back(step);
    }
    if (target != kMaxIpus) {
      return whole(std::move(p), steps, fmt::format("the program ends with copies to IPU {}, which runs nothing", target));
    }
    if (stages.size() < 2) {
      if (!stages.empty() && stages[0].ipu != kMaxIpus) p.stages[0].ipu = stages[0].ipu;
      return whole(std::move(p), steps, "");
    }
    if (const auto shared = sharedHostData(stages)) return whole(std::move(p), steps, *shared);
    for (auto &s : stages) {
      for (const auto step : s.steps) s.cycles += staticCycles(step);
      for (const auto step : s.transfers) s.transferCycles += staticCycles(step);
    }
    p.stages = std::move(stages);
    return p;
  }

 private:
  static PipelineStage unplaced() {
    PipelineStage s;
    s.ipu = kMaxIpus;
    return s;
  }

  // Every step as one stage, not pipelined for `reason`.
  PipelinePlan whole(PipelinePlan p, const std::vector<std::uint32_t> &steps, std::string reason) {
    p.stages.resize(1);
    p.stages[0].steps.assign(steps.begin(), steps.end());
    p.stages[0].transfers.clear();
    p.stages[0].cycles = 0;
    p.stages[0].transferCycles = 0;
    for (const auto step : steps) p.stages[0].cycles += staticCycles(step);
    p.reason = std::move(reason);
    return p;
  }

  void flatten(std::uint32_t id, std::vector<std::uint32_t> &out) const {
    const auto &n = d_.nodes[id];
    if (n.kind != NodeKind::Sequence) {
      out.push_back(id);
      return;
    }
    for (const auto c : n.children) flatten(c, out);
  }

  // What a stage on another thread cannot do: print (one stream for all).
  std::optional<std::string> unsupported(std::uint32_t id) const {
    const auto &n = d_.nodes[id];
    if (n.kind == NodeKind::PrintTensor) return fmt::format("step {} prints tensor '{}'", id, n.name);
    for (const auto c : n.children) {
      if (auto bad = unsupported(c)) return bad;
    }
    return std::nullopt;
  }

  IpuMask viewMask(std::uint32_t view) const {
    IpuMask m = 0;
    if (view == detail::kNoView) return m;
    detail::forEachTileRun(d_, d_.views[view], [&](std::uint64_t, std::uint64_t, std::uint32_t tile) {
      m |= IpuMask{1} << d_.target.ipuOfTile(tile);
    });
    return m;
  }

  IpuMask mask(std::uint32_t id) {
    if (masks_[id]) return *masks_[id];
    const auto &n = d_.nodes[id];
    IpuMask m = viewMask(n.view0) | viewMask(n.view1);
    if (n.kind == NodeKind::Execute) {
      for (const auto &vx : d_.computeSets[n.index].vertices) m |= IpuMask{1} << d_.target.ipuOfTile(vx.tile);
    }
    for (const auto c : n.children) m |= mask(c);
    masks_[id] = m;
    return m;
  }

  // Modelled cycles of one execution of a step with its children: loops as
  // many times as they repeat (RepeatWhile: once), branches at their
  // costliest.
  std::uint64_t staticCycles(std::uint32_t id) {
    if (cycles_[id]) return *cycles_[id];
    const auto &n = d_.nodes[id];
    std::uint64_t children = 0;
    switch (n.kind) {
      case NodeKind::If:
      case NodeKind::Switch:
        for (const auto c : n.children) children = std::max(children, staticCycles(c));
        break;
      case NodeKind::Repeat: children = n.count * staticCycles(n.children[0]); break;
      default:
        for (const auto c : n.children) children += staticCycles(c);
        break;
    }
    const std::uint64_t own = n.kind == NodeKind::Repeat ? n.count * n.cycles : n.cycles;
    cycles_[id] = own + children;
    return own + children;
  }

  // A stream or remote buffer used by two stages would be used by two runs
  // at once.
  std::optional<std::string> sharedHostData(const std::vector<PipelineStage> &stages) const {
    std::vector<int> streamStage(d_.streams.size(), -1), remoteStage(d_.remoteBuffers.size(), -1);
    for (std::size_t s = 0; s < stages.size(); ++s) {
      std::vector<std::uint32_t> todo(stages[s].steps.begin(), stages[s].steps.end());
      todo.insert(todo.end(), stages[s].transfers.begin(), stages[s].transfers.end());
      while (!todo.empty()) {
        const auto &n = d_.nodes[todo.back()];
        todo.pop_back();
        todo.insert(todo.end(), n.children.begin(), n.children.end());
        const bool stream = n.kind == NodeKind::StreamToTensor || n.kind == NodeKind::TensorToStream;
        const bool remote = n.kind == NodeKind::RemoteToTensor || n.kind == NodeKind::TensorToRemote;
        if (!stream && !remote) continue;
        int &owner = stream ? streamStage[n.index] : remoteStage[n.index];
        if (owner >= 0 && owner != static_cast<int>(s)) {
          return fmt::format("{} '{}' is used by the stages on IPUs {} and {}", stream ? "stream" : "remote buffer",
                             stream ? d_.streams[n.index].handle : d_.remoteBuffers[n.index].handle,
                             stages[static_cast<std::size_t>(owner)].ipu, stages[s].ipu);
        }
        owner = static_cast<int>(s);
      }
    }
    return std::nullopt;
  }

  const ExecutableData &d_;
  std::vector<std::optional<IpuMask>> masks_;
  std::vector<std::optional<std::uint64_t>> cycles_;
};

}  // namespace

std::uint64_t PipelinePlan::latencyCycles() const {
  std::uint64_t total = 0;
  for (const auto &s : stages) total += s.cycles + s.transferCycles;
  return total;
}

std::uint64_t PipelinePlan::intervalCycles() const {
  if (!pipelined()) return latencyCycles();
  std::uint64_t stage = 0, transfer = 0;
  for (const auto &s : stages) {
    stage = std::max(stage, s.cycles);
    transfer = std::max(transfer, s.transferCycles);
  }
  return stage + transfer;
}

PipelinePlan pipelinePlan(const Executable &exe, unsigned program) {
  const auto &d = exe.data();
  if (program >= d.programs.size()) detail::fail(ErrorKind::InvalidArgument, "program {} out of range ({} programs)", program, d.programs.size());
  return Planner(d).plan(d.programs[program]);
}

}  // namespace hwsim
