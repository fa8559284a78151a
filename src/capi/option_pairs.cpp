#include "capi/option_pairs.hpp"

#include <cstddef>

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

}  // namespace mrt::capi
