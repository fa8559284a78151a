// The per-thread "last error" behind mrt_last_error_message() and
// mrt_last_error_recovery_action().
#pragma once

#include <string>

#include "common/error.hpp"

namespace mrt::capi {

void setLastError(std::string message, RecoveryAction action);
const std::string &lastError() noexcept;
RecoveryAction lastErrorRecoveryAction() noexcept;

}  // namespace mrt::capi
