// The per-thread "last error" behind mrt_last_error_message().
#pragma once

#include <string>

namespace mrt::capi {

void setLastError(std::string message);
const std::string &lastError() noexcept;

}  // namespace mrt::capi
