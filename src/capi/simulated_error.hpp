// The mrt_simulated_error argument of the C API's error-injection functions
// (mrt_engine_*, mrt_session_*, mrt_model_runner_insert_simulated_error).
#pragma once

#include <cstdint>

#include <hwsim/device_error.hpp>

#include "common/error.hpp"
#include "mrt_c.h"

namespace mrt::capi {

inline hwsim::DeviceErrorCode simulatedErrorOf(std::int32_t error) {
  if (error < MRT_SIMULATED_TILE_EXCEPTION || error > MRT_SIMULATED_HOST_LINK_ERROR) {
    throw Error(ErrorCode::InvalidArgument, "error {} is not an mrt_simulated_error value (0 to 3)", error);
  }
  return static_cast<hwsim::DeviceErrorCode>(error);
}

}  // namespace mrt::capi
