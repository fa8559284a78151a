// The C handle of an asynchronous request: a shared reference to its
// mrt::Completion plus whatever the request needs kept alive until it is
// done (its library-allocated outputs, for instance). Destroying the handle
// drops only these references: a pending request still completes safely.
#pragma once

#include <memory>

#include "mrt_c.h"
#include "runner/completion.hpp"

struct mrt_future {
  std::shared_ptr<mrt::Completion> completion;
  std::shared_ptr<const void> keepAlive;
};
