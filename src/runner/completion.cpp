#include "runner/completion.hpp"

#include <utility>

#include "common/futex.hpp"


namespace mrt {

namespace {
// How long this thread's waits for requests paid to poll lately.
thread_local detail::AdaptiveSpin t_wait_spin;

void runSwallowingExceptions(const Completion::ReadyCallback &callback, ErrorCode code,
                             const std::string &message) noexcept {
  try {
    callback(code, message);
  } catch (...) {
  }
}
}  // namespace

bool Completion::complete(ErrorCode code, std::string message, RecoveryAction action) {
  std::uint32_t expected = kPending;
  // acq_rel: the winner's writes below happen after it owns the state.
  if (!state_.compare_exchange_strong(expected, kCompleting, std::memory_order_acq_rel)) {
    return false;
  }
  code_ = code;
  message_ = std::move(message);
  action_ = action;
  std::vector<ReadyCallback> callbacks;
  {
    // Under the mutex, so onReady() either queues before this point or sees
    // kReady and runs its callback inline: never both, never neither.
    std::lock_guard<std::mutex> lock(callbacksMutex_);
    // seq_cst store, then seq_cst load of parked_ below: with the waiter's
    // seq_cst increment of parked_ and load of state_, either we see the
    // waiter and wake it, or it sees kReady and does not park.
    state_.store(kReady, std::memory_order_seq_cst);
    callbacks.swap(callbacks_);
  }
  if (parked_.load(std::memory_order_seq_cst) != 0) {
    detail::futexWake(state_);
  }
  for (const auto &callback : callbacks) runSwallowingExceptions(callback, code_, message_);
  return true;
}

bool Completion::isReady() const noexcept {
  // acquire: pairs with complete()'s store, so code_ and message_ are visible.
  return state_.load(std::memory_order_acquire) == kReady;
}

bool Completion::wait(std::chrono::nanoseconds timeout) const {
  if (timeout.count() == 0 || isReady()) return isReady();
  const bool forever = timeout.count() < 0;
  // Only an unbounded wait may be put to work: serving runs whole Main
  // runs, which could outlast a bound.
  if (forever && completer_) {
    completer_->serveWaiter(*this);
    if (isReady()) return true;
  }
  const auto completer_running = [this] { return !completer_ || completer_->running(); };
  if (t_wait_spin.spin([this] { return isReady(); }, completer_running)) return true;
  const auto deadline = std::chrono::steady_clock::now() + (forever ? std::chrono::nanoseconds(0) : timeout);
  for (;;) {
    parked_.fetch_add(1, std::memory_order_seq_cst);
    std::uint32_t seen = state_.load(std::memory_order_seq_cst);
    if (seen == kReady) {
      parked_.fetch_sub(1, std::memory_order_relaxed);
      return true;
    }
    auto remaining = std::chrono::nanoseconds(-1);
    if (!forever) {
      remaining = deadline - std::chrono::steady_clock::now();
      if (remaining.count() <= 0) {
        parked_.fetch_sub(1, std::memory_order_relaxed);
        return isReady();
      }
    }
    // Sleeps only while the word still holds `seen`; a completion between our
    // load and this call makes it return at once.
    detail::futexWait(state_, seen, remaining);
    parked_.fetch_sub(1, std::memory_order_relaxed);
    if (isReady()) return true;
  }
}

void Completion::requireReady(const char *what) const {
  if (!isReady())
    throw Error(ErrorCode::FailedPrecondition, "the request is still running: its {} is not known yet",
                what);
}

ErrorCode Completion::code() const {
  requireReady("status");
  return code_;
}

RecoveryAction Completion::recoveryAction() const {
  requireReady("recoveryAction");
  return action_;
}

const std::string &Completion::message() const {
  requireReady("error message");
  return message_;
}

void Completion::onReady(ReadyCallback callback) {
  {
    std::lock_guard<std::mutex> lock(callbacksMutex_);
    if (state_.load(std::memory_order_acquire) != kReady) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  runSwallowingExceptions(callback, code_, message_);
}

}  // namespace mrt
