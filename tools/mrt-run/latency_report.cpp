#include "latency_report.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

namespace mrt::run {

namespace {
// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double> &sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(rank, sorted.size() - 1)];
}
}  // namespace

LatencyFigures summarize(RunSummary summary) {
  auto &l = summary.latenciesUs;
  std::sort(l.begin(), l.end());
  LatencyFigures f;
  f.requests = l.size() + (summary.coldUs ? 1 : 0);
  f.failed = summary.failed;
  f.seconds = summary.wall.count();
  if (f.seconds > 0) {
    f.requestsPerSecond = static_cast<double>(f.requests) / f.seconds;
    f.samplesPerSecond = f.requestsPerSecond * static_cast<double>(summary.batch);
  }
  if (!l.empty()) {
    f.minUs = l.front();
    f.meanUs = std::accumulate(l.begin(), l.end(), 0.0) / static_cast<double>(l.size());
    f.p50Us = percentile(l, 0.50);
    f.p90Us = percentile(l, 0.90);
    f.p95Us = percentile(l, 0.95);
    f.p99Us = percentile(l, 0.99);
    f.maxUs = l.back();
  }
  return f;
}

ModelledFigures modelledFigures(const RunSummary &s, std::uint64_t requests) {
  ModelledFigures m;
  if (s.deviceSeconds.empty() || requests == 0) return m;
  m.seconds = *std::max_element(s.deviceSeconds.begin(), s.deviceSeconds.end());
  m.usPerRequest = std::accumulate(s.deviceSeconds.begin(), s.deviceSeconds.end(), 0.0) * 1e6 /
                   static_cast<double>(requests);
  if (m.seconds > 0) {
    m.requestsPerSecond = static_cast<double>(requests) / m.seconds;
    m.samplesPerSecond = m.requestsPerSecond * static_cast<double>(s.batch);
  }
  return m;
}

std::string latencyRows(const LatencyFigures &f) {
  std::string out = fmt::format("  {:<14}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n", "latency (us)", "min", "mean",
                                "p50", "p90", "p95", "p99", "max");
  out += fmt::format("  {:<14}{:>10.1f}{:>10.1f}{:>10.1f}{:>10.1f}{:>10.1f}{:>10.1f}{:>10.1f}\n", "", f.minUs, f.meanUs,
                     f.p50Us, f.p90Us, f.p95Us, f.p99Us, f.maxUs);
  return out;
}

nlohmann::json latencyJson(const LatencyFigures &f) {
  return {{"min", f.minUs}, {"mean", f.meanUs}, {"p50", f.p50Us}, {"p90", f.p90Us},
          {"p95", f.p95Us}, {"p99", f.p99Us},   {"max", f.maxUs}};
}

std::string renderTable(const RunSummary &s, const LatencyFigures &f) {
  std::string out = fmt::format("\n{} on {} replica(s), {} client thread(s), {}, batch {}\n", s.model, s.replicas,
                                s.threads, s.async ? "async" : "sync", s.batch);
  out += fmt::format("  {:<30}{:>14}\n", "requests", f.requests);
  if (f.failed) out += fmt::format("  {:<30}{:>14}\n", "failed", f.failed);
  const ModelledFigures m = modelledFigures(s, f.requests);
  auto hostAndTarget = [&out](const char *name, double host, double target) {
    out += fmt::format("  {:<30}{:>14.1f}{:>16.1f}\n", name, host, target);
  };
  out += fmt::format("  {:<30}{:>14}{:>16}\n", "", "host", "target (model)");
  hostAndTarget("wall time (ms)", f.seconds * 1e3, m.seconds * 1e3);
  hostAndTarget("throughput (req/s)", f.requestsPerSecond, m.requestsPerSecond);
  hostAndTarget("samples/s", f.samplesPerSecond, m.samplesPerSecond);
  out += fmt::format("  {:<30}{:>14}{:>16.2f}\n", "device time per request (us)", "", m.usPerRequest);
  if (s.coldUs) out += fmt::format("  {:<30}{:>14.1f}\n", "first request (us, cold)", *s.coldUs);
  out += latencyRows(f);
  if (!s.phaseMeansUs.empty()) {
    out += "  runner phases, mean (us)\n";
    for (const auto &[phase, us] : s.phaseMeansUs) out += fmt::format("    {:<28}{:>14.1f}\n", phase, us);
  }
  return out;
}

namespace {
nlohmann::json modelledJson(const RunSummary &s, const LatencyFigures &f) {
  const ModelledFigures m = modelledFigures(s, f.requests);
  return {{"seconds", m.seconds},
          {"device_us_per_request", m.usPerRequest},
          {"requests_per_second", m.requestsPerSecond},
          {"samples_per_second", m.samplesPerSecond},
          {"replica_device_seconds", s.deviceSeconds}};
}
}  // namespace

nlohmann::json renderJson(const RunSummary &s, const LatencyFigures &f) {
  nlohmann::json phases = nlohmann::json::object();
  for (const auto &[phase, us] : s.phaseMeansUs) phases[phase] = us;
  return {{"model", s.model},
          {"replicas", s.replicas},
          {"threads", s.threads},
          {"async", s.async},
          {"batch", s.batch},
          {"requests", f.requests},
          {"failed", f.failed},
          {"seconds", f.seconds},
          {"requests_per_second", f.requestsPerSecond},
          {"samples_per_second", f.samplesPerSecond},
          {"first_request_us", s.coldUs ? nlohmann::json(*s.coldUs) : nlohmann::json(nullptr)},
          {"latency_us", latencyJson(f)},
          {"phase_mean_us", phases},
          {"modelled", modelledJson(s, f)}};
}

}  // namespace mrt::run
