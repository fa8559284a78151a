// The C handle of a session (include/mrt_c.h, "Sessions"), shared by the
// session glue (session.cpp), the session's queue manager
// (session_queue_manager.cpp) and its simulated errors.
#pragma once

#include <memory>

#include "capi/guard.hpp"
#include "capi/session_queue_link.hpp"
#include "mrt_c.h"
#include "popef/model.hpp"
#include "session/session.hpp"

struct mrt_session {
  std::shared_ptr<mrt::popef::Model> model;
  std::unique_ptr<mrt::Session> session;
  // The link to the queue manager handle made last by
  // mrt_session_create_queue_manager(), if any.
  std::shared_ptr<mrt::capi::SessionQueueLink> queue_link;
};

namespace mrt::capi {

// The session of a handle; InvalidArgument naming `session` for NULL.
inline mrt::Session &sessionOf(const mrt_session *handle) {
  requireNotNull(handle, "session");
  return *handle->session;
}

// Detaches the session's queue manager (if it made one) before the session
// destroys or replaces it: see SessionQueueLink::detach. `reason` is static
// text completing "queue manager: ...".
void detachQueueManager(mrt_session &session, const char *reason) noexcept;

}  // namespace mrt::capi
