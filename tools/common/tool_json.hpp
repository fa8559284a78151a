// What a tool run with --json prints when it fails: one JSON object whose
// "error" is the message (as mrt-info --json reports a damaged file), so a
// script reading stdout always gets JSON. The message goes to stderr too.
#pragma once

#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

namespace mrt::tools {

inline void reportFailure(const std::string &tool, const std::string &message, bool json) {
  if (json) std::cout << nlohmann::json{{"error", message}}.dump(2) << "\n";
  std::cerr << tool << ": " << message << "\n";
}

}  // namespace mrt::tools
