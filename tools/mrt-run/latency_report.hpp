// The end-of-run report of mrt-run: requests, throughput, latency
// percentiles, as a table for people or JSON for machines.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mrt::run {

struct RunSummary {
  std::string model;
  unsigned replicas = 1, threads = 1;
  bool async = false;
  std::int64_t batch = 1;
  std::vector<double> latenciesUs;  // one per request, any order
  std::chrono::duration<double> wall{};
  std::uint64_t failed = 0;
};

struct LatencyFigures {
  std::uint64_t requests = 0, failed = 0;
  double seconds = 0, requestsPerSecond = 0, samplesPerSecond = 0;
  double meanUs = 0, p50Us = 0, p90Us = 0, p99Us = 0, maxUs = 0;
};

LatencyFigures summarize(RunSummary summary);
std::string renderTable(const RunSummary &summary, const LatencyFigures &figures);
nlohmann::json renderJson(const RunSummary &summary, const LatencyFigures &figures);

}  // namespace mrt::run
