// flush_select_callback (mrt_c.h): the C form of the seeds' flush_callback
// choosing which queues a timeout flush pads.
#pragma once

#include <memory>

#include "capi/user_data.hpp"
#include "mrt_c.h"
#include "runner/model_runner_config.hpp"

namespace mrt::capi {

// The runner's FlushCallback calling `select` with an mrt_flush_selection
// and handing the runner what it added.
FlushCallback flushSelectionAdapter(mrt_flush_select_fn select, std::shared_ptr<UserData> userData);

}  // namespace mrt::capi
