// mrt_session_create_queue_manager (include/mrt_c.h, "Queues"): the seeds'
// Session::createQueueManager in C. The session owns the QueueManager, as in
// C++; the caller's handle is linked to it (capi/session_queue_link.hpp) so
// that either may be destroyed first.
#include <memory>
#include <vector>

#include "capi/guard.hpp"
#include "capi/queue.hpp"
#include "capi/session.hpp"
#include "capi/user_data.hpp"
#include "common/logging.hpp"

namespace mrt::capi {

void detachQueueManager(mrt_session &session, const char *reason) noexcept {
  if (!session.queue_link) return;
  const std::shared_ptr<SessionQueueLink> link = std::move(session.queue_link);
  std::unique_ptr<QueueManager> released;
  try {
    released = session.session->releaseQueueManager();
  } catch (const std::exception &error) {
    // Only an allocation can fail here. The session keeps the manager: wake
    // its users so that none is inside it when the session goes.
    link->manager()->disconnectAll();
    log::logger().warn("detaching the queue manager of a session failed: {}", error.what());
  }
  link->detach(std::move(released), reason);
}

}  // namespace mrt::capi

extern "C" {

MRT_API mrt_status mrt_session_create_queue_manager(mrt_session *session, const mrt_queue_manager_config *config,
                                                    mrt_queue_manager **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    if (session == nullptr && config != nullptr) {
      // The promise: the config's user_data_free runs once, also on failure.
      mrt::capi::ownUserData(config->timeout_user_data, config->timeout_user_data_free);
    }
    mrt::capi::requireNotNull(session, "session");
    mrt::capi::QueueManagerArgs args = mrt::capi::queueManagerArgs(*session->model, config);
    mrt::capi::requireNotNull(out, "out");
    mrt::Session &s = *session->session;
    std::vector<const mrt::popef::Anchor *> anchors = s.getUserInputAnchors();
    const std::vector<const mrt::popef::Anchor *> outputs = s.getUserOutputAnchors();
    anchors.insert(anchors.end(), outputs.begin(), outputs.end());
    // The previous manager's handle (if still alive) keeps its queues, now
    // disconnected, while the session replaces the manager.
    mrt::capi::detachQueueManager(*session, "its session made a newer queue manager");
    mrt::QueueManager *manager =
        s.createQueueManager(anchors, args.ring_size_multiplier, args.timeout, args.timeout_callback);
    auto link = std::make_shared<mrt::capi::SessionQueueLink>(manager);
    // The handle's shared_ptr keeps the link (which owns the manager once
    // detached) alive; while attached the session owns the manager.
    auto handle = mrt::capi::wrapQueueManager(std::shared_ptr<mrt::QueueManager>(link, manager),
                                              std::move(args.keep_alive));
    handle->session_link = link;
    session->queue_link = std::move(link);
    *out = handle.release();
  });
}

}  // extern "C"
