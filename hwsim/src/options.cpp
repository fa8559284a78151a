#include "hwsim/options.hpp"

#include <array>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hwsim/error.hpp"

namespace hwsim {

namespace {

enum class Kind { Bool, UInt, Count, String, Choice };  // Count: a positive UInt
struct OptionSpec {
  std::string_view name;
  Kind kind;
  // false: accepted because Poplar's Engine documents it (seed 003), but it
  // changes nothing in a simulator (no ELF files, no tile stacks, no
  // autoloader); ignoredEngineOptions() reports it so the caller can say so.
  bool implemented;
  std::array<std::string_view, 3> choices = {};  // the values of a Choice
};

// Every option name of seed 003's Engine option list, plus hwsim's own
// exchange.enablePrefetch, exchange.numIOTiles, host.threads and
// host.elementwiseRuns, host.planarOperands, host.matMulRows
// (docs/hwsim.md says what each does here).
constexpr std::array kOptions = {
    // Debug
    OptionSpec{"debug.allowOutOfMemory", Kind::Bool, true},
    OptionSpec{"debug.branchRecordTile", Kind::UInt, false},
    OptionSpec{"debug.computeInstrumentationLevel", Kind::Choice, false, {"vertex", "tile", "ipu"}},
    OptionSpec{"debug.cpuMultiThreadExecution", Kind::Bool, true},
    OptionSpec{"debug.dumpDirectory", Kind::String, false},
    OptionSpec{"debug.floatPointOpException", Kind::Bool, false},
    OptionSpec{"debug.instrument", Kind::Bool, true},
    OptionSpec{"debug.instrumentCompute", Kind::Bool, true},
    OptionSpec{"debug.instrumentExternalExchange", Kind::Bool, true},
    OptionSpec{"debug.instrumentControlFlow", Kind::Bool, true},
    OptionSpec{"debug.nanOverflowMode", Kind::Bool, false},
    OptionSpec{"debug.outputAllSymbols", Kind::Bool, false},
    OptionSpec{"debug.profilingTile", Kind::UInt, false},
    OptionSpec{"debug.retainDebugInformation", Kind::Bool, false},
    OptionSpec{"debug.runtimeVerify", Kind::Bool, false},
    OptionSpec{"debug.supervisorStackSizeInBytes", Kind::UInt, false},
    OptionSpec{"debug.trace", Kind::Bool, false},
    OptionSpec{"debug.traceFile", Kind::String, false},
    OptionSpec{"debug.verify", Kind::Bool, false},
    OptionSpec{"debug.workerStackSizeInBytes", Kind::UInt, false},
    // Optimisations
    OptionSpec{"opt.internalExchangeOptimisationTarget", Kind::Choice, false, {"balanced", "cycles", "memory"}},
    OptionSpec{"opt.enableMultiAccessCopies", Kind::Bool, false},
    OptionSpec{"opt.limitVertexStateToLower256K", Kind::Bool, false},
    OptionSpec{"opt.maxCompilationThreads", Kind::UInt, false},
    OptionSpec{"opt.maxLinkerThreads", Kind::UInt, false},
    OptionSpec{"opt.useAutoloader", Kind::Bool, false},
    // Target
    OptionSpec{"target.deterministicWorkers", Kind::Choice, false, {"true", "false", "portable"}},
    OptionSpec{"target.extendedMemory", Kind::Bool, false},
    OptionSpec{"target.gatewayWriteCombining", Kind::Bool, false},
    OptionSpec{"target.saveArchive", Kind::String, false},
    OptionSpec{"target.saveOutputVertexGraph", Kind::String, false},
    OptionSpec{"target.syncReplicasIndependently", Kind::Bool, false},
    // Report generation
    OptionSpec{"autoReport.all", Kind::Bool, true},
    OptionSpec{"autoReport.directory", Kind::String, true},
    OptionSpec{"autoReport.executionProfileProgramRunCount", Kind::UInt, true},
    OptionSpec{"autoReport.outputArchive", Kind::Bool, false},
    OptionSpec{"autoReport.outputDebugInfo", Kind::Bool, false},
    OptionSpec{"autoReport.outputExecutionProfile", Kind::Bool, true},
    OptionSpec{"autoReport.outputGraphProfile", Kind::Bool, true},
    OptionSpec{"autoReport.outputLoweredVars", Kind::Bool, false},
    OptionSpec{"autoReport.outputSerializedGraph", Kind::Bool, false},
    OptionSpec{"autoReport.streamAtEachRun", Kind::Bool, true},
    // Experimental
    OptionSpec{"experimental.minLoweringTiles", Kind::UInt, false},
    // hwsim's own
    OptionSpec{"exchange.enablePrefetch", Kind::Bool, true},
    OptionSpec{"exchange.numIOTiles", Kind::UInt, true},
    OptionSpec{"host.threads", Kind::Count, true},
    OptionSpec{"host.elementwiseRuns", Kind::Bool, true},
    OptionSpec{"host.planarOperands", Kind::Bool, true},
    OptionSpec{"host.matMulRows", Kind::Bool, true},
};

const OptionSpec *findSpec(std::string_view key) {
  for (const auto &spec : kOptions) {
    if (spec.name == key) return &spec;
  }
  return nullptr;
}

// Digits only, at most 9 of them: fits an unsigned.
bool isUInt(const std::string &value) {
  return !value.empty() && value.size() <= 9 && value.find_first_not_of("0123456789") == std::string::npos;
}

void checkValue(const OptionSpec &spec, const std::string &key, const std::string &value) {
  switch (spec.kind) {
    case Kind::Bool:
      if (value != "true" && value != "false") {
        throw InvalidOption(key, fmt::format("option '{}': value '{}' is not true or false", key, value));
      }
      return;
    case Kind::UInt:
      if (!isUInt(value)) {
        throw InvalidOption(key, fmt::format("option '{}': value '{}' is not a non-negative integer", key, value));
      }
      return;
    case Kind::Count:
      if (!isUInt(value) || value.find_first_not_of('0') == std::string::npos) {
        throw InvalidOption(key, fmt::format("option '{}': value '{}' is not a positive integer", key, value));
      }
      return;
    case Kind::String:
      return;
    case Kind::Choice:
      for (const auto choice : spec.choices) {
        if (!choice.empty() && choice == value) return;
      }
      throw InvalidOption(key, fmt::format("option '{}': value '{}' is not one of {}, {}, {}", key, value,
                                           spec.choices[0], spec.choices[1], spec.choices[2]));
  }
}

void validateOne(const std::string &key, const std::string &value) {
  const OptionSpec *spec = findSpec(key);
  if (spec == nullptr) throw InvalidOption(key, fmt::format("unknown option '{}'", key));
  checkValue(*spec, key, value);
}

}  // namespace

void validateEngineOptions(const OptionFlags &options) {
  for (const auto &[key, value] : options) validateOne(key, value);
}

std::vector<std::string> ignoredEngineOptions(const OptionFlags &options) {
  std::vector<std::string> out;
  for (const auto &entry : options) {
    const OptionSpec *spec = findSpec(entry.first);
    if (spec != nullptr && !spec->implemented) out.push_back(entry.first);
  }
  return out;
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
