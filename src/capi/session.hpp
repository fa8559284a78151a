// The C handle of a session (include/mrt_c.h, "Sessions"), shared by the
// session glue (session.cpp), the session's queue manager
// (session_queue_manager.cpp) and its simulated errors.
#pragma once

#include <cstddef>
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
  // Per replica (one for a model that is not replicated): the link to the
  // queue manager handle made last for it by
  // mrt_session_create_(replica_)queue_manager(), if any.
  std::vector<std::shared_ptr<mrt::capi::SessionQueueLink>> queue_links;
};

namespace mrt::capi {

// The session of a handle; InvalidArgument naming `session` for NULL.
inline mrt::Session &sessionOf(const mrt_session *handle) {
  requireNotNull(handle, "session");
  return *handle->session;
}

// Detaches the queue manager of replica `replica` of the session (if it made
// one) before the session replaces it: see SessionQueueLink::detach.
// `reason` is static text completing "queue manager: ...".
void detachQueueManager(mrt_session &session, std::size_t replica, const char *reason) noexcept;
// The same for every replica, before the session is destroyed.
void detachQueueManagers(mrt_session &session, const char *reason) noexcept;

}  // namespace mrt::capi
