#include "hwsim/options.hpp"

#include <array>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwsim/error.hpp"

namespace hwsim {

namespace {

enum class Kind { Bool, UInt, String };
struct OptionSpec {
  std::string_view name;
  Kind kind;
};

// Every option hwsim implements (docs/hwsim.md says what each does).
constexpr std::array kOptions = {
    OptionSpec{"debug.allowOutOfMemory", Kind::Bool},
    OptionSpec{"debug.cpuMultiThreadExecution", Kind::Bool},
    OptionSpec{"debug.instrument", Kind::Bool},
    OptionSpec{"debug.instrumentCompute", Kind::Bool},
    OptionSpec{"debug.instrumentExternalExchange", Kind::Bool},
    OptionSpec{"debug.instrumentControlFlow", Kind::Bool},
    OptionSpec{"exchange.enablePrefetch", Kind::Bool},
    OptionSpec{"autoReport.all", Kind::Bool},
    OptionSpec{"autoReport.outputExecutionProfile", Kind::Bool},
    OptionSpec{"autoReport.outputGraphProfile", Kind::Bool},
    OptionSpec{"autoReport.streamAtEachRun", Kind::Bool},
    OptionSpec{"autoReport.executionProfileProgramRunCount", Kind::UInt},
    OptionSpec{"autoReport.directory", Kind::String},
};

void validateOne(const std::string &key, const std::string &value) {
  for (const auto &spec : kOptions) {
    if (spec.name != key) continue;
    switch (spec.kind) {
      case Kind::Bool:
        if (value != "true" && value != "false") {
          throw InvalidOption(key, fmt::format("option '{}': value '{}' is not true or false", key, value));
        }
        return;
      case Kind::UInt:
        if (value.empty() || value.size() > 9 || value.find_first_not_of("0123456789") != std::string::npos) {
          throw InvalidOption(key, fmt::format("option '{}': value '{}' is not a non-negative integer", key, value));
        }
        return;
      case Kind::String:
        return;
    }
  }
  throw InvalidOption(key, fmt::format("unknown option '{}'", key));
}

}  // namespace

void validateEngineOptions(const OptionFlags &options) {
  for (const auto &[key, value] : options) validateOne(key, value);
}

OptionFlags resolveEngineOptions(const OptionFlags &options) {
  OptionFlags out = options;
  if (const char *env = std::getenv("MRT_ENGINE_OPTIONS"); env != nullptr && *env != '\0') {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(env);
    } catch (const nlohmann::json::exception &e) {
      throw InvalidOption("MRT_ENGINE_OPTIONS", fmt::format("MRT_ENGINE_OPTIONS is not valid JSON: {}", e.what()));
    }
    if (!j.is_object()) throw InvalidOption("MRT_ENGINE_OPTIONS", "MRT_ENGINE_OPTIONS must be a JSON object");
    for (const auto &[key, value] : j.items()) {
      if (value.is_string()) out[key] = value.get<std::string>();
      else if (value.is_boolean()) out[key] = value.get<bool>() ? "true" : "false";
      else if (value.is_number_unsigned()) out[key] = std::to_string(value.get<std::uint64_t>());
      else throw InvalidOption(key, fmt::format("MRT_ENGINE_OPTIONS: option '{}' must be a string, boolean or unsigned integer", key));
    }
  }
  validateEngineOptions(out);
  return out;
}

}  // namespace hwsim
