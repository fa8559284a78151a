// Profiles: the text summary, the interval CSV of reportIntervals and the
// Chrome trace event JSON; autoReport.* writes them to autoReport.directory.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <numeric>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine_impl.hpp"
#include "fail.hpp"

namespace hwsim {

using detail::fail;

namespace {

void requireProfile(const Engine::Impl &im) {
  if (!im.everProfiled) fail(ErrorKind::ProfilingDisabled, "execution profiling is disabled (set debug.instrument or call enableExecutionProfiling)");
}

// What a step spends its cycles on. The values are the trace's thread ids
// (Perfetto wants integers; thread_name metadata names them), and the
// summary's per-phase totals come in this order.
enum class Phase : unsigned { Compute = 1, Exchange, Sync, Host, Control };
constexpr Phase kPhases[] = {Phase::Compute, Phase::Exchange, Phase::Sync, Phase::Host, Phase::Control};

Phase phaseOf(detail::NodeKind k) {
  switch (k) {
    case detail::NodeKind::Execute: return Phase::Compute;
    case detail::NodeKind::Copy: return Phase::Exchange;
    case detail::NodeKind::StreamToTensor:
    case detail::NodeKind::TensorToStream:
    case detail::NodeKind::RemoteToTensor:
    case detail::NodeKind::TensorToRemote:
    case detail::NodeKind::PrintTensor: return Phase::Host;
    case detail::NodeKind::Sync: return Phase::Sync;
    default: return Phase::Control;
  }
}

const char *nameOf(Phase phase) {
  switch (phase) {
    case Phase::Compute: return "compute";
    case Phase::Exchange: return "exchange";
    case Phase::Sync: return "sync";
    case Phase::Host: return "host";
    case Phase::Control: break;
  }
  return "control";
}

}  // namespace

namespace {
void summary(const Engine::Impl &im, std::ostream &out) {
  const auto &d = *im.d;
  const auto &tb = d.tileBytes;
  const std::uint64_t total = std::accumulate(tb.begin(), tb.end(), std::uint64_t{0});
  const auto maxIt = std::max_element(tb.begin(), tb.end());
  const auto used = static_cast<std::size_t>(std::count_if(tb.begin(), tb.end(), [](auto b) { return b > 0; }));
  out << "Target: " << describe(d.target) << ", replication factor " << d.replicationFactor << "\n";
  out << "Memory (per replica):\n";
  out << fmt::format("  total {} bytes on {} of {} tiles\n", total, used, tb.size());
  if (maxIt != tb.end()) {
    out << fmt::format("  busiest tile {}: {} of {} bytes ({:.1f}%)\n", maxIt - tb.begin(), *maxIt, d.target.bytesPerTile,
                       100.0 * static_cast<double>(*maxIt) / static_cast<double>(d.target.bytesPerTile));
    out << fmt::format("  mean over used tiles: {:.0f} bytes\n", used ? static_cast<double>(total) / static_cast<double>(used) : 0.0);
  }
  out << "Execution:\n";
  for (unsigned r = 0; r < im.replicas.size(); ++r) {
    out << fmt::format("  replica {}: {} cycles since load ({:.3f} us)\n", r, im.replicas[r]->cycles.load(),
                       static_cast<double>(im.replicas[r]->cycles.load()) / d.target.clockHz * 1e6);
  }
  if (!im.everProfiled) {
    out << "  (execution profiling disabled: no per-step breakdown)\n";
    return;
  }
  struct Agg {
    std::uint64_t count = 0, cycles = 0;
  };
  std::map<std::uint32_t, Agg> steps;
  std::uint64_t profiled = 0;
  for (const auto &e : im.replicas[0]->events) {
    auto &a = steps[e.node];
    ++a.count;
    a.cycles += e.end - e.begin;
    profiled += e.end - e.begin;
  }
  std::vector<std::pair<std::uint32_t, Agg>> sorted(steps.begin(), steps.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.second.cycles > b.second.cycles; });
  out << fmt::format("  profiled steps of replica 0: {} cycles\n", profiled);
  std::map<Phase, std::uint64_t> byPhase;
  for (const auto &[id, a] : steps) byPhase[phaseOf(d.nodes[id].kind)] += a.cycles;
  out << "  by phase:";
  for (const Phase phase : kPhases) {
    out << fmt::format(" {} {} ({:.1f}%){}", nameOf(phase), byPhase[phase],
                       profiled ? 100.0 * static_cast<double>(byPhase[phase]) / static_cast<double>(profiled) : 0.0,
                       phase == Phase::Control ? "\n" : ",");
  }
  out << fmt::format("  {:>6} {:<15} {:<9} {:<30} {:>8} {:>14} {:>7}\n", "step", "kind", "phase", "name", "count",
                     "cycles", "%");
  for (const auto &[id, a] : sorted) {
    const auto &n = d.nodes[id];
    out << fmt::format("  {:>6} {:<15} {:<9} {:<30} {:>8} {:>14} {:>6.1f}%\n", id, detail::toString(n.kind),
                       nameOf(phaseOf(n.kind)), n.name.substr(0, 30),
                       a.count, a.cycles, profiled ? 100.0 * static_cast<double>(a.cycles) / static_cast<double>(profiled) : 0.0);
  }
}

void intervals(const Engine::Impl &im, std::ostream &out) {
  requireProfile(im);
  out << "begin,end,compute_tiles,exchange_tiles,sync_tiles\n";
  for (const auto &e : im.replicas[0]->events) {
    const auto &n = im.d->nodes[e.node];
    out << e.begin << ',' << e.end << ',' << n.computeTiles << ',' << n.exchangeTiles << ',' << n.syncTiles << '\n';
  }
}

void trace(const Engine::Impl &im, std::ostream &out) {
  requireProfile(im);
  const double usPerCycle = 1e6 / im.d->target.clockHz;
  nlohmann::json events = nlohmann::json::array();
  for (unsigned r = 0; r < im.replicas.size(); ++r) {
    events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", r}, {"args", {{"name", fmt::format("replica {}", r)}}}});
    for (const Phase phase : kPhases) {
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", r}, {"tid", static_cast<unsigned>(phase)},
                        {"args", {{"name", nameOf(phase)}}}});
    }
    for (const auto &e : im.replicas[r]->events) {
      const auto &n = im.d->nodes[e.node];
      const Phase phase = phaseOf(n.kind);
      events.push_back({{"name", n.name.empty() ? detail::toString(n.kind) : n.name},
                        {"cat", nameOf(phase)},
                        {"ph", "X"},
                        {"pid", r},
                        {"tid", static_cast<unsigned>(phase)},
                        {"ts", static_cast<double>(e.begin) * usPerCycle},
                        {"dur", static_cast<double>(e.end - e.begin) * usPerCycle},
                        {"args", {{"step", e.node}, {"kind", detail::toString(n.kind)}, {"cycles", e.end - e.begin},
                                  {"compute_tiles", n.computeTiles}, {"exchange_tiles", n.exchangeTiles}}}});
    }
  }
  nlohmann::json doc = {{"traceEvents", events}, {"displayTimeUnit", "ns"},
                        {"otherData", {{"target", describe(im.d->target)}, {"clock_hz", im.d->target.clockHz}}}};
  out << doc.dump() << '\n';
}

}  // namespace

void Engine::printProfileSummary(std::ostream &out, const OptionFlags &) const { summary(*impl_, out); }
void Engine::reportIntervals(std::ostream &out) const { intervals(*impl_, out); }
void Engine::writeTrace(std::ostream &out) const { trace(*impl_, out); }

void Engine::Impl::writeAutoReports() const {
  if (!autoExecutionProfile || state == State::Constructed) return;
  namespace fs = std::filesystem;
  fs::create_directories(reportDir);
  std::ofstream traceFile(fs::path(reportDir) / "profile_trace.json");
  trace(*this, traceFile);
  std::ofstream csvFile(fs::path(reportDir) / "intervals.csv");
  intervals(*this, csvFile);
  std::ofstream summaryFile(fs::path(reportDir) / "profile_summary.txt");
  summary(*this, summaryFile);
}

void Engine::Impl::writeGraphProfile() const {
  namespace fs = std::filesystem;
  fs::create_directories(reportDir);
  nlohmann::json vars = nlohmann::json::array();
  for (const auto &v : d->variables) {
    vars.push_back({{"name", v.name}, {"type", std::string(toString(v.type))}, {"shape", v.shape},
                    {"bytes", v.numElements * sizeOf(v.type)}, {"constant", v.isConstant}});
  }
  nlohmann::json doc = {{"target", describe(d->target)},
                        {"replication_factor", d->replicationFactor},
                        {"bytes_per_tile", d->target.bytesPerTile},
                        {"memory_per_tile", d->tileBytes},
                        {"variables", vars}};
  std::ofstream(fs::path(reportDir) / "graph_profile.json") << doc.dump(1) << '\n';
}

}  // namespace hwsim
