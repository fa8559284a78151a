// The end-of-run report of mrt-bench: runs, throughput, latency percentiles,
// bytes moved and simulated device time, as a table or as JSON. Latency
// percentiles come from mrt-run's summarize() (tools/mrt-run/latency_report).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mrt::benchtool {

struct BenchSummary {
  std::string mode;   // "callbacks" or "queues"
  std::string model;  // the executable's name
  bool real_data = false;
  unsigned replicas = 1;
  std::int64_t ring_size_multiplier = 0;   // queues mode only (0: not shown)
  std::int64_t batch = 1;                  // samples per run
  std::uint64_t bytes_in_per_run = 0;      // user input bytes copied to the device per run
  std::uint64_t bytes_out_per_run = 0;     // output bytes copied back per run
  std::vector<double> latencies_us;        // one per run, every replica
  std::chrono::duration<double> wall{};
  double device_seconds = 0;               // simulated, summed over replicas
  std::uint64_t outputs_checked = 0, mismatches = 0;
  std::string outputs_not_checked;         // real data: why no output was compared (empty: they were)
};

std::string renderTable(const BenchSummary &summary);
nlohmann::json renderJson(const BenchSummary &summary);

}  // namespace mrt::benchtool
