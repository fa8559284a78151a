// mrt_session_create_queue_manager and mrt_session_create_replica_queue_manager
// (include/mrt_c.h, "Queues"): the seeds' Session::createQueueManager in C,
// for the whole session or one replica of a replicated model. The session
// owns each QueueManager, as in C++; the caller's handle is linked to it
// (capi/session_queue_link.hpp) so that either may be destroyed first.
#include <memory>
#include <optional>
#include <vector>

#include "capi/guard.hpp"
#include "capi/queue.hpp"
#include "capi/session.hpp"
#include "capi/user_data.hpp"
#include "common/logging.hpp"

namespace mrt::capi {

void detachQueueManager(mrt_session &session, std::size_t replica, const char *reason) noexcept {
  if (replica >= session.queue_links.size() || !session.queue_links[replica]) return;
  const std::shared_ptr<SessionQueueLink> link = std::move(session.queue_links[replica]);
  std::unique_ptr<QueueManager> released;
  try {
    released = session.session->releaseQueueManager(static_cast<unsigned>(replica));
  } catch (const std::exception &error) {
    // Only an allocation can fail here. The session keeps the manager: wake
    // its users so that none is inside it when the session goes.
    link->manager()->disconnectAll();
    log::logger().warn("detaching the queue manager of a session failed: {}", error.what());
  }
  link->detach(std::move(released), reason);
}

void detachQueueManagers(mrt_session &session, const char *reason) noexcept {
  for (std::size_t replica = 0; replica < session.queue_links.size(); ++replica)
    detachQueueManager(session, replica, reason);
}

}  // namespace mrt::capi

namespace {

// `replica`: one replica's manager; none: the whole session's (a model that
// is not replicated).
void createQueueManager(mrt_session *session, std::optional<unsigned> replica,
                        const mrt_queue_manager_config *config, mrt_queue_manager **out) {
  if (session == nullptr && config != nullptr) {
    // The promise: the config's user_data_free runs once, also on failure.
    mrt::capi::ownUserData(config->timeout_user_data, config->timeout_user_data_free);
  }
  mrt::capi::requireNotNull(session, "session");
  mrt::capi::QueueManagerArgs args = mrt::capi::queueManagerArgs(*session->model, config);
  mrt::capi::requireNotNull(out, "out");
  mrt::Session &s = *session->session;
  const unsigned replicas = s.replicationFactor();
  if (replica && *replica >= replicas) {
    throw mrt::Error(mrt::ErrorCode::InvalidArgument, "replica {} is out of range (the model has {} replicas)",
                     *replica, replicas);
  }
  if (!replica && replicas != 1) {
    throw mrt::Error(mrt::ErrorCode::InvalidArgument,
                     "the model has {} replicas, each with its own queues: create them with "
                     "mrt_session_create_replica_queue_manager()",
                     replicas);
  }
  const unsigned slot = replica.value_or(0);
  std::vector<const mrt::popef::Anchor *> anchors = s.getUserInputAnchors();
  const std::vector<const mrt::popef::Anchor *> outputs = s.getUserOutputAnchors();
  anchors.insert(anchors.end(), outputs.begin(), outputs.end());
  session->queue_links.resize(replicas);
  // The previous manager's handle (if still alive) keeps its queues, now
  // disconnected, while the session replaces the manager.
  mrt::capi::detachQueueManager(*session, slot, "its session made a newer queue manager");
  mrt::QueueManager *manager =
      s.createQueueManagerForReplica(slot, anchors, args.ring_size_multiplier, args.timeout, args.timeout_callback);
  auto link = std::make_shared<mrt::capi::SessionQueueLink>(manager);
  // The handle's shared_ptr keeps the link (which owns the manager once
  // detached) alive; while attached the session owns the manager.
  auto handle =
      mrt::capi::wrapQueueManager(std::shared_ptr<mrt::QueueManager>(link, manager), std::move(args.keep_alive));
  handle->session_link = link;
  session->queue_links[slot] = std::move(link);
  *out = handle.release();
}

}  // namespace

extern "C" {

MRT_API mrt_status mrt_session_create_queue_manager(mrt_session *session, const mrt_queue_manager_config *config,
                                                    mrt_queue_manager **out) noexcept {
  return mrt::capi::guard(__func__, [&] { createQueueManager(session, std::nullopt, config, out); });
}

MRT_API mrt_status mrt_session_create_replica_queue_manager(mrt_session *session, uint32_t replica,
                                                            const mrt_queue_manager_config *config,
                                                            mrt_queue_manager **out) noexcept {
  return mrt::capi::guard(__func__, [&] { createQueueManager(session, replica, config, out); });
}

}  // extern "C"
