// mrt::Error: the one exception type the internals throw for expected
// failures. Its code maps 1:1 onto mrt_status (checked in src/capi/status.cpp),
// and its message is what mrt_last_error_message() returns, so write messages
// that name the bad value: "input 'x': expected 3136 bytes, got 3135".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace mrt {

enum class ErrorCode : std::int32_t {
  Ok = 0,
  InvalidArgument = 1,
  NotFound = 2,
  FailedPrecondition = 3,
  ResourceExhausted = 4,
  DeadlineExceeded = 5,
  Cancelled = 6,
  Unavailable = 7,
  DeviceError = 8,
  CorruptModel = 9,
  VersionMismatch = 10,
  Unimplemented = 11,
  Internal = 12,
};

// What a device needs after a device error before it runs again (Poplar's
// RecoveryAction; hwsim::RecoveryAction and mrt_recovery_action have the
// same values). None for every error that is not a device error.
enum class RecoveryAction : std::uint8_t {
  None = 0,
  IpuReset = 1,        // reset the IPU(s) of the device and load again
  PartitionReset = 2,  // reset every IPU of the partition
  FullReset = 3,       // power-cycle the system
};

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string &message) : std::runtime_error(message), code_(code) {}

  template <typename... Args>
  Error(ErrorCode code, fmt::format_string<Args...> format, Args &&...args)
      : std::runtime_error(fmt::format(format, std::forward<Args>(args)...)), code_(code) {}

  ErrorCode code() const noexcept { return code_; }

  // For device errors: what the device needs, for callers to act on without
  // reading the message (`throw Error(...).withRecoveryAction(action)`).
  RecoveryAction recoveryAction() const noexcept { return recovery_; }
  Error &withRecoveryAction(RecoveryAction action) noexcept {
    recovery_ = action;
    return *this;
  }

 private:
  ErrorCode code_;
  RecoveryAction recovery_ = RecoveryAction::None;
};

}  // namespace mrt
