// mrt-run FILE... : runs a model through ModelRunner with seeded random (or
// given) inputs from one or more client threads, sync or async, and prints
// requests, throughput and latency percentiles (DESIGN.md 9).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "tool_cli.hpp"
#include "latency_report.hpp"
#include "request_inputs.hpp"
#include "popef/reader.hpp"
#include "runner/model_runner.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace mrt;

struct Options {
  std::vector<std::string> files;
  std::uint64_t iterations = 1000;
  unsigned threads = 1;
  bool async = false;
  unsigned replicas = 1;
  std::int64_t batch = 0;  // 0: the model's batch
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
      } catch (const Error &e) {
        noteFailure(e.what());
      }
      ++done;
    }
  }

  void runAsync(ModelRunner &runner, std::uint64_t count, std::uint64_t first, unsigned replicas,
                std::atomic<std::uint64_t> &done) {
    struct InFlight {
      std::shared_ptr<Completion> completion;
      Clock::time_point start;
    };
    std::deque<InFlight> window;
    auto retireOldest = [&] {
      InFlight oldest = std::move(window.front());
      window.pop_front();
      oldest.completion->wait(std::chrono::nanoseconds(-1));
      if (oldest.completion->code() == ErrorCode::Ok) latenciesUs.push_back(microsecondsSince(oldest.start));
      else noteFailure(oldest.completion->message());
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
      } catch (const Error &e) {
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
    if (!file) throw Error(ErrorCode::NotFound, "--output-dir {}: cannot write {}", dir, path);
    file.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
}

// The model to serve. --profile is an ordinary engine option override
// (autoReport.*), so the runner and each replica's engine need nothing
// special: with several replicas each writes into DIR/replica<N>. Reports are
// written when the engines are destroyed, not after every run, so profiling
// does not slow the requests down.
std::shared_ptr<popef::Model> loadModel(const Options &options) {
  auto model = popef::loadModel(options.files);
  if (options.profileDir.empty()) return model;
  return popef::withEngineOptions(*model, {{"autoReport.all", "true"},
                                           {"autoReport.directory", options.profileDir},
                                           {"autoReport.streamAtEachRun", "false"}});
}

int runModel(const Options &options) {
  ModelRunnerConfig config;
  config.replication_factor = options.replicas;
  config.thread_safe = options.threads > 1;
  const auto model = loadModel(options);
  auto probe = std::make_unique<ModelRunner>(model, config);
  const auto inputs = probe->getExecuteInputs();
  const std::int64_t modelBatch = inputs.empty() || inputs[0].shape.empty() ? 1 : inputs[0].shape[0];
  const std::int64_t batch = options.batch > 0 ? options.batch : modelBatch;
  if (batch % modelBatch != 0) {
    // Any other batch size needs dynamic batch sizing along dimension 0.
    probe.reset();
    config.batching_dim = 0;
    probe = std::make_unique<ModelRunner>(model, config);
  }
  ModelRunner &runner = *probe;

  std::vector<Client> clients(options.threads);
  for (unsigned t = 0; t < options.threads; ++t) {
    const std::size_t slots = options.async ? kAsyncWindow : 1;
    for (std::size_t s = 0; s < slots; ++s)
      clients[t].slots.push_back(run::makeRequestBuffers(runner, batch, options.inputFiles, options.seed + t));
  }

  std::atomic<std::uint64_t> done{0};
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < options.threads; ++t) {
    const std::uint64_t share = options.iterations / options.threads + (t < options.iterations % options.threads);
    const std::uint64_t first = t * (options.iterations / options.threads);
    threads.emplace_back([&, t, share, first] {
      if (options.async) clients[t].runAsync(runner, share, first, options.replicas, done);
      else clients[t].runSync(runner, share, first, options.replicas, done);
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
  summary.model = runner.model()->metadata.executable();
  summary.replicas = options.replicas;
  summary.threads = options.threads;
  summary.async = options.async;
  summary.batch = batch;
  std::string firstError;
  for (auto &client : clients) {
    summary.latenciesUs.insert(summary.latenciesUs.end(), client.latenciesUs.begin(), client.latenciesUs.end());
    summary.failed += client.failed;
    if (firstError.empty()) firstError = client.firstError;
  }
  if (!options.outputDir.empty()) writeOutputs(clients.front().slots.front(), options.outputDir);
  const auto figures = run::summarize(summary);
  if (options.json) std::cout << run::renderJson(summary, figures).dump(2) << "\n";
  else std::cout << run::renderTable(summary, figures);
  if (summary.failed) {
    std::cerr << "mrt-run: " << summary.failed << " request(s) failed; first: " << firstError << "\n";
    return 1;
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
  app.add_option("--iterations,-n", options.iterations, "requests to run")->check(CLI::PositiveNumber);
  app.add_option("--threads,-t", options.threads, "client threads")->check(CLI::Range(1u, 256u));
  app.add_flag("--async", options.async, "use executeAsync with several requests in flight per thread");
  app.add_option("--replicas,-r", options.replicas, "replicas (one simulated device each)")->check(CLI::Range(1u, 64u));
  app.add_option("--batch,-b", options.batch, "samples per request (default: the model's batch)")
      ->check(CLI::PositiveNumber);
  app.add_option("--input", inputs, "NAME=PATH: an input from a file instead of random data (raw bytes, or an ONNX TensorProto if PATH ends in .pb)");
  app.add_option("--output-dir", options.outputDir, "write the last request's outputs as NAME.bin here")
      ->check(CLI::ExistingDirectory);
  app.add_option("--profile", options.profileDir,
                 "write execution profiles (trace, intervals, summary) to DIR; DIR/replica<N> per replica");
  app.add_option("--seed", options.seed, "seed of the random inputs");
  app.add_flag("--json", options.json, "print the report as JSON");
  if (const auto exitCode = mrt::tools::parseCommandLine(app, argc, argv)) return *exitCode;
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
  } catch (const std::exception &e) {
    std::cerr << "mrt-run: " << e.what() << "\n";
    return 1;
  }
}
