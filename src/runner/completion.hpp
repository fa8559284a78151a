// mrt::Completion: the shared state of one asynchronous request. It is
// completed exactly once (from the device thread, or by whoever cancels) with
// a status and a message; any number of threads may wait for it, with or
// without a timeout, and ready-callbacks fire exactly once each - inline if
// the request is already done, otherwise on the completing thread.
//
// This is what backs mrt_future and the runner's C++ futures. It is not a
// std::promise because the C API needs on_ready callbacks and timed waits
// that do not depend on who holds the future: destroying every future of a
// pending request is allowed, and the request still completes safely.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/adaptive_spin.hpp"
#include "common/error.hpp"

namespace mrt {

class Completion;

// What the waiters of a Completion may ask of whoever will complete it (a
// replica: its device thread). Shared by the Completions, since a future
// may outlive the runner.
class Completer {
 public:
  // True while the completing thread runs (it may answer soon): waiters
  // poll only then.
  virtual bool running() const noexcept = 0;
  // Called by a thread about to wait for `completion` without a bound: if
  // the completing thread is not busy, this thread may do its work itself until
  // `completion` is ready (caller-runs). Returns at once otherwise.
  virtual void serveWaiter(const Completion &completion) = 0;

 protected:
  ~Completer() = default;
};

class Completion {
 public:
  using ReadyCallback = std::function<void(ErrorCode code, const std::string &message)>;

  // completer: the side of the thread that will complete this request;
  // null: a thread nobody can stand in for, assumed running.
  explicit Completion(std::shared_ptr<Completer> completer = nullptr) noexcept : completer_(std::move(completer)) {}
  Completion(const Completion &) = delete;
  Completion &operator=(const Completion &) = delete;

  // Records the outcome (with a device error's recovery action) and wakes
  // waiters and callbacks. Only the first call counts: it returns true, later
  // ones return false and change nothing.
  bool complete(ErrorCode code, std::string message = {}, RecoveryAction action = RecoveryAction::None);

  bool isReady() const noexcept;

  // Blocks until the request is done or `timeout` has passed (a negative
  // timeout waits forever, 0 does not wait). True if done. A wait without a
  // bound first lets the completer put this thread to work
  // (Completer::serveWaiter: a replica whose device is free is served
  // by its waiter, as a synchronous execute is, which saves two thread
  // hand-offs). Then it polls while that pays (common/adaptive_spin.hpp: not
  // on one CPU, not while the completing thread is parked), so a request
  // that finishes within microseconds costs no syscall to wait for;
  // otherwise it parks.
  bool wait(std::chrono::nanoseconds timeout) const;

  // The outcome. Precondition: isReady() (FailedPrecondition otherwise).
  ErrorCode code() const;
  const std::string &message() const;
  RecoveryAction recoveryAction() const;

  // Calls `callback` exactly once with the outcome: now, on this thread, if
  // the request is done, otherwise on the thread that completes it, after
  // waiters can already see the outcome. A callback that throws has its
  // exception swallowed (there is nobody to report it to).
  void onReady(ReadyCallback callback);

 private:
  enum State : std::uint32_t { kPending = 0, kCompleting = 1, kReady = 2 };

  void requireReady(const char *what) const;

  const std::shared_ptr<Completer> completer_;
  // The futex word. Waiters sleep on it while it is not kReady.
  mutable std::atomic<std::uint32_t> state_{kPending};
  // Parked waiters, so complete() skips the wake syscall when there are none.
  mutable std::atomic<std::uint32_t> parked_{0};
  ErrorCode code_ = ErrorCode::Ok;  // written before state_ becomes kReady
  std::string message_;
  RecoveryAction action_ = RecoveryAction::None;
  std::mutex callbacksMutex_;
  std::vector<ReadyCallback> callbacks_;
};

}  // namespace mrt
