#include "bench_report.hpp"

#include <fmt/format.h>

#include "latency_report.hpp"

namespace mrt::benchtool {

namespace {

struct Rates {
  run::LatencyFigures latency;
  double bytes_in_per_second = 0, bytes_out_per_second = 0;
  double device_us_per_run = 0;
};

Rates ratesOf(const BenchSummary &s) {
  run::RunSummary runs;
  runs.latenciesUs = s.latencies_us;
  runs.wall = s.wall;
  runs.batch = s.batch;
  Rates r{run::summarize(std::move(runs))};
  r.bytes_in_per_second = r.latency.requestsPerSecond * static_cast<double>(s.bytes_in_per_run);
  r.bytes_out_per_second = r.latency.requestsPerSecond * static_cast<double>(s.bytes_out_per_run);
  if (r.latency.requests) r.device_us_per_run = s.device_seconds * 1e6 / static_cast<double>(r.latency.requests);
  return r;
}

std::string mebibytes(double bytes) { return fmt::format("{:.1f}", bytes / (1024.0 * 1024.0)); }

}  // namespace

std::string renderTable(const BenchSummary &s) {
  const Rates r = ratesOf(s);
  const auto &f = r.latency;
  std::string out = fmt::format("\n{} benchmark on {}, {} replica(s), batch {}, {}{}\n", s.mode, s.model, s.replicas,
                                s.batch, s.real_data ? "real data" : "runtime overhead only (no fresh data)",
                                s.ring_size_multiplier ? fmt::format(", rings of {} x batch", s.ring_size_multiplier) : "");
  auto row = [&out](std::string_view name, const std::string &value) { out += fmt::format("  {:<28}{:>14}\n", name, value); };
  row("runs", fmt::format("{}", f.requests));
  row("wall time (s)", fmt::format("{:.3f}", f.seconds));
  row("runs/s", fmt::format("{:.0f}", f.requestsPerSecond));
  row("samples/s", fmt::format("{:.0f}", f.samplesPerSecond));
  row("input MiB/s", mebibytes(r.bytes_in_per_second));
  row("output MiB/s", mebibytes(r.bytes_out_per_second));
  row("simulated device time (s)", fmt::format("{:.6f}", s.device_seconds));
  row("simulated device us/run", fmt::format("{:.2f}", r.device_us_per_run));
  if (s.real_data) {
    row("outputs checked", fmt::format("{}", s.outputs_checked));
    row("mismatches", fmt::format("{}", s.mismatches));
    if (!s.outputs_not_checked.empty()) out += fmt::format("  note: {}\n", s.outputs_not_checked);
  }
  out += run::latencyRows(f);
  return out;
}

nlohmann::json renderJson(const BenchSummary &s) {
  const Rates r = ratesOf(s);
  const auto &f = r.latency;
  nlohmann::json json = {
      {"mode", s.mode},
      {"model", s.model},
      {"real_data", s.real_data},
      {"replicas", s.replicas},
      {"batch", s.batch},
      {"runs", f.requests},
      {"seconds", f.seconds},
      {"runs_per_second", f.requestsPerSecond},
      {"samples_per_second", f.samplesPerSecond},
      {"bytes_in_per_run", s.bytes_in_per_run},
      {"bytes_out_per_run", s.bytes_out_per_run},
      {"bytes_in_per_second", r.bytes_in_per_second},
      {"bytes_out_per_second", r.bytes_out_per_second},
      {"device_seconds", s.device_seconds},
      {"device_us_per_run", r.device_us_per_run},
      {"latency_us", run::latencyJson(f)}};
  if (s.ring_size_multiplier) json["ring_size_multiplier"] = s.ring_size_multiplier;
  if (s.real_data) {
    json["outputs_checked"] = s.outputs_checked;
    json["mismatches"] = s.mismatches;
    if (!s.outputs_not_checked.empty()) json["outputs_not_checked"] = s.outputs_not_checked;
  }
  return json;
}

}  // namespace mrt::benchtool
