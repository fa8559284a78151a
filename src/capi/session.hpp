// The C handle of a session (include/mrt_c.h, "Sessions"), shared by the
// session glue (session.cpp), the session's queue manager
// (session_queue_manager.cpp) and its simulated errors.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "capi/guard.hpp"
#include "capi/session_queue_link.hpp"
#include "mrt_c.h"
#include "popef/model.hpp"
#include "session/session.hpp"

struct mrt_session {
  std::shared_ptr<mrt::popef::Model> model;
  std::unique_ptr<mrt::Session> session;
  // [replica] -> the link to the queue manager handle made last for that
  // replica by mrt_session_create_queue_manager(_for_replica)(), if any: one
  // entry per replica of the model.
  std::vector<std::shared_ptr<mrt::capi::SessionQueueLink>> queue_links;
};

namespace mrt::capi {

// The session of a handle; InvalidArgument naming `session` for NULL.
inline mrt::Session &sessionOf(const mrt_session *handle) {
  requireNotNull(handle, "session");
  return *handle->session;
}

// Replica `replica` of the session's model (the model's replication factor
// R gives replicas 0 .. R - 1); InvalidArgument naming it otherwise.
unsigned requireReplica(const mrt_session &session, std::uint32_t replica);

// Detaches replica `replica`'s queue manager (if the session made one)
// before the session destroys or replaces it: see SessionQueueLink::detach.
// `reason` is static text completing "queue manager: ...".
void detachQueueManager(mrt_session &session, unsigned replica, const char *reason) noexcept;
// The same for every replica's.
void detachQueueManagers(mrt_session &session, const char *reason) noexcept;

}  // namespace mrt::capi
