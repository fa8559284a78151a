// The C handle of an engine (include/mrt_c.h, "Engines"): an hwsim::Engine
// plus what the C contract adds around it - the device it is loaded on, the
// print callback, and the rule that one call at a time drives it.
//
// hwsim::Engine must not be used while a run is in progress (only stop() is
// thread-safe), so every call but mrt_engine_stop() enters through
// EngineCall, which tries to take the engine and fails at once with
// FAILED_PRECONDITION naming what the other thread is doing, instead of
// blocking behind a run that may wait on a stream callback for ever.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include <hwsim/engine.hpp>

#include "capi/engine_print.hpp"
#include "device/device.hpp"
#include "mrt_c.h"

struct mrt_engine {
  explicit mrt_engine(hwsim::Engine e) : engine(std::move(e)) {}

  hwsim::Engine engine;  // keeps the executable (shared) alive
  // Where PrintTensor output goes while a print callback is set (the
  // engine writes to it only during runs, which end before it is replaced).
  std::unique_ptr<mrt::capi::PrintLines> print;

  // Owned by whoever holds `busy` (the EngineCall of every call but stop).
  std::shared_ptr<mrt::Device> device;  // the device loaded on, while loaded
  bool loaded = false;

  // A flag rather than a mutex: a stream or print callback may call back
  // into its own engine on the running thread, which must fail cleanly, not
  // relock a mutex it holds.
  bool tryAcquire() noexcept {
    bool expected = false;
    return busy.compare_exchange_strong(expected, true, std::memory_order_acquire);
  }
  void acquire() noexcept {  // waits (mrt_engine_destroy)
    while (!tryAcquire()) busy.wait(true, std::memory_order_relaxed);
  }
  void release() noexcept {
    busy.store(false, std::memory_order_release);
    busy.notify_all();
  }

  std::atomic<bool> busy{false};
  // What the holder of `busy` is doing, for the message of a refused call.
  std::atomic<const char *> activity{nullptr};
  std::atomic<std::uint32_t> runningProgram{0};
  // Set when another session or engine bound the device (see engine.cpp):
  // the executable is no longer the one on the device.
  std::atomic<bool> displaced{false};
};

namespace mrt::capi {

// The calling export's hold on an engine for its whole body. Throws
// InvalidArgument for NULL and FailedPrecondition "engine is busy ..." when
// another thread holds it.
class EngineCall {
 public:
  EngineCall(const mrt_engine *engine, const char *function);
  ~EngineCall();
  EngineCall(const EngineCall &) = delete;
  EngineCall &operator=(const EngineCall &) = delete;

  mrt_engine &engine() const noexcept { return *engine_; }
  hwsim::Engine &hw() const noexcept { return engine_->engine; }

  // Throws FailedPrecondition "engine is not loaded: call mrt_engine_load"
  // unless the executable is loaded (and still on its device).
  void requireLoaded() const;
  // replica < the replication factor, or MRT_ALL_REPLICAS when allowAll;
  // else InvalidArgument naming it.
  void checkReplica(std::uint32_t replica, bool allowAll) const;

 private:
  mrt_engine *engine_;
};

}  // namespace mrt::capi
