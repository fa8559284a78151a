// max_look_ahead (seed 001: "the number of host synchronization points that
// Model Runtime is allowed to prepare in advance"): a Session prepares an
// input stream's next transfer ahead through the engine's stream prefetch,
// so the data can travel to the device's IO tiles while the current run
// computes (docs/hwsim.md, "Overlapped I/O"). LookAhead counts the host
// syncs prepared ahead and not yet consumed, across all of a session's
// input streams, and refuses a prefetch beyond the limit.
//
// Threads: prefetch, complete and invalidatePrefetched run on the thread
// running the session's programs (of their replica: a replicated model's
// replicas share one limit); preparedAhead() may be read from any
// thread (a runner's producers look at it to see that work is pending).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include <hwsim/engine.hpp>

#include "queue/queue_manager.hpp"
#include "session/predicates.hpp"

namespace mrt {

class LookAhead {
 public:
  // limit: host syncs prepared ahead at most; nullopt: no limit.
  explicit LookAhead(std::optional<std::uint64_t> limit) : limit_(limit) {}

  // Takes one slot if the limit allows; then either prepared() (the
  // transfer is ready, the slot held until release()) or release().
  bool tryTake();
  void prepared() { total_.fetch_add(1, std::memory_order_relaxed); }
  void release() { prepared_.fetch_sub(1, std::memory_order_release); }
  // Transfers prepared ahead and not yet consumed or dropped.
  std::uint64_t preparedAhead() const { return prepared_.load(std::memory_order_acquire); }
  // Transfers prepared ahead since the session was created.
  std::uint64_t totalPrepared() const { return total_.load(std::memory_order_relaxed); }

 private:
  std::optional<std::uint64_t> limit_;
  std::atomic<std::uint64_t> prepared_{0};
  std::atomic<std::uint64_t> total_{0};
};

// A stream callback whose fetch is `fetch` and whose prefetch calls
// `prefetch` when `lookAhead` has a slot, holding the slot until the engine
// consumes the prepared transfer (complete) or drops it (load, stop).
std::unique_ptr<hwsim::StreamCallback> prefetchingCallback(CallbackHandle fetch, StreamPrefetchFn prefetch,
                                                           std::shared_ptr<LookAhead> lookAhead);

}  // namespace mrt
