// mrt-run FILE... : runs a model through ModelRunner with seeded random (or
// given) inputs from one or more client threads, sync or async, and prints
// requests, throughput and latency percentiles, with the modelled device
// time and throughput of the target beside the host's (DESIGN.md 9). Only
// the public API: the C++ wrapper over libmrt.so.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "latency_report.hpp"
#include "mrt.hpp"
#include "pipeline_report.hpp"
#include "request_inputs.hpp"
#include "tool_cli.hpp"
#include "tool_json.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using mrt::ModelRunner;
namespace run = mrt::run;

struct Options {
  std::vector<std::string> files;
  std::string model;  // one of several models in the files (a fused PopEF); "": the only one
  std::uint64_t iterations = 1000;
  unsigned threads = 1;
  bool async = false;
  unsigned replicas = 1;
  std::int64_t batch = 0;  // 0: the model's batch
  std::optional<unsigned> batchingDim;
  std::optional<double> batchTimeoutMs;
  std::optional<double> waitSeconds;  // --wait: seconds, < 0 forever
  std::map<std::string, std::string> inputFiles;
  std::string outputDir;
  std::string profileDir;  // empty: no profiling
  bool json = false;
  std::uint32_t seed = 1;
};

// Requests a client keeps in flight in async mode.
constexpr std::size_t kAsyncWindow = 4;

double microsecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// One client thread: its own buffers, its share of the requests, its
// latencies. Requests rotate over the replicas.
struct Client {
  std::vector<run::RequestBuffers> slots;
  std::vector<double> latenciesUs;
  std::uint64_t failed = 0;
  std::string firstError;

  void runSync(ModelRunner &runner, std::uint64_t count, std::uint64_t first, unsigned replicas,
               std::atomic<std::uint64_t> &done) {
    auto &buffers = slots.front();
    const auto inputs = buffers.inputViews();
    const auto outputs = buffers.outputViews();
    for (std::uint64_t i = 0; i < count; ++i) {
      const auto start = Clock::now();
      try {
        runner.execute(inputs, outputs, static_cast<unsigned>((first + i) % replicas));
        latenciesUs.push_back(microsecondsSince(start));
      } catch (const mrt::Error &e) {
        noteFailure(e.what());
      }
      ++done;
    }
  }

  void runAsync(ModelRunner &runner, std::uint64_t count, std::uint64_t first, unsigned replicas,
                std::atomic<std::uint64_t> &done) {
    struct InFlight {
      mrt::Future future;
      Clock::time_point start;
    };
    std::deque<InFlight> window;
    auto retireOldest = [&] {
      InFlight oldest = std::move(window.front());
      window.pop_front();
      oldest.future.waitFor(std::chrono::nanoseconds(-1));
      if (oldest.future.status() == MRT_OK) latenciesUs.push_back(microsecondsSince(oldest.start));
      else noteFailure(oldest.future.errorMessage());
      ++done;
    };
    for (std::uint64_t i = 0; i < count; ++i) {
      if (window.size() == slots.size()) retireOldest();
      auto &buffers = slots[i % slots.size()];
      const auto start = Clock::now();
      try {
        window.push_back({runner.submit(buffers.inputViews(), buffers.outputViews(),
                                        static_cast<unsigned>((first + i) % replicas)),
                          start});
      } catch (const mrt::Error &e) {
        noteFailure(e.what());
        ++done;
      }
    }
    while (!window.empty()) retireOldest();
  }

  void noteFailure(const std::string &message) {
    if (failed++ == 0) firstError = message;
  }
};

void drawProgress(std::uint64_t done, std::uint64_t total) {
  constexpr int kWidth = 40;
  const int filled = total ? static_cast<int>(kWidth * done / total) : kWidth;
  std::fprintf(stderr, "\r[%s%s] %3d%% %llu/%llu", std::string(static_cast<std::size_t>(filled), '#').c_str(),
               std::string(static_cast<std::size_t>(kWidth - filled), ' ').c_str(),
               total ? static_cast<int>(100 * done / total) : 100, static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total));
}

void writeOutputs(const run::RequestBuffers &buffers, const std::string &dir) {
  for (const auto &[name, bytes] : buffers.outputs) {
    const std::string path = dir + "/" + name + ".bin";
    std::ofstream file(path, std::ios::binary);
    if (!file) throw std::runtime_error(fmt::format("--output-dir {}: cannot write {}", dir, path));
    file.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
}

// The model to serve. --profile is an ordinary engine option override
// (autoReport.*), so the runner and each replica's engine need nothing
// special: with several replicas each writes into DIR/replica<N>. Reports are
// written when the engines are destroyed, not after every run, so profiling
// does not slow the requests down.
mrt::Model loadModel(const Options &options) {
  mrt::Model model = options.model.empty() ? mrt::Model(options.files)
                                           : mrt::Model::loadNamed(options.files, options.model);
  if (options.profileDir.empty()) return model;
  return model.withEngineOptions({{"autoReport.all", "true"},
                                  {"autoReport.directory", options.profileDir},
                                  {"autoReport.streamAtEachRun", "false"}});
}

// A usage error that only the model reveals (-b against the model's batch).
struct ModelUsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Refuses requests that would leave a model batch partly filled unless the
// user chose the padding timeout: such a request waits that long each time.
void checkBatch(const Options &options, const run::BatchPlan &plan, std::int64_t batch) {
  if (batch % plan.modelBatch == 0) return;
  if (!plan.batchingDim) {
    throw ModelUsageError(fmt::format(
        "-b {}: the model takes whole batches of {} samples ({}); give -b a multiple of {}, or --batching-dim "
        "and --batch-timeout to let the runner pack requests into batches",
        batch, plan.modelBatch, plan.batchSource, plan.modelBatch));
  }
  if (!options.batchTimeoutMs) {
    throw ModelUsageError(fmt::format(
        "-b {} with --batching-dim {}: a request leaves part of the model's batch of {} empty, and the runner "
        "pads it only after waiting for more samples; give --batch-timeout MS (a request may wait that long)",
        batch, *plan.batchingDim, plan.modelBatch));
  }
}

// Refuses at once (whatever --wait says) what no device of the simulated
// system can meet, naming the variable that sizes the system; busy devices
// are the runner's to report (DeviceManager lists them).
void checkReplicasFit(const mrt::Model &model, unsigned replicas) {
  const mrt::DeviceManager devices;
  std::uint64_t ipus = 0;
  for (const auto &info : devices.devices()) ipus += info.num_ipus == 1;
  const mrt::ModelInfo info = model.info();
  const std::uint64_t needed = info.num_ipus * replicas;
  if (needed > ipus) {
    throw std::runtime_error(fmt::format(
        "{} replica(s) of '{}' need {} IPU(s) and the simulated system has {}: no wait can help; run fewer "
        "replicas or set MRT_HWSIM_IPUS (now {}) to a larger system",
        replicas, info.executable, needed, ipus,
        std::getenv("MRT_HWSIM_IPUS") ? std::getenv("MRT_HWSIM_IPUS") : "unset: 4"));
  }
}

std::optional<mrt::DeviceWaitConfig> deviceWaitOf(const Options &options) {
  constexpr auto kRetry = std::chrono::milliseconds(100);
  if (!options.waitSeconds) return std::nullopt;
  if (*options.waitSeconds < 0) return mrt::DeviceWaitConfig(mrt::DeviceWaitStrategy::WAIT_FOREVER, {}, kRetry);
  return mrt::DeviceWaitConfig(mrt::DeviceWaitStrategy::WAIT_WITH_TIMEOUT,
                               std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::duration<double>(*options.waitSeconds)),
                               kRetry);
}

// The runner's mean of each request phase, averaged over the replicas.
std::vector<std::pair<std::string, double>> phaseMeans(const ModelRunner &runner, unsigned replicas) {
  mrt::RequestTimes sum;
  for (unsigned r = 0; r < replicas; ++r) {
    const mrt::RequestTimes mean = runner.getMonitoringStatisticsMean(r);
    sum.request_us += mean.request_us;
    sum.read_preparation_us += mean.read_preparation_us;
    sum.read_queue_us += mean.read_queue_us;
    sum.computation_us += mean.computation_us;
  }
  return {{"request", sum.request_us / replicas},
          {"read_preparation", sum.read_preparation_us / replicas},
          {"read_queue", sum.read_queue_us / replicas},
          {"computation", sum.computation_us / replicas}};
}

std::vector<mrt::DeviceTime> deviceTimes(const ModelRunner &runner, unsigned replicas) {
  std::vector<mrt::DeviceTime> times;
  for (unsigned r = 0; r < replicas; ++r) times.push_back(runner.deviceTime(r));
  return times;
}

int runModel(const Options &options) {
  mrt::ModelRunnerConfig config;
  config.replication_factor = options.replicas;
  config.thread_safe = options.threads > 1;
  config.device_wait_config = deviceWaitOf(options);
  if (options.batchingDim) config.batching_dim = *options.batchingDim;
  if (options.batchTimeoutMs) {
    config.batch_size_timeout_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double, std::milli>(*options.batchTimeoutMs));
  }
  const mrt::Model model = loadModel(options);
  checkReplicasFit(model, options.replicas);
  ModelRunner runner(model, config);
  // A model compiled with replication R serves R replicas per device.
  const unsigned replicas = runner.numReplicas();
  // The runner's batching dimension: --batching-dim, else the model's own.
  const std::uint32_t runnerBatchingDim = runner.config().batching_dim;
  const std::optional<unsigned> batchingDim =
      runnerBatchingDim != MRT_BATCHING_DISABLED ? std::optional<unsigned>(runnerBatchingDim) : std::nullopt;
  if (options.batchTimeoutMs && !batchingDim) {
    throw ModelUsageError("--batch-timeout requires --batching-dim: the model records no batching dimension");
  }
  const auto plan = run::BatchPlan::of(runner.getExecuteInputs(), batchingDim);
  const std::int64_t batch = options.batch > 0 ? options.batch : plan.modelBatch;
  checkBatch(options, plan, batch);

  std::vector<Client> clients(options.threads);
  for (unsigned t = 0; t < options.threads; ++t) {
    const std::size_t slots = options.async ? kAsyncWindow : 1;
    for (std::size_t s = 0; s < slots; ++s)
      clients[t].slots.push_back(run::makeRequestBuffers(runner, plan, batch, options.inputFiles, options.seed + t));
  }

  std::atomic<std::uint64_t> done{0};
  const std::vector<mrt::DeviceTime> deviceStart = deviceTimes(runner, replicas);
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < options.threads; ++t) {
    const std::uint64_t share = options.iterations / options.threads + (t < options.iterations % options.threads);
    const std::uint64_t first = t * (options.iterations / options.threads);
    threads.emplace_back([&, t, share, first] {
      if (options.async) clients[t].runAsync(runner, share, first, replicas, done);
      else clients[t].runSync(runner, share, first, replicas, done);
    });
  }
  const bool showProgress = !options.json && isatty(STDERR_FILENO);
  while (showProgress && done.load() < options.iterations) {
    drawProgress(done.load(), options.iterations);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto &thread : threads) thread.join();
  if (showProgress) {
    drawProgress(options.iterations, options.iterations);
    std::fputc('\n', stderr);
  }

  run::RunSummary summary;
  summary.wall = Clock::now() - start;
  const std::vector<mrt::DeviceTime> deviceEnd = deviceTimes(runner, replicas);
  for (unsigned r = 0; r < replicas; ++r) summary.deviceSeconds.push_back(deviceEnd[r].secondsSince(deviceStart[r]));
  summary.model = model.info().executable;
  summary.replicas = replicas;
  summary.threads = options.threads;
  summary.async = options.async;
  summary.batch = batch;
  std::string firstError;
  auto &first = clients.front().latenciesUs;
  if (!first.empty()) {
    summary.coldUs = first.front();
    first.erase(first.begin());
  }
  for (auto &client : clients) {
    summary.latenciesUs.insert(summary.latenciesUs.end(), client.latenciesUs.begin(), client.latenciesUs.end());
    summary.failed += client.failed;
    if (firstError.empty()) firstError = client.firstError;
  }
  summary.phaseMeansUs = phaseMeans(runner, replicas);
  if (!options.outputDir.empty()) writeOutputs(clients.front().slots.front(), options.outputDir);
  const auto figures = run::summarize(summary);
  const auto pipeline = run::pipelineFigures(model, plan.modelBatch);
  if (options.json) {
    nlohmann::json report = run::renderJson(summary, figures);
    report["pipeline"] = run::pipelineJson(pipeline);
    std::cout << report.dump(2) << "\n";
  } else {
    std::cout << run::renderTable(summary, figures) << run::pipelineRow(pipeline);
  }
  if (summary.failed) {
    std::cerr << "mrt-run: " << summary.failed << " request(s) failed; first: " << firstError << "\n";
    return mrt::tools::kExitFailure;
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"Runs a PopEF model through libmrt's ModelRunner on the simulated IPU and reports latency", "mrt-run"};
  mrt::tools::setUpCommandLine(app);
  Options options;
  std::vector<std::string> inputs;
  app.add_option("files", options.files, "PopEF file(s) of the model")->required()->check(CLI::ExistingFile);
  app.add_option("--model", options.model, "The model to serve when the files hold several (a fused PopEF)");
  app.add_option("--iterations,-n", options.iterations, "requests to run")->check(CLI::PositiveNumber);
  app.add_option("--threads,-t", options.threads, "client threads")->check(CLI::Range(1u, 256u));
  app.add_flag("--async", options.async, "use executeAsync with several requests in flight per thread");
  app.add_option("--replicas,-r", options.replicas, "copies of the model (one simulated device each; a model compiled with replication factor R serves R replicas on each)")->check(CLI::Range(1u, 64u));
  app.add_option("--batch,-b", options.batch,
                 "samples per request (default: the model's batch); without --batching-dim a multiple of it")
      ->check(CLI::PositiveNumber);
  app.add_option("--batching-dim", options.batchingDim,
                 "dynamic batch sizing along this dimension: requests of any number of samples, packed into model "
                 "batches by the runner (default: the dimension the model records, if any)");
  app.add_option("--batch-timeout", options.batchTimeoutMs,
                 "with a batching dimension: pad a partly filled model batch after waiting this many ms for more "
                 "samples (needed when -b is not a multiple of the model's batch)")
      ->check(CLI::NonNegativeNumber);
  std::string waitText;
  app.add_flag("--wait{forever}", waitText,
               "wait for busy devices: --wait forever, --wait=SECONDS at most that long (default: fail at once)");
  app.add_option("--input", inputs, "NAME=PATH: an input from a file instead of random data (raw bytes, or an ONNX TensorProto if PATH ends in .pb)");
  app.add_option("--output-dir", options.outputDir, "write the last request's outputs as NAME.bin here")
      ->check(CLI::ExistingDirectory);
  app.add_option("--profile", options.profileDir,
                 "write execution profiles (trace, intervals, summary) to DIR; DIR/replica<N> per replica");
  app.add_option("--seed", options.seed, "seed of the random inputs");
  app.add_flag("--json", options.json, "print the report as JSON");
  if (const auto exitCode = mrt::tools::parseCommandLine(app, argc, argv)) return *exitCode;
  if (!waitText.empty() && waitText != "forever") {
    try {
      std::size_t used = 0;
      options.waitSeconds = std::stod(waitText, &used);
      if (used != waitText.size() || *options.waitSeconds < 0) throw std::invalid_argument(waitText);
    } catch (const std::exception &) {
      std::cerr << "mrt-run: --wait=" << waitText << ": expected a number of seconds >= 0 (see --help)\n";
      return mrt::tools::kExitUsage;
    }
  } else if (!waitText.empty()) {
    options.waitSeconds = -1.0;
  }
  for (const auto &spec : inputs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "mrt-run: --input '" << spec << "' is not NAME=PATH\n";
      return mrt::tools::kExitUsage;
    }
    options.inputFiles[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  try {
    return runModel(options);
  } catch (const ModelUsageError &e) {
    mrt::tools::reportFailure("mrt-run", e.what(), options.json);
    return mrt::tools::kExitUsage;
  } catch (const std::exception &e) {
    mrt::tools::reportFailure("mrt-run", e.what(), options.json);
    return mrt::tools::kExitFailure;
  }
}
