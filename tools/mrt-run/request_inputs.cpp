#include "request_inputs.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data_type_name.hpp"

namespace mrt::run {

BatchPlan BatchPlan::of(const std::vector<mrt::DataDesc> &executeInputs, std::optional<unsigned> batchingDim) {
  BatchPlan plan;
  plan.batchingDim = batchingDim;
  if (executeInputs.empty()) return plan;
  const mrt::DataDesc &first = executeInputs.front();
  const unsigned dim = batchingDim.value_or(0);
  if (dim < first.shape.size() && first.shape[dim] > 0) plan.modelBatch = first.shape[dim];
  plan.batchSource = fmt::format("input '{}' {}[{}]", first.name,
                                 tools::dataTypeName(static_cast<std::int32_t>(first.data_type)),
                                 fmt::join(first.shape, ","));
  return plan;
}

std::uint64_t BatchPlan::bytesOf(const mrt::DataDesc &desc, std::int64_t samples) const {
  if (batchingDim) {
    // The runner has checked that every execute tensor has the model's batch there.
    return static_cast<std::uint64_t>(desc.size_in_bytes / modelBatch * samples);
  }
  return static_cast<std::uint64_t>(desc.size_in_bytes * (samples / modelBatch));
}

std::vector<mrt::ConstTensorView> RequestBuffers::inputViews() const {
  std::vector<mrt::ConstTensorView> views;
  for (const auto &[name, bytes] : inputs) views.emplace_back(name, bytes.data(), bytes.size());
  return views;
}

std::vector<mrt::TensorView> RequestBuffers::outputViews() {
  std::vector<mrt::TensorView> views;
  for (auto &[name, bytes] : outputs) views.emplace_back(name, bytes.data(), bytes.size());
  return views;
}

namespace {

// "no such file" unless path is a regular file (a directory opens as a
// stream, of a nonsense size).
void requireReadableFile(const std::string &name, const std::string &path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) throw std::runtime_error(fmt::format("--input {}={}: no such file", name, path));
  if (!std::filesystem::is_regular_file(status))
    throw std::runtime_error(fmt::format("--input {}={}: not a regular file", name, path));
}

std::vector<std::byte> readRawFile(const std::string &name, const std::string &path, std::uint64_t expected) {
  requireReadableFile(name, path);
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) throw std::runtime_error(fmt::format("--input {}={}: cannot open the file", name, path));
  const auto size = static_cast<std::uint64_t>(file.tellg());
  if (size != expected)
    throw std::runtime_error(
        fmt::format("--input {}={}: expected {} bytes, the file has {}", name, path, expected, size));
  std::vector<std::byte> bytes(size);
  file.seekg(0);
  file.read(reinterpret_cast<char *>(bytes.data()), static_cast<std::streamsize>(size));
  return bytes;
}

std::vector<std::byte> readOnnxTensorFile(const mrt::DataDesc &desc, const std::string &path, std::uint64_t size) {
  std::vector<std::byte> bytes(size);
  if (mrt_onnx_read_tensor_file(path.c_str(), static_cast<std::int32_t>(desc.data_type), bytes.data(), size) !=
      MRT_OK)
    throw std::runtime_error(fmt::format("--input {}: {}", desc.name, mrt_last_error_message()));
  return bytes;
}

// Values a model could meet: floats in [0, 1), small integers, booleans.
void fillRandom(std::vector<std::byte> &bytes, mrt::DataType type, std::mt19937 &rng) {
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  std::uniform_int_distribution<int> small(0, 9);
  auto fill = [&](auto sample) {
    using T = decltype(sample);
    auto *values = reinterpret_cast<T *>(bytes.data());
    for (std::size_t i = 0; i < bytes.size() / sizeof(T); ++i) {
      if constexpr (std::is_floating_point_v<T>) values[i] = static_cast<T>(unit(rng));
      else values[i] = static_cast<T>(small(rng));
    }
  };
  switch (type) {
    case mrt::DataType::F32: fill(float{}); break;
    case mrt::DataType::F64: fill(double{}); break;
    case mrt::DataType::S32: fill(std::int32_t{}); break;
    case mrt::DataType::U32: fill(std::uint32_t{}); break;
    case mrt::DataType::S64: fill(std::int64_t{}); break;
    case mrt::DataType::U64: fill(std::uint64_t{}); break;
    case mrt::DataType::BOOL:
      for (auto &b : bytes) b = static_cast<std::byte>(small(rng) % 2);
      break;
    default:  // F16 and the narrow integers: any bit pattern of small bytes
      for (auto &b : bytes) b = static_cast<std::byte>(small(rng));
      break;
  }
}

}  // namespace

RequestBuffers makeRequestBuffers(const mrt::ModelRunner &runner, const BatchPlan &plan, std::int64_t batch,
                                  const std::map<std::string, std::string> &files, std::uint32_t seed) {
  RequestBuffers buffers;
  std::mt19937 rng(seed);
  std::map<std::string, std::string> unused = files;
  for (const auto &desc : runner.getExecuteInputs()) {
    const std::uint64_t size = plan.bytesOf(desc, batch);
    if (auto file = files.find(desc.name); file != files.end()) {
      const std::string &path = file->second;
      buffers.inputs[desc.name] =
          path.ends_with(".pb") ? readOnnxTensorFile(desc, path, size) : readRawFile(desc.name, path, size);
      unused.erase(desc.name);
    } else {
      auto &bytes = buffers.inputs[desc.name];
      bytes.resize(size);
      fillRandom(bytes, desc.data_type, rng);
    }
  }
  if (!unused.empty())
    throw std::runtime_error(
        fmt::format("--input {}: the model has no execute input of that name", unused.begin()->first));
  for (const auto &desc : runner.getExecuteOutputs()) buffers.outputs[desc.name].resize(plan.bytesOf(desc, batch));
  return buffers;
}

}  // namespace mrt::run
