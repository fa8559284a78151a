// mrt-info FILE... [--json] [--model NAME]
// Shows the blobs of PopEF files (type, names, offset, size, checksum), and
// for each model they hold its metadata, program flow, anchors and data
// blobs: the counterpart of the seeds' "PopEF file analysis". Damaged files
// are listed as far as they can be read; the exit status is then 1 and the
// reason is one line on stderr.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tool_cli.hpp"
#include "inspect.hpp"

int main(int argc, char **argv) {
  CLI::App app{"Shows the blobs, metadata, anchors and program flow of PopEF files.", "mrt-info"};
  mrt::tools::setUpCommandLine(app);
  std::vector<std::string> paths;
  bool json = false;
  std::optional<std::string> model;
  app.add_option("FILE", paths, "PopEF files (one model may span several)")->required();
  app.add_flag("--json", json, "Print JSON instead of tables");
  app.add_option("--model", model, "Only the model with this executable name");
  if (const auto exitCode = mrt::tools::parseCommandLine(app, argc, argv)) return *exitCode;
  try {
    const mrt::info::Report report = mrt::info::inspect(paths, model);
    const std::string out = json ? mrt::info::renderJson(report) : mrt::info::renderText(report);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (!report.error.empty()) {
      std::fprintf(stderr, "mrt-info: %s\n", report.error.c_str());
      return 1;
    }
  } catch (const std::exception &error) {
    std::fprintf(stderr, "mrt-info: %s\n", error.what());
    return 1;
  }
  return 0;
}
