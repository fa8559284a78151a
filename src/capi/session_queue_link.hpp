// What a session handle and the handle of the queue manager it made
// (mrt_session_create_queue_manager) share, so that they may be destroyed in
// either order. The session owns the mrt::QueueManager (its engine calls the
// queues' stream callbacks) until it is destroyed or makes a newer manager;
// then the manager is detached: its ownership moves here, its queues are
// disconnected (waking blocked producers with Cancelled), and later calls
// through the manager's handle fail with FailedPrecondition saying why.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>

#include "queue/queue_manager.hpp"

namespace mrt::capi {

class SessionQueueLink {
 public:
  explicit SessionQueueLink(QueueManager *manager) noexcept : manager_(manager) {}

  QueueManager *manager() const noexcept { return manager_; }

  // Session side: takes the manager the session let go of (Session::
  // releaseQueueManager) and disconnects its queues. `reason` is static text.
  void detach(std::unique_ptr<QueueManager> released, const char *reason) noexcept;

  // Handle side, when the manager's handle is destroyed first: disconnects
  // the queues, so that the session's runs get zeros instead of waiting for
  // data nobody can enqueue any more.
  void handleDestroyed() noexcept;

  // FailedPrecondition "queue manager: <reason>" once detached.
  void requireAttached() const;

 private:
  std::mutex mutex_;  // orders detach() and handleDestroyed()
  QueueManager *const manager_;
  std::unique_ptr<QueueManager> released_;
  std::atomic<const char *> detached_reason_{nullptr};
};

}  // namespace mrt::capi
