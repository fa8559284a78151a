// mrt_session_*_simulated_error*: the seed Engine's simulated device faults
// for a Session, on the engine the session owns.
#include <hwsim/device_error.hpp>

#include "capi/guard.hpp"
#include "capi/session.hpp"
#include "capi/simulated_error.hpp"
#include "device/hwsim_error.hpp"

using mrt::capi::sessionOf;

extern "C" {

MRT_API mrt_status mrt_session_insert_simulated_error(mrt_session *session, int32_t error, uint32_t step,
                                                      uint32_t tile) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::Session &s = sessionOf(session);
    const hwsim::DeviceErrorCode code = mrt::capi::simulatedErrorOf(error);
    mrt::callHwsim([&] { s.engine().insertSimulatedError(code, {step, tile}); });
  });
}

MRT_API mrt_status mrt_session_erase_simulated_error(mrt_session *session, uint32_t step, uint32_t tile) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::Session &s = sessionOf(session);
    mrt::callHwsim([&] { s.engine().eraseSimulatedError({step, tile}); });
  });
}

MRT_API mrt_status mrt_session_clear_simulated_errors(mrt_session *session) noexcept {
  return mrt::capi::guard(__func__, [&] { sessionOf(session).engine().clearSimulatedErrors(); });
}

}  // extern "C"
