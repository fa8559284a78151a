// Engine and compile options, as in Poplar's OptionFlags: string keys and
// string values. Every option name Poplar's Engine documents is recognised
// (docs/hwsim.md lists them with their values); those that change nothing in
// a simulator are accepted, value-checked and reported by
// ignoredEngineOptions(). Unknown keys or malformed values throw InvalidOption naming
// the option. The environment variable MRT_ENGINE_OPTIONS (a JSON object, e.g.
// '{"debug.instrument":"true"}' or '{"debug.instrument":true}') overrides the
// options given in code, like POPLAR_ENGINE_OPTIONS.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace hwsim {

using OptionFlags = std::map<std::string, std::string>;

// The options after applying MRT_ENGINE_OPTIONS, validated. Throws
// InvalidOption for an unknown key, a bad value, or malformed JSON (the option
// named is then "MRT_ENGINE_OPTIONS").
OptionFlags resolveEngineOptions(const OptionFlags &options);

// Validates without the environment override.
void validateEngineOptions(const OptionFlags &options);

// The keys of `options` (in key order) that hwsim accepts because Poplar
// documents them but that have no effect in the simulator, so that the
// caller can log them as ignored (hwsim itself does not log). Unknown keys
// are not listed: validate first.
std::vector<std::string> ignoredEngineOptions(const OptionFlags &options);

}  // namespace hwsim
