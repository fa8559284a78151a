// Calls into hwsim from the runtime: hwsim reports failures as hwsim::Error
// with a kind; the runtime reports mrt::Error with a status code. callHwsim
// maps one onto the other, keeping hwsim's message (which names the value);
// a lock directory that cannot be created or used is Unavailable too.
#pragma once

#include <system_error>
#include <utility>

#include <hwsim/device_error.hpp>
#include <hwsim/error.hpp>

#include "common/error.hpp"

namespace mrt {

inline ErrorCode errorCodeOf(hwsim::ErrorKind kind) noexcept {
  switch (kind) {
    case hwsim::ErrorKind::InvalidArgument:
    case hwsim::ErrorKind::InvalidOption: return ErrorCode::InvalidArgument;
    case hwsim::ErrorKind::NotFound: return ErrorCode::NotFound;
    case hwsim::ErrorKind::FailedPrecondition:
    case hwsim::ErrorKind::ProfilingDisabled: return ErrorCode::FailedPrecondition;
    case hwsim::ErrorKind::CorruptExecutable: return ErrorCode::CorruptModel;
    case hwsim::ErrorKind::DeviceError: return ErrorCode::DeviceError;
    case hwsim::ErrorKind::Unavailable: return ErrorCode::Unavailable;
    case hwsim::ErrorKind::GraphError:
    case hwsim::ErrorKind::LinkError: return ErrorCode::InvalidArgument;
  }
  return ErrorCode::Internal;
}

inline RecoveryAction recoveryActionOf(hwsim::RecoveryAction action) noexcept {
  static_assert(int(hwsim::RecoveryAction::IpuReset) == int(RecoveryAction::IpuReset) &&
                int(hwsim::RecoveryAction::PartitionReset) == int(RecoveryAction::PartitionReset) &&
                int(hwsim::RecoveryAction::FullReset) == int(RecoveryAction::FullReset));
  return static_cast<RecoveryAction>(action);
}

// Runs fn() and returns its result; an hwsim::Error becomes an mrt::Error,
// a device error with its recovery action.
template <typename Fn>
decltype(auto) callHwsim(Fn &&fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const hwsim::RuntimeError &error) {
    throw Error(ErrorCode::DeviceError, error.what()).withRecoveryAction(recoveryActionOf(error.recoveryAction()));
  } catch (const hwsim::Error &error) {
    throw Error(errorCodeOf(error.kind()), error.what());
  } catch (const std::system_error &error) {
    // The lock directory or files cannot be used (std::filesystem errors).
    throw Error(ErrorCode::Unavailable, "simulated IPU system: {}", error.what());
  }
}

}  // namespace mrt
