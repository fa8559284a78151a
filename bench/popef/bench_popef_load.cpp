// Loading a model with 256 MiB of TensorData (popef::loadModel: map the file,
// check every header and the XXH3 checksum of every byte, verify the
// descriptors, build the Model) against the baseline of a plain read() of
// the same file into a fresh buffer, in the same binary, from the page cache.
// The target is a ratio of at most 1.2.
//
//   BM_PlainRead / BM_LoadModel      each on its own, for absolute times
//   BM_PlainReadIntoWarmBuffer       read() into a buffer whose pages are
//                                    already faulted in: the copy alone, a
//                                    lower bound no real loader reaches
//   BM_LoadVsRead                    both alternated in every iteration, so
//                                    that noise from other processes hits
//                                    both alike; reports load/read as "ratio"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>

#include <benchmark/benchmark.h>

#include "popef/reader.hpp"
#include "popef/writer.hpp"

namespace {

using namespace mrt::popef;

constexpr std::int64_t kWeightBytes = 256ll << 20;

// The model file, written once per process and removed at exit.
class ModelFile {
 public:
  ModelFile() {
    path_ = (std::filesystem::temp_directory_path() /
             ("mrt-bench-popef-" + std::to_string(::getpid()) + ".popef"))
                .string();
    const TensorInfo info(DataType::F32, {kWeightBytes / 4});
    std::vector<std::byte> weights(static_cast<std::size_t>(kWeightBytes));
    std::mt19937_64 random(42);
    for (std::size_t i = 0; i < weights.size(); i += 8) {
      const std::uint64_t value = random();
      std::memcpy(weights.data() + i, &value, 8);
    }
    ModelParts parts;
    parts.metadata.setExecutable("big");
    parts.metadata.setProgramFlow(ProgramFlow({0}, {1}, {}, {{0, "load"}, {1, "main"}}));
    parts.metadata.setAnchors({
        Anchor("weights", "h2d_weights", info, {0}, TensorType::INPUT, false,
               DataSource::TensorData),
        Anchor("x", "h2d_x", TensorInfo(DataType::F32, {1, 1024}), {1}, TensorType::INPUT),
        Anchor("y", "d2h_y", TensorInfo(DataType::F32, {1, 1024}), {1}, TensorType::OUTPUT),
    });
    parts.executable = ExecutableBlob("big", SharedBytes::fromVector(std::vector<std::byte>(4096)));
    parts.tensorData.emplace_back("weights", info, SharedBytes::fromVector(std::move(weights)));
    Writer writer(path_);
    writer.writeModel(Model(std::move(parts)));
    writer.close();
    size_ = std::filesystem::file_size(path_);
  }
  ~ModelFile() { std::filesystem::remove(path_); }
  ModelFile(const ModelFile &) = delete;
  ModelFile &operator=(const ModelFile &) = delete;

  const std::string &path() const { return path_; }
  std::uint64_t size() const { return size_; }

 private:
  std::string path_;
  std::uint64_t size_ = 0;
};

const ModelFile &modelFile() {
  static const ModelFile file;
  return file;
}

void readInto(int fd, std::byte *buffer, std::uint64_t size) {
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd, buffer + done, size - done, static_cast<off_t>(done));
    if (got <= 0) throw std::runtime_error("read failed");
    done += static_cast<std::uint64_t>(got);
  }
}

// The baseline: what any loader must at least do to have the bytes in memory.
std::unique_ptr<std::byte[]> plainRead(const std::string &path, std::uint64_t &size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open failed");
  struct stat info {};
  ::fstat(fd, &info);
  size = static_cast<std::uint64_t>(info.st_size);
  auto buffer = std::make_unique_for_overwrite<std::byte[]>(size);
  try {
    readInto(fd, buffer.get(), size);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return buffer;
}

std::shared_ptr<Model> load(const std::string &path) {
  auto model = loadModel({path});
  if (model->tensorData("weights").size() != static_cast<std::size_t>(kWeightBytes)) {
    throw std::runtime_error("wrong weights size");
  }
  return model;
}

void BM_PlainRead(benchmark::State &state) {
  const ModelFile &file = modelFile();
  for (auto _ : state) {
    std::uint64_t size = 0;
    auto buffer = plainRead(file.path(), size);
    benchmark::DoNotOptimize(buffer.get());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(file.size()));
}
BENCHMARK(BM_PlainRead)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PlainReadIntoWarmBuffer(benchmark::State &state) {
  const ModelFile &file = modelFile();
  std::vector<std::byte> buffer(file.size());  // faulted in once, here
  const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
  for (auto _ : state) {
    readInto(fd, buffer.data(), file.size());
    benchmark::DoNotOptimize(buffer.data());
  }
  ::close(fd);
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(file.size()));
}
BENCHMARK(BM_PlainReadIntoWarmBuffer)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LoadModel(benchmark::State &state) {
  const ModelFile &file = modelFile();
  for (auto _ : state) {
    auto model = load(file.path());
    benchmark::DoNotOptimize(model->tensorData("weights").data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(file.size()));
}
BENCHMARK(BM_LoadModel)->Unit(benchmark::kMillisecond)->UseRealTime();

// Both in every iteration, timed separately; the reported time is the load.
void BM_LoadVsRead(benchmark::State &state) {
  using Clock = std::chrono::steady_clock;
  const ModelFile &file = modelFile();
  double readSeconds = 0;
  double loadSeconds = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    {
      std::uint64_t size = 0;
      auto buffer = plainRead(file.path(), size);
      benchmark::DoNotOptimize(buffer.get());
    }
    const auto middle = Clock::now();
    {
      auto model = load(file.path());
      benchmark::DoNotOptimize(model->tensorData("weights").data());
    }
    const auto end = Clock::now();
    readSeconds += std::chrono::duration<double>(middle - start).count();
    loadSeconds += std::chrono::duration<double>(end - middle).count();
    state.SetIterationTime(std::chrono::duration<double>(end - middle).count());
  }
  const auto n = static_cast<double>(state.iterations());
  state.counters["read_ms"] = readSeconds / n * 1e3;
  state.counters["load_ms"] = loadSeconds / n * 1e3;
  state.counters["ratio"] = loadSeconds / readSeconds;
}
BENCHMARK(BM_LoadVsRead)->Unit(benchmark::kMillisecond)->UseManualTime()->MinTime(3.0);

}  // namespace

BENCHMARK_MAIN();
