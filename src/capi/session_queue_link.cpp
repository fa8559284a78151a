#include "capi/session_queue_link.hpp"

#include "common/error.hpp"

namespace mrt::capi {

void SessionQueueLink::detach(std::unique_ptr<QueueManager> released, const char *reason) noexcept {
  std::lock_guard lock(mutex_);
  detached_reason_.store(reason);
  if (!released) return;  // nothing to keep alive (cannot happen: the session had our manager)
  released_ = std::move(released);
  released_->disconnectAll();
}

void SessionQueueLink::handleDestroyed() noexcept {
  std::lock_guard lock(mutex_);
  if (detached_reason_.load() == nullptr) manager_->disconnectAll();
}

void SessionQueueLink::requireAttached() const {
  if (const char *reason = detached_reason_.load()) {
    throw Error(ErrorCode::FailedPrecondition, "queue manager: {}", reason);
  }
}

}  // namespace mrt::capi
