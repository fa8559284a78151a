// mrt_session_create_queue_manager(_for_replica) (include/mrt_c.h,
// "Queues"): the seeds' Session::createQueueManager in C, one manager per
// replica of a replicated model. The session owns each QueueManager, as in
// C++; the caller's handle is linked to it (capi/session_queue_link.hpp) so
// that either may be destroyed first.
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "capi/guard.hpp"
#include "capi/queue.hpp"
#include "capi/session.hpp"
#include "capi/user_data.hpp"
#include "common/logging.hpp"

namespace mrt::capi {

unsigned requireReplica(const mrt_session &session, std::uint32_t replica) {
  const unsigned replicas = session.session->replicationFactor();
  if (replica >= replicas) {
    throw Error(ErrorCode::InvalidArgument, "replica {} out of range: the session's model '{}' has {} replica{}",
                replica, session.model->metadata.executable(), replicas, replicas == 1 ? "" : "s");
  }
  return replica;
}

void detachQueueManager(mrt_session &session, unsigned replica, const char *reason) noexcept {
  if (!session.queue_links[replica]) return;
  const std::shared_ptr<SessionQueueLink> link = std::move(session.queue_links[replica]);
  std::unique_ptr<QueueManager> released;
  try {
    released = session.session->releaseQueueManager(replica);
  } catch (const std::exception &error) {
    // Only an allocation can fail here. The session keeps the manager: wake
    // its users so that none is inside it when the session goes.
    link->manager()->disconnectAll();
    log::logger().warn("detaching the queue manager of a session failed: {}", error.what());
  }
  link->detach(std::move(released), reason);
}

void detachQueueManagers(mrt_session &session, const char *reason) noexcept {
  for (unsigned r = 0; r < session.queue_links.size(); ++r) detachQueueManager(session, r, reason);
}

}  // namespace mrt::capi

namespace {

// The manager of `replica`, or without one (mrt_session_create_queue_manager)
// of the only replica of a model that is not replicated.
void createQueueManager(mrt_session *session, std::optional<std::uint32_t> replica,
                        const mrt_queue_manager_config *config, mrt_queue_manager **out) {
  if (session == nullptr && config != nullptr) {
    // The promise: the config's user_data_free runs once, also on failure.
    mrt::capi::ownUserData(config->timeout_user_data, config->timeout_user_data_free);
  }
  mrt::capi::requireNotNull(session, "session");
  mrt::capi::QueueManagerArgs args = mrt::capi::queueManagerArgs(*session->model, config);
  mrt::capi::requireNotNull(out, "out");
  mrt::Session &s = *session->session;
  if (!replica && s.replicationFactor() != 1) {
    throw mrt::Error(mrt::ErrorCode::InvalidArgument,
                     "the session's model '{}' has {} replicas, each with its own queues: create them with "
                     "mrt_session_create_queue_manager_for_replica()",
                     session->model->metadata.executable(), s.replicationFactor());
  }
  const unsigned slot = replica ? mrt::capi::requireReplica(*session, *replica) : 0;
  std::vector<const mrt::popef::Anchor *> anchors = s.getUserInputAnchors();
  const std::vector<const mrt::popef::Anchor *> outputs = s.getUserOutputAnchors();
  anchors.insert(anchors.end(), outputs.begin(), outputs.end());
  // The previous manager's handle (if still alive) keeps its queues, now
  // disconnected, while the session replaces the manager.
  mrt::capi::detachQueueManager(*session, slot, "its session made a newer queue manager");
  mrt::QueueManager *manager =
      s.createQueueManagerForReplica(slot, anchors, args.ring_size_multiplier, args.timeout, args.timeout_callback);
  auto link = std::make_shared<mrt::capi::SessionQueueLink>(manager);
  // The handle's shared_ptr keeps the link (which owns the manager once
  // detached) alive; while attached the session owns the manager.
  auto handle = mrt::capi::wrapQueueManager(std::shared_ptr<mrt::QueueManager>(link, manager),
                                            std::move(args.keep_alive));
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

MRT_API mrt_status mrt_session_create_queue_manager_for_replica(mrt_session *session, uint32_t replica,
                                                                const mrt_queue_manager_config *config,
                                                                mrt_queue_manager **out) noexcept {
  return mrt::capi::guard(__func__, [&] { createQueueManager(session, replica, config, out); });
}

}  // extern "C"
