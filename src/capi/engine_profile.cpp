// Engine measurements and faults: execution profiling and its three report
// formats, and simulated device errors at program steps.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include <hwsim/device_error.hpp>

#include "capi/engine.hpp"
#include "capi/guard.hpp"
#include "capi/simulated_error.hpp"
#include "device/hwsim_error.hpp"

namespace mrt::capi {
namespace {

// The whole report in `format` (formats are small: one row per profiled step).
std::string profileText(const hwsim::Engine &engine, std::int32_t format) {
  std::ostringstream out;
  callHwsim([&] {
    switch (format) {
      case MRT_PROFILE_SUMMARY: engine.printProfileSummary(out); break;
      case MRT_PROFILE_INTERVALS: engine.reportIntervals(out); break;
      case MRT_PROFILE_TRACE: engine.writeTrace(out); break;
      default:
        throw Error(ErrorCode::InvalidArgument, "format {} is not an mrt_profile_format (0 to 2)", format);
    }
  });
  return std::move(out).str();
}

}  // namespace
}  // namespace mrt::capi

using namespace mrt::capi;
using mrt::Error;
using mrt::ErrorCode;
using mrt::callHwsim;

extern "C" {

MRT_API mrt_status mrt_engine_set_profiling(mrt_engine *engine, bool enabled) MRT_NOEXCEPT {
  return guard("mrt_engine_set_profiling", [&] {
    EngineCall call(engine, "mrt_engine_set_profiling");
    if (enabled) call.hw().enableExecutionProfiling();
    else call.hw().disableExecutionProfiling();
  });
}

MRT_API mrt_status mrt_engine_write_profile(const mrt_engine *engine, int32_t format,
                                            const char *path) MRT_NOEXCEPT {
  return guard("mrt_engine_write_profile", [&] {
    EngineCall call(engine, "mrt_engine_write_profile");
    requireNotNull(path, "path");
    // Made first, so a profile that cannot be made leaves the file alone.
    const std::string text = profileText(call.hw(), format);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (file) file.write(text.data(), static_cast<std::streamsize>(text.size()));
    file.close();
    if (!file) {
      throw Error(ErrorCode::NotFound, "cannot write the profile to '{}': {}", path, std::strerror(errno));
    }
  });
}

MRT_API mrt_status mrt_engine_profile_text(const mrt_engine *engine, int32_t format, char *buffer,
                                           size_t buffer_size, size_t *out_length) MRT_NOEXCEPT {
  return guard("mrt_engine_profile_text", [&] {
    EngineCall call(engine, "mrt_engine_profile_text");
    if (buffer_size > 0) requireNotNull(buffer, "buffer");
    const std::string text = profileText(call.hw(), format);
    if (buffer_size > 0) {
      const std::size_t n = std::min(text.size(), buffer_size - 1);
      std::memcpy(buffer, text.data(), n);
      buffer[n] = '\0';
    }
    if (out_length != nullptr) *out_length = text.size();
  });
}

MRT_API mrt_status mrt_engine_insert_simulated_error(mrt_engine *engine, int32_t error, uint32_t step,
                                                     uint32_t tile) MRT_NOEXCEPT {
  return guard("mrt_engine_insert_simulated_error", [&] {
    EngineCall call(engine, "mrt_engine_insert_simulated_error");
    const hwsim::DeviceErrorCode code = simulatedErrorOf(error);
    call.requireLoaded();
    callHwsim([&] { call.hw().insertSimulatedError(code, {step, tile}); });
  });
}

MRT_API mrt_status mrt_engine_erase_simulated_error(mrt_engine *engine, uint32_t step,
                                                    uint32_t tile) MRT_NOEXCEPT {
  return guard("mrt_engine_erase_simulated_error", [&] {
    EngineCall call(engine, "mrt_engine_erase_simulated_error");
    callHwsim([&] { call.hw().eraseSimulatedError({step, tile}); });
  });
}

MRT_API mrt_status mrt_engine_clear_simulated_errors(mrt_engine *engine) MRT_NOEXCEPT {
  return guard("mrt_engine_clear_simulated_errors", [&] {
    EngineCall call(engine, "mrt_engine_clear_simulated_errors");
    call.hw().clearSimulatedErrors();
  });
}

}  // extern "C"
