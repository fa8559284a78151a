// The C handles of the queue layer (include/mrt_c.h, "Queues"). A manager
// handle shares the mrt::QueueManager (a session may own it too) and holds
// one handle per queue, which callers borrow. The session glue makes a
// handle for the manager its session creates with wrapQueueManager() and
// links the two (capi/session_queue_link.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "capi/session_queue_link.hpp"
#include "mrt_c.h"
#include "queue/queue_manager.hpp"

// entries: the entry of each ring slot that mrt_*_queue_enqueue_lock hands
// out (index = slot), read back by mrt_*_queue_enqueue_complete.
// held_slot: the slot of the entry the producer has locked whose user_data
// the library owns but has not yet taken over at complete (-1: none). The
// queue may drop that lock underneath (a reset by the session, a lock on a
// disconnected queue): the entry's user_data_free then runs on the next
// producer call, reset or destroy (queue.cpp, releaseDroppedEntry).
struct mrt_input_queue {
  mrt::InputQueue *queue;
  const mrt_queue_manager *owner;
  std::vector<mrt_input_queue_entry> entries;
  std::int64_t held_slot = -1;
};

struct mrt_output_queue {
  mrt::OutputQueue *queue;
  const mrt_queue_manager *owner;
  std::vector<mrt_output_queue_entry> entries;
  std::int64_t held_slot = -1;
};

struct mrt_queue_manager {
  std::shared_ptr<mrt::QueueManager> manager;
  // Handles of the queues, keyed by anchor name (std::map nodes never move,
  // so the pointers callers hold stay valid).
  std::map<std::string, mrt_input_queue> inputs;
  std::map<std::string, mrt_output_queue> outputs;
  std::vector<const std::string *> input_names;   // index -> name, sorted
  std::vector<const std::string *> output_names;
  // Keeps the user_data of the config's timeout callback alive with the
  // manager (its free runs when the last holder goes).
  std::shared_ptr<void> keep_alive;
  // Set for a session's manager (mrt_session_create_queue_manager): calls
  // fail once the session has let go of the manager.
  std::shared_ptr<mrt::capi::SessionQueueLink> session_link;
};

namespace mrt::capi {

// A handle over `manager`, with one handle per queue. `keep_alive` is held
// as long as the handle (e.g. the UserData of a timeout callback).
std::unique_ptr<mrt_queue_manager> wrapQueueManager(std::shared_ptr<QueueManager> manager,
                                                    std::shared_ptr<void> keep_alive = nullptr);

// The mrt::QueueManager arguments a C config asks for: ring size
// multipliers for the model's Main and Load/Save anchors, the timeout and a
// timeout callback calling the C function. Validates the config
// (InvalidArgument naming the field); `user_data` is the owner of the
// config's timeout_user_data (see ownUserData) and is captured by the
// returned callback. NULL config: the defaults.
struct QueueManagerArgs {
  RingSizeMultiplierProdType ring_size_multiplier;
  std::chrono::nanoseconds timeout{0};
  QueueTimeoutCallback timeout_callback;
  std::shared_ptr<void> keep_alive;  // the timeout callback's user data
};
QueueManagerArgs queueManagerArgs(const popef::Model &model, const mrt_queue_manager_config *config);

}  // namespace mrt::capi
