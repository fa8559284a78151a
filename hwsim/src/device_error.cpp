#include "hwsim/device_error.hpp"

namespace hwsim {

const char *toString(RecoveryAction action) noexcept {
  switch (action) {
    case RecoveryAction::None: return "NONE";
    case RecoveryAction::IpuReset: return "IPU_RESET";
    case RecoveryAction::PartitionReset: return "PARTITION_RESET";
    case RecoveryAction::FullReset: return "FULL_RESET";
  }
  return "UNKNOWN";
}

const char *toString(DeviceErrorCode code) noexcept {
  switch (code) {
    case DeviceErrorCode::TileException: return "TILE_EXCEPTION";
    case DeviceErrorCode::MemoryParity: return "MEMORY_PARITY";
    case DeviceErrorCode::ExchangeError: return "EXCHANGE_ERROR";
    case DeviceErrorCode::HostLinkError: return "HOST_LINK_ERROR";
  }
  return "UNKNOWN";
}

RecoveryAction recoveryActionFor(DeviceErrorCode code) noexcept {
  switch (code) {
    case DeviceErrorCode::TileException:
    case DeviceErrorCode::MemoryParity: return RecoveryAction::IpuReset;
    case DeviceErrorCode::ExchangeError: return RecoveryAction::PartitionReset;
    case DeviceErrorCode::HostLinkError: return RecoveryAction::FullReset;
  }
  return RecoveryAction::IpuReset;
}

}  // namespace hwsim
