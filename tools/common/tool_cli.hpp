// The command line conventions of every mrt-* tool: --version, defaults shown
// in --help, and one meaning per exit code: 0 success (also after --help and
// --version), 1 the work failed, 2 a usage error (never CLI11's own codes,
// 105, 106, 109..., which tell a script nothing).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "mrt_c.h"

namespace mrt::tools {

inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Adds --version ("mrt-run 0.1.0 (libmrt)") and shows every option's
// default in --help. Call before adding options.
inline void setUpCommandLine(CLI::App &app) {
  app.set_version_flag("--version", app.get_name() + " " + std::to_string(MRT_VERSION_MAJOR) + "." +
                                        std::to_string(MRT_VERSION_MINOR) + "." +
                                        std::to_string(MRT_VERSION_PATCH) + " (libmrt)");
  app.option_defaults()->always_capture_default();
}

// A count as a person reads it: 1048576 as "1 Mi", 17179869184 as "16 Gi";
// other values as they are.
inline std::string readableCount(std::uint64_t n) {
  const char *const units[] = {"", " Ki", " Mi", " Gi", " Ti"};
  int unit = 0;
  while (unit < 4 && n >= 1024 && n % 1024 == 0) {
    n /= 1024;
    ++unit;
  }
  return std::to_string(n) + units[unit];
}

// CLI::Range whose --help text and error show its bounds with readableCount.
inline CLI::Validator readableRange(std::uint64_t min, std::uint64_t max) {
  const std::string bounds = readableCount(min) + " to " + readableCount(max);
  return CLI::Validator(
      [min, max, bounds](std::string &text) {
        std::uint64_t value = 0;
        if (!CLI::detail::lexical_cast(text, value) || value < min || value > max)
          return "Value " + text + " not in range " + bounds;
        return std::string();
      },
      "in [" + bounds + "]");
}

// Parses argv: nullopt when the tool should go on, else the code to exit
// with (0 after --help or --version, kExitUsage after a usage error, its
// one-line message on stderr).
inline std::optional<int> parseCommandLine(CLI::App &app, int argc, char **argv) {
  try {
    app.parse(argc, argv);
    return std::nullopt;
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    std::fprintf(stderr, "%s: %s (see --help)\n", app.get_name().c_str(), e.what());
    return kExitUsage;
  }
}

}  // namespace mrt::tools
