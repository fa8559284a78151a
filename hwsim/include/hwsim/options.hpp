// Engine and compile options, as in Poplar's OptionFlags: string keys and
// string values. The recognised options and their values are listed in
// docs/hwsim.md. Unknown keys or malformed values throw InvalidOption naming
// the option. The environment variable MRT_ENGINE_OPTIONS (a JSON object, e.g.
// '{"debug.instrument":"true"}' or '{"debug.instrument":true}') overrides the
// options given in code, like POPLAR_ENGINE_OPTIONS.
#pragma once

#include <map>
#include <string>

namespace hwsim {

using OptionFlags = std::map<std::string, std::string>;

// The options after applying MRT_ENGINE_OPTIONS, validated. Throws
// InvalidOption for an unknown key, a bad value, or malformed JSON (the option
// named is then "MRT_ENGINE_OPTIONS").
OptionFlags resolveEngineOptions(const OptionFlags &options);

// Validates without the environment override.
void validateEngineOptions(const OptionFlags &options);

}  // namespace hwsim
