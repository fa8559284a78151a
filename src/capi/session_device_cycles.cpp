// mrt_session_device_cycles (include/mrt_c.h, "Sessions"): the modelled
// device time of a session's runs, what ModelRunner reports per replica
// (mrt_model_runner_device_cycles) for a session driven by hand.
#include <hwsim/engine.hpp>

#include "capi/session.hpp"
#include "device/hwsim_error.hpp"

extern "C" {

MRT_API mrt_status mrt_session_device_cycles(const mrt_session *session, uint32_t replica, uint64_t *out_cycles,
                                             double *out_clock_hz) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::Session &s = mrt::capi::sessionOf(session);
    mrt::capi::requireNotNull(out_cycles, "out_cycles");
    const unsigned lane = mrt::capi::requireReplica(*session, replica);
    const hwsim::Engine &engine = s.engine();
    mrt::callHwsim([&] {
      *out_cycles = engine.deviceCycles(lane);
      if (out_clock_hz != nullptr) *out_clock_hz = engine.getTimeStamp().clockHz;
    });
  });
}

}  // extern "C"
