#include "session/session_config.hpp"

#include <algorithm>
#include <cctype>

#include "common/error.hpp"

namespace mrt {

void validate(const SessionConfig &config) {
  if (config.policy != LaunchPolicy::Immediate && config.policy != LaunchPolicy::Deferred) {
    throw Error(ErrorCode::InvalidArgument, "SessionConfig.policy {} is not a LaunchPolicy",
                static_cast<int>(config.policy));
  }
  const std::string &lookAhead = config.max_look_ahead;
  const bool isNumber = !lookAhead.empty() && lookAhead.size() <= 19 &&
                        std::all_of(lookAhead.begin(), lookAhead.end(),
                                    [](unsigned char c) { return std::isdigit(c) != 0; });
  if (lookAhead != "unlimited" && !isNumber) {
    throw Error(ErrorCode::InvalidArgument,
                "SessionConfig.max_look_ahead '{}' is neither \"unlimited\" nor an unsigned integer", lookAhead);
  }
  validate(config.wait_config);
}

std::optional<std::uint64_t> lookAheadLimit(const SessionConfig &config) {
  if (config.max_look_ahead == "unlimited") return std::nullopt;
  return std::stoull(config.max_look_ahead);
}

}  // namespace mrt
