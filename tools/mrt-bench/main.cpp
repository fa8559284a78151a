// mrt-bench callbacks|queues FILE... : the seeds' callbacks and queues
// benchmarks (User Guide, Tools) on the simulated IPU; docs/tools.md says
// what each mode and --real-data measure.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#include "tool_cli.hpp"
#include "tool_json.hpp"
#include "bench_report.hpp"
#include "driver.hpp"

namespace {

using namespace mrt;
using namespace mrt::benchtool;

struct BenchOptions {
  std::string mode;
  std::vector<std::string> files;
  std::uint64_t iterations = 1000;
  double seconds = 0;  // 0: run `iterations`
  unsigned replicas = 1;
  bool real_data = false;
  std::int64_t ring_size_multiplier = DriverOptions().ring_size_multiplier;
  std::uint32_t seed = 1;
  bool json = false;
};

std::int64_t samplesPerRun(const Model &model) {
  const auto anchors = queueAnchors(model);
  return anchors.empty() ? 1 : batchOf(anchors.front());
}

int runBenchmark(const BenchOptions &options) {
  const Model model(options.files);
  const DeviceManager devices;
  DriverOptions driver_options;
  driver_options.real_data = options.real_data;
  driver_options.ring_size_multiplier = options.ring_size_multiplier;
  std::vector<std::unique_ptr<Driver>> drivers;
  for (unsigned r = 0; r < options.replicas; ++r) {
    driver_options.seed = options.seed + r;
    drivers.push_back(makeDriver(options.mode, model, devices.getDevice(model), driver_options));
  }

  // Each replica: its own host thread and its share of the runs.
  const std::uint64_t total = options.seconds > 0 && options.iterations == 0
                                  ? std::numeric_limits<std::uint64_t>::max()
                                  : options.iterations;
  std::vector<std::string> errors(options.replicas);
  const auto start = Clock::now();
  const auto deadline = options.seconds > 0
                            ? start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.seconds))
                            : Clock::time_point::max();
  std::vector<std::thread> threads;
  for (unsigned r = 0; r < options.replicas; ++r) {
    const std::uint64_t share = total == std::numeric_limits<std::uint64_t>::max()
                                    ? total
                                    : total / options.replicas + (r < total % options.replicas);
    threads.emplace_back([&, r, share] {
      try {
        drivers[r]->run(share, deadline);
      } catch (const std::exception &e) {
        errors[r] = e.what();
      }
    });
  }
  for (auto &thread : threads) thread.join();
  const auto wall = Clock::now() - start;

  BenchSummary summary;
  summary.mode = options.mode;
  summary.model = model.info().executable;
  summary.real_data = options.real_data;
  summary.replicas = options.replicas;
  if (options.mode == "queues") summary.ring_size_multiplier = options.ring_size_multiplier;
  // A run feeds every replica of a replicated model.
  const unsigned model_replicas = drivers.front()->replicas();
  summary.batch = samplesPerRun(model) * model_replicas;
  summary.wall = wall;
  std::string firstMismatch;
  for (auto &driver : drivers) {
    driver->stop();
    summary.latencies_us.insert(summary.latencies_us.end(), driver->latenciesUs().begin(),
                                driver->latenciesUs().end());
    summary.device_seconds += driver->deviceSeconds();
    summary.outputs_checked += driver->io().outputsChecked();
    summary.mismatches += driver->io().mismatches();
    if (firstMismatch.empty()) firstMismatch = driver->io().firstMismatch();
  }
  summary.outputs_not_checked = drivers.front()->outputsNotChecked();
  summary.bytes_in_per_run = drivers.front()->io().bytesInPerRun() * model_replicas;
  summary.bytes_out_per_run = drivers.front()->io().bytesOutPerRun() * model_replicas;

  if (options.json) std::cout << renderJson(summary).dump(2) << "\n";
  else std::cout << renderTable(summary);
  for (unsigned r = 0; r < options.replicas; ++r) {
    if (!errors[r].empty()) {
      std::cerr << "mrt-bench: replica " << r << " failed: " << errors[r] << "\n";
      return 1;
    }
  }
  if (summary.mismatches) {
    std::cerr << "mrt-bench: " << summary.mismatches << " output(s) differed; first: " << firstMismatch << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{
      "Benchmarks the Model Runtime's callbacks and queues paths on the simulated IPU (docs/tools.md).\n"
      "  callbacks: a Session whose anchors are served by callbacks; this thread runs Main.\n"
      "  queues:    a Session with a QueueManager fed from a host thread; a device thread runs Main.",
      "mrt-bench"};
  mrt::tools::setUpCommandLine(app);
  BenchOptions options;
  app.add_option("mode", options.mode, "callbacks or queues")->required();
  app.add_option("files", options.files, "PopEF file(s) of the model")->required()->check(CLI::ExistingFile);
  auto *iterations = app.add_option("--iterations,-n", options.iterations,
                                    "Main runs in all (default 1000; with --time: no limit)")
                         ->check(CLI::PositiveNumber);
  app.add_option("--time", options.seconds, "run for this many seconds")->check(CLI::PositiveNumber);
  app.add_option("--replicas,-r", options.replicas, "independent sessions, one simulated device and host thread each")
      ->check(CLI::Range(1u, 64u));
  app.add_flag("--real-data", options.real_data,
               "copy seeded random inputs in before each run and check every output (default: reuse the buffers)");
  app.add_option("--ring-size-multiplier", options.ring_size_multiplier,
                 "queues: ring entries per queue as a multiple of the model batch (default " +
                     std::to_string(DriverOptions().ring_size_multiplier) + ", the QueueManager's)")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{4096}));
  app.add_option("--seed", options.seed, "seed of the --real-data inputs");
  app.add_flag("--json", options.json, "print the report as JSON");
  if (const auto exitCode = mrt::tools::parseCommandLine(app, argc, argv)) return *exitCode;
  if (options.mode != "callbacks" && options.mode != "queues") {
    std::cerr << "mrt-bench: unknown mode '" << options.mode << "': expected 'callbacks' or 'queues'\n";
    return mrt::tools::kExitUsage;
  }
  if (options.seconds > 0 && iterations->count() == 0) options.iterations = 0;
  try {
    return runBenchmark(options);
  } catch (const std::exception &e) {
    mrt::tools::reportFailure("mrt-bench", e.what(), options.json);
    return mrt::tools::kExitFailure;
  }
}
