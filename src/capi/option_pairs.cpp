#include "capi/option_pairs.hpp"

#include <cstddef>

#include <hwsim/error.hpp>
#include <hwsim/options.hpp>

#include "common/error.hpp"

namespace mrt::capi {

std::map<std::string, std::string> optionPairsOf(const char *const *pairs, const char *argument, const char *what) {
  std::map<std::string, std::string> options;
  if (pairs == nullptr) return options;
  for (std::size_t i = 0; pairs[i] != nullptr; i += 2) {
    if (pairs[i + 1] == nullptr) {
      throw Error(ErrorCode::InvalidArgument,
                  "{}[{}] '{}' has no value (the array holds key/value pairs, then NULL)", argument, i, pairs[i]);
    }
    if (!options.emplace(pairs[i], pairs[i + 1]).second) {
      throw Error(ErrorCode::InvalidArgument, "{}[{}]: {} '{}' is given twice", argument, i, what, pairs[i]);
    }
  }
  return options;
}

void requireValidEngineOption(const std::string &key, const std::string &value) {
  try {
    hwsim::validateEngineOptions(hwsim::OptionFlags{{key, value}});
  } catch (const hwsim::Error &error) {
    throw Error(ErrorCode::InvalidArgument, "engine option '{}' = '{}': {}", key, value, error.what());
  }
}

}  // namespace mrt::capi
