// The end-of-run report of mrt-run: requests, throughput, latency
// percentiles, as a table for people or JSON for machines. The first request
// (cold: first device transfers, first allocations) is shown apart and left
// out of the percentiles; the runner's own per-phase means follow. Next to
// the host's wall time and throughput stand the modelled ones of the target
// (the simulated device's cycles at its clock).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace mrt::run {

struct RunSummary {
  std::string model;
  unsigned replicas = 1, threads = 1;
  bool async = false;
  std::int64_t batch = 1;
  std::vector<double> latenciesUs;  // one per request, any order (the warm ones)
  std::optional<double> coldUs;     // the first request, kept out of latenciesUs
  std::chrono::duration<double> wall{};
  std::uint64_t failed = 0;
  // The runner's mean of each phase of a request (request, read_preparation,
  // read_queue, computation) over its kept traces, microseconds, in order.
  std::vector<std::pair<std::string, double>> phaseMeansUs;
  // Modelled device seconds of each replica over the run (empty: not known).
  std::vector<double> deviceSeconds;
};

// The target's figures: replicas run side by side, so the busiest one's
// modelled time bounds the run; per request is their sum over the requests.
struct ModelledFigures {
  double seconds = 0, usPerRequest = 0, requestsPerSecond = 0, samplesPerSecond = 0;
};
ModelledFigures modelledFigures(const RunSummary &summary, std::uint64_t requests);

struct LatencyFigures {
  std::uint64_t requests = 0, failed = 0;
  double seconds = 0, requestsPerSecond = 0, samplesPerSecond = 0;
  double minUs = 0, meanUs = 0, p50Us = 0, p90Us = 0, p95Us = 0, p99Us = 0, maxUs = 0;
};

LatencyFigures summarize(RunSummary summary);
std::string renderTable(const RunSummary &summary, const LatencyFigures &figures);
nlohmann::json renderJson(const RunSummary &summary, const LatencyFigures &figures);
// The percentile columns' header and row, shared with mrt-bench's table.
std::string latencyRows(const LatencyFigures &figures);
nlohmann::json latencyJson(const LatencyFigures &figures);

}  // namespace mrt::run
