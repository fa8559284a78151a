// Engines (include/mrt_c.h, "Engines"): creation with options, loading on a
// device, running, stopping and the print callback. Streams, host access,
// simulated errors and profiles are in engine_*.cpp.
#include "capi/engine.hpp"

#include <iostream>
#include <utility>

#include <hwsim/device_error.hpp>
#include <hwsim/options.hpp>

#include "capi/device.hpp"
#include "capi/executable.hpp"
#include "capi/guard.hpp"
#include "capi/option_pairs.hpp"
#include "capi/user_data.hpp"
#include "common/logging.hpp"
#include "device/hwsim_error.hpp"

namespace mrt::capi {

EngineCall::EngineCall(const mrt_engine *engine, const char *function)
    : engine_(const_cast<mrt_engine *>(engine)) {
  requireNotNull(engine, "engine");
  if (!engine_->tryAcquire()) {
    // The holder may finish between the try-lock and these loads; the
    // message is then about a call that just ended, which is still true.
    const char *activity = engine_->activity.load();
    if (activity == nullptr) {
      throw Error(ErrorCode::FailedPrecondition, "engine is busy running program {} on another thread",
                  engine_->runningProgram.load());
    }
    throw Error(ErrorCode::FailedPrecondition, "engine is busy in {} on another thread", activity);
  }
  engine_->activity.store(function);
}

EngineCall::~EngineCall() {
  engine_->activity.store(nullptr);
  engine_->release();
}

void EngineCall::requireLoaded() const {
  if (engine_->loaded && engine_->displaced.load()) {
    throw Error(ErrorCode::FailedPrecondition,
                "engine is not loaded: device {} has been bound by another session or engine since; call "
                "mrt_engine_load",
                engine_->device->id());
  }
  if (!engine_->loaded) throw Error(ErrorCode::FailedPrecondition, "engine is not loaded: call mrt_engine_load");
}

void EngineCall::checkReplica(std::uint32_t replica, bool allowAll) const {
  if (allowAll && replica == MRT_ALL_REPLICAS) return;
  const unsigned replicas = engine_->engine.getExecutable().replicationFactor();
  if (replica >= replicas) {
    throw Error(ErrorCode::InvalidArgument, "replica {} out of range: the executable has {} replica{}{}", replica,
                replicas, replicas == 1 ? "" : "s", allowAll ? " (or pass MRT_ALL_REPLICAS)" : "");
  }
}

namespace {

// The token an engine binds its device with (mrt::Device's session slot):
// a device has one executable loaded at a time, whether a session's or an
// engine's. When someone else binds it, the engine is unloaded - unless it
// is in a call (maybe running on the device), which refuses the bind.
mrt::Device::DisplacedCallback displacedCallback(mrt_engine &engine) {
  return [&engine] {
    if (!engine.tryAcquire()) {
      throw Error(ErrorCode::FailedPrecondition, "the device is in use by an engine (in a call on it)");
    }
    engine.displaced.store(true);
    engine.release();
  };
}

void unbindDevice(mrt_engine &engine) {
  if (engine.device) engine.device->unbindSession(&engine);
  engine.device.reset();
  engine.loaded = false;
}

void load(mrt_engine &engine, const std::shared_ptr<mrt::Device> &device) {
  hwsim::Device &hwDevice = device->device();
  // After a device fault the device needs a reset: loading again is how the
  // C API recovers (mrt_engine_load's contract), so do it here.
  if (const auto pending = hwDevice.pendingRecovery(); pending != hwsim::RecoveryAction::None) {
    log::logger().info("mrt_engine_load: resetting device {} ({} pending after a device error)", device->id(),
                       hwsim::toString(pending));
    callHwsim([&] { hwDevice.reset(); });
  }
  // Checks the executable fits the device before the device changes hands.
  callHwsim([&] { engine.engine.prepare(hwDevice); });
  if (engine.device != device) unbindDevice(engine);
  engine.loaded = false;
  device->bindToSession(&engine, displacedCallback(engine));
  engine.device = device;
  engine.displaced.store(false);
  callHwsim([&] { engine.engine.deploy(); });
  engine.loaded = true;
}

void checkProgram(const hwsim::Engine &engine, std::uint32_t program) {
  const unsigned programs = engine.getExecutable().numPrograms();
  if (program >= programs) {
    throw Error(ErrorCode::InvalidArgument, "program {} out of range: the executable has {} program{}", program,
                programs, programs == 1 ? "" : "s");
  }
}

// Runs one program (all replicas, or one) under `call`, mapping what hwsim
// reports onto the C statuses. A stop or a device fault unloads the engine:
// hwsim needs a load before the next run either way.
template <typename Run>
void runProgram(EngineCall &call, std::uint32_t program, Run &&run) {
  mrt_engine &engine = call.engine();
  call.requireLoaded();
  checkProgram(engine.engine, program);
  engine.runningProgram.store(program);
  engine.activity.store(nullptr);  // "busy running program N"
  hwsim::RunStatus status;
  try {
    status = callHwsim(run);
  } catch (const Error &error) {
    if (error.code() == ErrorCode::DeviceError) {
      engine.loaded = false;
      throw Error(ErrorCode::DeviceError, "program {}: {}; call mrt_engine_load to reset the device and load again",
                  program, error.what())
          .withRecoveryAction(error.recoveryAction());
    }
    throw;
  }
  if (status == hwsim::RunStatus::Stopped) {
    engine.loaded = false;
    throw Error(ErrorCode::Cancelled, "program {} was stopped by mrt_engine_stop; call mrt_engine_load to run again",
                program);
  }
}

}  // namespace
}  // namespace mrt::capi

using namespace mrt::capi;
using mrt::Error;
using mrt::ErrorCode;
using mrt::callHwsim;

extern "C" {

MRT_API mrt_status mrt_engine_create(const mrt_executable *executable, const char *const *options,
                                     mrt_engine **out) MRT_NOEXCEPT {
  return guard("mrt_engine_create", [&] {
    const hwsim::Executable &exe = executableOf(executable, "executable");
    requireNotNull(out, "out");
    const hwsim::OptionFlags flags = optionPairsOf(options, "options", "engine option");
    auto engine = std::make_unique<mrt_engine>(callHwsim([&] { return hwsim::Engine(exe, flags); }));
    // The header promises stdout until a print callback is set.
    engine->engine.setPrintTensorStream(std::cout);
    const hwsim::OptionFlags resolved = engine->engine.getEngineOptions();
    for (const std::string &key : hwsim::ignoredEngineOptions(resolved)) {
      mrt::log::logger().debug("mrt_engine_create: engine option '{}' = '{}' ignored: it changes nothing in the "
                               "simulated IPU",
                               key, resolved.at(key));
    }
    *out = engine.release();
  });
}

MRT_API void mrt_engine_destroy(mrt_engine *engine) MRT_NOEXCEPT {
  if (engine == nullptr) return;
  try {
    engine->engine.stop();  // a run in progress ends at its next sync point...
    engine->acquire();  // ...and we wait for it
    unbindDevice(*engine);
    delete engine;
  } catch (...) {
    // unbindSession takes the device's mutex; should that fail, leaking
    // beats crashing the caller.
  }
}

MRT_API mrt_status mrt_engine_load(mrt_engine *engine, const mrt_device *device) MRT_NOEXCEPT {
  return guard("mrt_engine_load", [&] {
    EngineCall call(engine, "mrt_engine_load");
    requireNotNull(device, "device");
    requireNotNull(device->device.get(), "device->device");
    load(call.engine(), device->device);
  });
}

MRT_API mrt_status mrt_engine_run(mrt_engine *engine, uint32_t program) MRT_NOEXCEPT {
  return guard("mrt_engine_run", [&] {
    EngineCall call(engine, "mrt_engine_run");
    runProgram(call, program, [&] { return call.hw().run(program); });
  });
}

MRT_API mrt_status mrt_engine_run_replica(mrt_engine *engine, uint32_t program, uint32_t replica) MRT_NOEXCEPT {
  return guard("mrt_engine_run_replica", [&] {
    EngineCall call(engine, "mrt_engine_run_replica");
    call.checkReplica(replica, false);
    runProgram(call, program, [&] { return call.hw().runReplica(program, replica); });
  });
}

MRT_API mrt_status mrt_engine_stop(mrt_engine *engine) MRT_NOEXCEPT {
  return guard("mrt_engine_stop", [&] {
    requireNotNull(engine, "engine");
    engine->engine.stop();  // thread-safe, no EngineCall: it must reach a running engine
  });
}

MRT_API mrt_status mrt_engine_set_print_callback(mrt_engine *engine, mrt_print_fn fn, void *user_data,
                                                 void (*user_data_free)(void *user_data)) MRT_NOEXCEPT {
  return guard("mrt_engine_set_print_callback", [&] {
    // First, so user_data_free runs exactly once whatever fails below.
    auto owned = ownUserData(user_data, user_data_free);
    EngineCall call(engine, "mrt_engine_set_print_callback");
    mrt_engine &e = call.engine();
    if (fn == nullptr) {
      e.engine.setPrintTensorStream(std::cout);
      e.print.reset();
      return;
    }
    auto print = std::make_unique<PrintLines>(fn, std::move(owned));
    e.engine.setPrintTensorStream(print->stream());
    e.print = std::move(print);  // frees the previous callback's user_data
  });
}

MRT_API mrt_status mrt_engine_device_cycles(const mrt_engine *engine, uint32_t replica,
                                            uint64_t *out_cycles) MRT_NOEXCEPT {
  return guard("mrt_engine_device_cycles", [&] {
    EngineCall call(engine, "mrt_engine_device_cycles");
    requireNotNull(out_cycles, "out_cycles");
    call.checkReplica(replica, false);
    *out_cycles = callHwsim([&] { return call.hw().deviceCycles(replica); });
  });
}

}  // extern "C"
