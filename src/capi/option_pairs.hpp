// NULL-terminated { key, value, key, value, ..., NULL } option arrays, as
// device options, engine options and compile options take them.
#pragma once

#include <map>
#include <string>

namespace mrt::capi {

// The pairs as a map (empty for NULL). Throws InvalidArgument naming
// `argument`, the position and the key for a key without a value or a key
// given twice; `what` names the kind of option in messages ("device option").
std::map<std::string, std::string> optionPairsOf(const char *const *pairs, const char *argument, const char *what);

// InvalidArgument "engine option 'KEY' = 'VALUE': why" unless hwsim's
// engines accept the option.
void requireValidEngineOption(const std::string &key, const std::string &value);

}  // namespace mrt::capi
