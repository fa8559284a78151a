// Creating a ModelRunner against reading its PopEF file (target: at most
// 5x): a runner's creation should cost about a read of the model's
// weights, whatever the size of the tensors the device holds. Models: mlp
// (0.4 MB of weights), mlp batch 1024 (the same weights, 3 MB of
// activations on the device) and add_one with 1 Mi floats (no weights, 8 MB
// of tensors on the device). Creation is timed from the file path to a
// runner ready to serve (loading the model, taking a device, loading the
// engine, starting the threads); destruction is not timed, its CPU time is
// reported (destroy_cpu_us).
// The simulated system lives in a private lock directory (MRT_HWSIM_LOCK_DIR).
#include "private_devices.hpp"

#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "internal_example_models.hpp"
#include "popef/writer.hpp"
#include "runner/model_runner.hpp"

namespace {


std::string modelFile(const std::string &name, std::size_t batch, std::size_t size) {
  const auto path = mrt_bench::workDir() / (name + "_b" + std::to_string(batch) + "_n" + std::to_string(size) + ".popef");
  if (!std::filesystem::exists(path)) {
    mrt::example_models::ExampleOptions options;
    options.batch = batch;
    options.size = size;
    mrt::popef::Writer writer(path.string());
    writer.writeModel(*mrt::example_models::buildExampleModel(name, options));
    writer.close();
  }
  return path.string();
}

// CPU time of every thread of the process: creation runs on the caller's
// thread and the device threads (the Load programs), so on a loaded machine
// the wall time also counts waits for a CPU; this counts only the work.
double processCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

void BM_RunnerCreation(benchmark::State &state, const std::string &name, std::size_t batch, std::size_t size) {
  const std::string path = modelFile(name, batch, size);
  double cpuSeconds = 0, destroyCpuSeconds = 0;
  for (auto _ : state) {
    std::optional<mrt::ModelRunner> runner;
    const auto start = std::chrono::steady_clock::now();
    const double cpuStart = processCpuSeconds();
    runner.emplace(path);
    cpuSeconds += processCpuSeconds() - cpuStart;
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    const double destroyStart = processCpuSeconds();
    runner.reset();
    destroyCpuSeconds += processCpuSeconds() - destroyStart;
  }
  const auto perRunner = [&](double seconds) {
    return benchmark::Counter(seconds * 1e6 / static_cast<double>(state.iterations()));
  };
  state.counters["file_MB"] = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  state.counters["process_cpu_us"] = perRunner(cpuSeconds);
  // Not part of the ratio, shown so that work moved from creation to
  // destruction (hwsim's kept arenas are zeroed there) stays visible.
  state.counters["destroy_cpu_us"] = perRunner(destroyCpuSeconds);
}

// The baseline: the file read into memory, as a loader must at least do.
void BM_ReadModelFile(benchmark::State &state, const std::string &name, std::size_t batch, std::size_t size) {
  const std::string path = modelFile(name, batch, size);
  std::vector<char> bytes(std::filesystem::file_size(path));
  for (auto _ : state) {
    std::FILE *file = std::fopen(path.c_str(), "rb");
    const std::size_t read = std::fread(bytes.data(), 1, bytes.size(), file);
    std::fclose(file);
    if (read != bytes.size()) state.SkipWithError("short read");
    benchmark::DoNotOptimize(bytes.data());
  }
}

#define MRT_CREATION_BENCH(label, ...)                                                              \
  BENCHMARK_CAPTURE(BM_RunnerCreation, label, __VA_ARGS__)->UseManualTime()->MinTime(0.3);        \
  BENCHMARK_CAPTURE(BM_ReadModelFile, label, __VA_ARGS__)->UseRealTime()->MinTime(0.1);
MRT_CREATION_BENCH(mlp, std::string("mlp"), 1, 16)
MRT_CREATION_BENCH(mlp_b1024, std::string("mlp"), 1024, 16)
MRT_CREATION_BENCH(add_one_4MiB, std::string("add_one"), 1, std::size_t{1} << 20)

}  // namespace
