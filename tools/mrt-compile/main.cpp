// mrt-compile MODEL.onnx -o MODEL.popef [--target gc200] [--batch N]
//             [--input-shape NAME=D0,D1,...]... [--precision f32|f16]
//             [--replicas R] [--ipus N] [--batching-dim D] [--io-tiles N] [--quiet]
// Compiles an ONNX model into a PopEF file with mrt_onnx_compile_file (the
// public C API over libmrt.so), then prints what it made: operators by type,
// parameters, the fullest tile's memory against a tile's bytes, modelled
// cycles of one inference (the Main program's steps), the modelled
// throughput on the target beside the host's compile time, and the anchors.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "data_type_name.hpp"
#include "tool_cli.hpp"
#include "mrt_c.h"

namespace {

int fail(const std::string &reason) {
  std::fprintf(stderr, "mrt-compile: %s\n", reason.c_str());
  return 1;
}

std::string lastError(const std::string &call) { return fmt::format("{}: {}", call, mrt_last_error_message()); }

// A progress line on a terminal, nothing otherwise.
void progress(int32_t step, int32_t total, void *) {
  std::fprintf(stderr, "\rlowering %d/%d nodes", step, total);
  if (step == total) std::fprintf(stderr, "\n");
}

struct Counts {
  std::map<std::string, int> ops;
  std::uint64_t parameters = 0;
};

// Operator types and parameter count (elements of all initializers) of the ONNX file.
Counts countOnnx(const std::string &path) {
  Counts c;
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return c;  // the compiler has reported why already
  for (const auto &node : model.graph().node()) ++c.ops[node.op_type()];
  for (const auto &init : model.graph().initializer()) {
    std::uint64_t n = 1;
    for (const auto d : init.dims()) n *= static_cast<std::uint64_t>(d);
    c.parameters += n;
  }
  return c;
}

std::string shapeOf(const int64_t *shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

int report(const mrt_model *model, const std::string &onnxPath, double compileSeconds) {
  mrt_executable *exe = nullptr;
  if (mrt_model_get_executable(model, &exe) != MRT_OK) return fail(lastError("mrt_model_get_executable"));
  mrt_executable_info info{};
  info.struct_size = sizeof info;
  if (mrt_executable_get_info(exe, &info) != MRT_OK) return fail(lastError("mrt_executable_get_info"));
  mrt_target target{};
  target.struct_size = sizeof target;
  mrt_executable_get_target(exe, &target);
  // The frontend's programs are Load (0) and Main (1): one inference costs
  // Main's steps (mrt_executable_pipeline's latency: one run alone). Weights
  // and their copies to the tiles that use them are Load's.
  constexpr uint32_t kMainProgram = 1;
  mrt_pipeline_info main{};
  main.struct_size = sizeof main;
  const mrt_status mainStatus = mrt_executable_pipeline(exe, kMainProgram, &main);
  mrt_executable_destroy(exe);
  if (mainStatus != MRT_OK) return fail(lastError("mrt_executable_pipeline"));
  const std::uint64_t cycles = main.latency_cycles;
  const Counts counts = countOnnx(onnxPath);
  fmt::print("Operators\n");
  for (const auto &[op, n] : counts.ops) fmt::print("  {:<24} {:>6}\n", op, n);
  fmt::print("Parameters                 {:>10}\n", counts.parameters);
  fmt::print("Largest tile's memory      {:>10} of {} bytes per tile (tile {}, {:.1f}%)\n", info.max_tile_memory_bytes,
             info.bytes_per_tile, info.max_memory_tile,
             100.0 * static_cast<double>(info.max_tile_memory_bytes) / static_cast<double>(info.bytes_per_tile));
  const double modelledSeconds = static_cast<double>(cycles) / target.clock_hz;
  fmt::print("Cycles per inference       {:>10} ({:.1f} us at {:.2f} GHz)\n", cycles, modelledSeconds * 1e6,
             target.clock_hz / 1e9);
  if (cycles > 0) {
    fmt::print("Modelled throughput        {:>10.1f} inferences/s per replica on the target\n", 1.0 / modelledSeconds);
  }
  fmt::print("Compile time (host)        {:>10.3f} s\n", compileSeconds);
  mrt_model_info minfo{};
  minfo.struct_size = sizeof minfo;
  if (mrt_model_get_info(model, &minfo) != MRT_OK) return fail(lastError("mrt_model_get_info"));
  fmt::print("Inputs and outputs\n");
  for (size_t i = 0; i < minfo.num_anchors; ++i) {
    mrt_anchor_info a{};
    a.struct_size = sizeof a;
    if (mrt_model_anchor(model, i, &a) != MRT_OK) continue;
    if (a.data_source != MRT_DATA_SOURCE_NONE) continue;  // weights (TensorData)
    fmt::print("  {:<6} {:<24} {} {}\n", a.tensor_type == MRT_TENSOR_INPUT ? "input" : "output", a.name,
               mrt::tools::dataTypeName(a.data_type), shapeOf(a.shape, a.rank));
  }
  return 0;
}

}  // namespace

// "NAME=1,3,224,224" -> the input's name and dimensions; nullopt when
// malformed.
std::optional<std::pair<std::string, std::vector<int64_t>>> parseInputShape(const std::string &spec) {
  const auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) return std::nullopt;
  std::vector<int64_t> dims;
  std::size_t at = eq + 1;
  while (at <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string dim = spec.substr(at, comma - at);
    if (dim.empty() || dim.find_first_not_of("0123456789") != std::string::npos || dim.size() > 15) return std::nullopt;
    dims.push_back(std::stoll(dim));
    at = comma + 1;
  }
  return std::make_pair(spec.substr(0, eq), dims);
}

int main(int argc, char **argv) {
  CLI::App app{"Compiles an ONNX model into a PopEF file for libmrt (docs/onnx.md).", "mrt-compile"};
  mrt::tools::setUpCommandLine(app);
  std::string input, output, target = "gc200";
  int64_t batch = 1;
  uint32_t replicas = 1, ipus = 1;
  bool quiet = false;
  app.add_option("MODEL", input, "ONNX model file")->required();
  app.add_option("-o,--output", output, "PopEF file to write")->required();
  app.add_option("--target", target, "gc200, bow, c600 or ipu-model-small (default gc200)");
  app.add_option("--batch", batch, "Value of dynamic input dimensions (default 1)");
  app.add_option("--replicas", replicas, "Replication factor (default 1)");
  app.add_option("--ipus", ipus, "IPUs per replica (default 1)");
  std::vector<std::string> shapeSpecs;
  app.add_option("--input-shape", shapeSpecs,
                 "NAME=D0,D1,...: the whole shape of an input, replacing the model's (repeatable)");
  std::string precision = "f32";
  app.add_option("--precision", precision, "f32, or f16: compute FLOAT as FLOAT16, inputs and outputs kept (default f32)")
      ->check(CLI::IsMember({"f32", "f16"}));
  std::optional<uint32_t> batchingDim;
  app.add_option("--batching-dim", batchingDim,
                 "Record this dimension of every input and output as the one ModelRunner batches requests along")
      ->check(CLI::Range(0u, 63u));
  uint32_t ioTiles = 0;
  app.add_option("--io-tiles", ioTiles,
                 "Tiles of each IPU that only stream, so inputs arrive while the others compute (default 0)");
  app.add_flag("-q,--quiet", quiet, "No progress and no report");
  if (const auto exitCode = mrt::tools::parseCommandLine(app, argc, argv)) return *exitCode;

  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto &spec : shapeSpecs) {
    auto parsed = parseInputShape(spec);
    if (!parsed) {
      fmt::print(stderr, "mrt-compile: --input-shape '{}' is not NAME=D0,D1,... (positive integers)\n", spec);
      return mrt::tools::kExitUsage;
    }
    shapes[parsed->first] = std::move(parsed->second);
  }
  std::vector<mrt_onnx_input_shape> inputShapes;
  for (const auto &[name, dims] : shapes) inputShapes.push_back({name.c_str(), dims.data(), dims.size()});

  mrt_onnx_options options;
  mrt_onnx_options_init(&options);
  options.target = target.c_str();
  options.batch_size = batch;
  options.replication_factor = replicas;
  options.num_ipus = ipus;
  options.input_shapes = inputShapes.data();
  options.num_input_shapes = inputShapes.size();
  options.precision = precision == "f16" ? MRT_ONNX_PRECISION_F16 : MRT_ONNX_PRECISION_F32;
  if (batchingDim) options.batching_dim = *batchingDim;
  options.num_io_tiles = ioTiles;
  if (!quiet && isatty(fileno(stderr))) options.progress = progress;
  mrt_model *model = nullptr;
  const auto compileStart = std::chrono::steady_clock::now();
  if (mrt_onnx_compile_file(input.c_str(), &options, &model) != MRT_OK) return fail(lastError("compiling " + input));
  const std::chrono::duration<double> compileTime = std::chrono::steady_clock::now() - compileStart;
  int status = 0;
  if (mrt_model_write(model, output.c_str()) != MRT_OK) status = fail(lastError("writing " + output));
  if (status == 0 && !quiet) status = report(model, input, compileTime.count());
  mrt_model_destroy(model);
  return status;
}
