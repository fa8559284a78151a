// mrt-fuse FILE... -o OUT
// Model fusion (Model Runtime User Guide 2.10, PopRT's model fusion): writes
// one PopEF file whose one executable holds every model of the FILEs, each
// on its own tiles of one IPU, so that one device serves them all, each
// model by its own Session or ModelRunner (loaded by name).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <mrt_graph.hpp>

#include "tool_cli.hpp"

namespace {

// Every failure ends as one line on stderr and a non-zero exit status.
int fail(const std::string &reason, int status = 1) {
  std::fprintf(stderr, "mrt-fuse: %s\n", reason.c_str());
  return status;
}

}  // namespace

int main(int argc, char **argv) {
  CLI::App app{"Fuses PopEF models into one PopEF file: one executable placing each model on its own tiles of "
               "one IPU. Each FILE holds one model (its name stays the model's name in the fused file).",
               "mrt-fuse"};
  mrt::tools::setUpCommandLine(app);
  std::vector<std::string> inputs;
  std::string output;
  app.add_option("FILE", inputs, "PopEF files, one model each (two or more)")->required();
  app.add_option("-o,--output", output, "PopEF file to write")->required();
  if (const auto exitCode = mrt::tools::parseCommandLine(app, argc, argv)) return *exitCode;
  if (inputs.size() < 2) return fail("give two or more model files to fuse", mrt::tools::kExitUsage);
  try {
    std::vector<mrt::Model> models;
    std::vector<std::string> names;
    for (const std::string &input : inputs) {
      models.emplace_back(input);
      names.push_back(models.back().info().executable);
    }
    mrt::fuseModels(models, output);
    std::printf("fused '%s' into %s (%llu bytes)\n", fmt::format("{}", fmt::join(names, "', '")).c_str(),
                output.c_str(), static_cast<unsigned long long>(std::filesystem::file_size(output)));
  } catch (const std::exception &error) {
    return fail(error.what());
  }
  return 0;
}
