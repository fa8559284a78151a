// Device (hardware) errors raised while running, simulated or not, and the
// recovery action each needs - the counterpart of poplar::runtime_error with
// its RecoveryAction. After an error whose action is not None the device must
// be reset (Device::reset) and the engine loaded again before running.
#pragma once

#include <cstdint>
#include <string>

#include "hwsim/error.hpp"

namespace hwsim {

enum class RecoveryAction : std::uint8_t {
  None = 0,            // the engine can run again after load()
  IpuReset = 1,        // reset the IPU(s) of the device, then load again
  PartitionReset = 2,  // reset every IPU of the partition (the whole device)
  FullReset = 3,       // power-cycle the system (simulated like PartitionReset)
};
const char *toString(RecoveryAction action) noexcept;  // "IPU_RESET"

// Simulated error kinds (a subset of poplar::ErrorCode).
enum class DeviceErrorCode : std::uint8_t {
  TileException = 0,   // a worker hit an exception on a tile -> IPU_RESET
  MemoryParity = 1,    // tile memory parity error -> IPU_RESET
  ExchangeError = 2,   // exchange/IPU-link failure -> PARTITION_RESET
  HostLinkError = 3,   // PCIe link failure -> FULL_RESET
};
const char *toString(DeviceErrorCode code) noexcept;  // "TILE_EXCEPTION"
RecoveryAction recoveryActionFor(DeviceErrorCode code) noexcept;

// Where a simulated error fires: a program step (see Executable::programSteps)
// on a tile. Obtain them with Engine::getSimulatedErrorLocations.
struct ErrorLocation {
  unsigned programStep = 0;
  unsigned tile = 0;
  bool operator==(const ErrorLocation &) const = default;
  auto operator<=>(const ErrorLocation &) const = default;
};

class RuntimeError : public Error {
 public:
  RuntimeError(DeviceErrorCode code, RecoveryAction action, ErrorLocation location, unsigned replica,
               bool isSimulated, const std::string &message)
      : Error(ErrorKind::DeviceError, message), code_(code), action_(action), location_(location),
        replica_(replica), simulated_(isSimulated) {}
  DeviceErrorCode code() const noexcept { return code_; }
  RecoveryAction recoveryAction() const noexcept { return action_; }
  const ErrorLocation &location() const noexcept { return location_; }
  unsigned replica() const noexcept { return replica_; }
  bool isSimulated() const noexcept { return simulated_; }

 private:
  DeviceErrorCode code_;
  RecoveryAction action_;
  ErrorLocation location_;
  unsigned replica_;
  bool simulated_;
};

}  // namespace hwsim
