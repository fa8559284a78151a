// Status codes and the per-thread last error message.
#include <algorithm>
#include <cstring>
#include <string>

#include "capi/guard.hpp"
#include "capi/last_error.hpp"

namespace mrt::capi {

namespace {
thread_local std::string t_lastError;
thread_local RecoveryAction t_lastRecoveryAction = RecoveryAction::None;
}  // namespace

void setLastError(std::string message, RecoveryAction action) {
  t_lastRecoveryAction = action;
  t_lastError = std::move(message);
}
const std::string &lastError() noexcept { return t_lastError; }
RecoveryAction lastErrorRecoveryAction() noexcept { return t_lastRecoveryAction; }

// The internal codes must stay aligned with the public ones.
static_assert(static_cast<mrt_status>(ErrorCode::Ok) == MRT_OK);
static_assert(static_cast<mrt_status>(ErrorCode::InvalidArgument) == MRT_INVALID_ARGUMENT);
static_assert(static_cast<mrt_status>(ErrorCode::NotFound) == MRT_NOT_FOUND);
static_assert(static_cast<mrt_status>(ErrorCode::FailedPrecondition) == MRT_FAILED_PRECONDITION);
static_assert(static_cast<mrt_status>(ErrorCode::ResourceExhausted) == MRT_RESOURCE_EXHAUSTED);
static_assert(static_cast<mrt_status>(ErrorCode::DeadlineExceeded) == MRT_DEADLINE_EXCEEDED);
static_assert(static_cast<mrt_status>(ErrorCode::Cancelled) == MRT_CANCELLED);
static_assert(static_cast<mrt_status>(ErrorCode::Unavailable) == MRT_UNAVAILABLE);
static_assert(static_cast<mrt_status>(ErrorCode::DeviceError) == MRT_DEVICE_ERROR);
static_assert(static_cast<mrt_status>(ErrorCode::CorruptModel) == MRT_CORRUPT_MODEL);
static_assert(static_cast<mrt_status>(ErrorCode::VersionMismatch) == MRT_VERSION_MISMATCH);
static_assert(static_cast<mrt_status>(ErrorCode::Unimplemented) == MRT_UNIMPLEMENTED);
static_assert(static_cast<mrt_status>(ErrorCode::Internal) == MRT_INTERNAL);
static_assert(static_cast<int>(RecoveryAction::None) == MRT_RECOVERY_NONE);
static_assert(static_cast<int>(RecoveryAction::IpuReset) == MRT_RECOVERY_IPU_RESET);
static_assert(static_cast<int>(RecoveryAction::PartitionReset) == MRT_RECOVERY_PARTITION_RESET);
static_assert(static_cast<int>(RecoveryAction::FullReset) == MRT_RECOVERY_FULL_RESET);

}  // namespace mrt::capi

extern "C" {

MRT_API const char *mrt_status_string(mrt_status code) noexcept {
  switch (code) {
    case MRT_OK: return "MRT_OK: success";
    case MRT_INVALID_ARGUMENT: return "MRT_INVALID_ARGUMENT: invalid argument";
    case MRT_NOT_FOUND: return "MRT_NOT_FOUND: not found";
    case MRT_FAILED_PRECONDITION: return "MRT_FAILED_PRECONDITION: wrong state for this call";
    case MRT_RESOURCE_EXHAUSTED: return "MRT_RESOURCE_EXHAUSTED: resource exhausted";
    case MRT_DEADLINE_EXCEEDED: return "MRT_DEADLINE_EXCEEDED: deadline exceeded";
    case MRT_CANCELLED: return "MRT_CANCELLED: cancelled";
    case MRT_UNAVAILABLE: return "MRT_UNAVAILABLE: no device available";
    case MRT_DEVICE_ERROR: return "MRT_DEVICE_ERROR: device error";
    case MRT_CORRUPT_MODEL: return "MRT_CORRUPT_MODEL: corrupt model";
    case MRT_VERSION_MISMATCH: return "MRT_VERSION_MISMATCH: version mismatch";
    case MRT_UNIMPLEMENTED: return "MRT_UNIMPLEMENTED: not implemented";
    case MRT_INTERNAL: return "MRT_INTERNAL: internal error";
    default: return "unknown status code";
  }
}

MRT_API const char *mrt_last_error_message(void) noexcept {
  return mrt::capi::lastError().c_str();
}

MRT_API int32_t mrt_last_error_recovery_action(void) noexcept {
  return static_cast<int32_t>(mrt::capi::lastErrorRecoveryAction());
}

MRT_API mrt_status mrt_last_error_message_copy(char *buffer, size_t buffer_size,
                                               size_t *out_length) noexcept {
  // Deliberately not through guard(): failing here must not replace the very
  // message the caller is trying to read.
  const std::string &message = mrt::capi::lastError();
  if (buffer == nullptr && buffer_size > 0) return MRT_INVALID_ARGUMENT;
  if (buffer_size > 0) {
    size_t n = std::min(message.size(), buffer_size - 1);
    std::memcpy(buffer, message.data(), n);
    buffer[n] = '\0';
  }
  if (out_length) *out_length = message.size();
  return MRT_OK;
}

}  // extern "C"
