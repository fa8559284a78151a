// mrt-gen MODEL -o FILE [--batch B] [--size N | --bytes BYTES] [--seed S]
//         [--ipus N] [--tiles T] [--ipu-version V]
// Writes one of the example models (example_models.hpp) as a PopEF file: the
// counterpart of the seeds' "Generating example PopEF file". It uses the
// installed library's public API only (mrt.hpp over libmrt.so), as proof that
// a user can build every model libmrt ships.
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tool_cli.hpp"
#include "example_models.hpp"

namespace {

// Every failure ends as one line on stderr and a non-zero exit status.
int fail(const std::string &reason, int status = 1) {
  std::fprintf(stderr, "mrt-gen: %s\n", reason.c_str());
  return status;
}

}  // namespace

int main(int argc, char **argv) {
  using namespace mrt_examples;
  const std::vector<std::string> names = exampleModelNames();
  CLI::App app{fmt::format("Writes an example PopEF model. Models: {}.", fmt::join(names, ", ")),
               "mrt-gen"};
  mrt::tools::setUpCommandLine(app);
  std::string model;
  std::string output;
  ExampleOptions options;
  bool list = false;
  app.add_option("MODEL", model, "Example model to write")->check(CLI::IsMember(names));
  app.add_option("-o,--output", output, "PopEF file to write");
  app.add_option("--batch", options.batch, "Batch size B (default 1)")
      ->check(mrt::tools::readableRange(1, std::uint64_t{1} << 20));
  std::size_t bytes = 0;
  // Any size whose x and y fit in the IPU's memory (a GC200: 1472 tiles x
  // 624 KiB); the model builder says so if they do not.
  auto *size_option = app.add_option("--size", options.size, "N of add_one and replicated, in F32 elements (default 16)")
                          ->check(mrt::tools::readableRange(1, std::uint64_t{1} << 32));
  app.add_option("--bytes", bytes, "N of add_one and replicated given in bytes per sample (a multiple of 4)")
      ->check(mrt::tools::readableRange(4, std::uint64_t{1} << 34))
      ->excludes(size_option);
  app.add_option("--seed", options.seed, "Seed of the weights (default 1)");
  app.add_option("--ipus", options.ipus, "IPUs per replica (default: the model's own)")
      ->check(CLI::Range(1u, 64u));
  app.add_option("--tiles", options.tiles, "Tiles per IPU (default: the IPU version's)")
      ->check(CLI::Range(1u, 8192u));
  app.add_option("--ipu-version", options.ipuVersion, "IPU version: 2 (GC200) or 21 (C600)")
      ->check(CLI::IsMember({2u, 21u}));
  app.add_flag("--list", list, "Print the example model names and exit");
  if (const auto exitCode = mrt::tools::parseCommandLine(app, argc, argv)) return *exitCode;
  if (list) {
    for (const std::string &name : names) std::printf("%s\n", name.c_str());
    return 0;
  }
  if (bytes != 0) {
    if (bytes % sizeof(float) != 0) return fail(fmt::format("--bytes {} is not a whole number of F32 elements", bytes), mrt::tools::kExitUsage);
    options.size = bytes / sizeof(float);
  }
  if (model.empty()) return fail("no MODEL given (one of " + fmt::format("{}", fmt::join(names, ", ")) + ")", mrt::tools::kExitUsage);
  if (output.empty()) return fail("no output file given (-o FILE)", mrt::tools::kExitUsage);
  try {
    const mrt::Model built = buildExampleModel(model, options);
    mrt::writeModel(built, output);
    std::printf("wrote %s to %s (%zu anchors, %llu bytes)\n", model.c_str(), output.c_str(),
                built.info().num_anchors,
                static_cast<unsigned long long>(std::filesystem::file_size(output)));
  } catch (const std::exception &error) {
    return fail(error.what());
  }
  return 0;
}
