// The queue part of the C API (include/mrt_c.h, "Queues"), over src/queue.
#include "capi/queue.hpp"

#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "capi/durations.hpp"
#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/ring_size_overrides.hpp"
#include "capi/sized_struct.hpp"
#include "capi/user_data.hpp"

namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::requireNotNull;

static_assert(static_cast<int>(mrt::popef::TensorType::INPUT) == MRT_TENSOR_INPUT);
static_assert(static_cast<int>(mrt::popef::TensorType::OUTPUT) == MRT_TENSOR_OUTPUT);

// The first published layouts: callers may pass these sizes or larger.

// A session's manager fails calls once its session has let go of it.
void requireAttached(const mrt_queue_manager &handle) {
  if (handle.session_link) handle.session_link->requireAttached();
}

mrt::QueueManager &managerOf(mrt_queue_manager *handle) {
  requireNotNull(handle, "manager");
  requireAttached(*handle);
  return *handle->manager;
}

mrt::InputQueue &queueOf(mrt_input_queue *handle) {
  requireNotNull(handle, "queue");
  requireAttached(*handle->owner);
  return *handle->queue;
}

mrt::OutputQueue &queueOf(mrt_output_queue *handle) {
  requireNotNull(handle, "queue");
  requireAttached(*handle->owner);
  return *handle->queue;
}

void requireSize(std::int64_t size_bytes) {
  if (size_bytes <= 0) {
    throw Error(ErrorCode::InvalidArgument, "size_bytes must be positive, got {}", size_bytes);
  }
}

// An entry's user data and its callbacks as the std::functions the queues
// carry. The user data is owned only if it has a user_data_free, which must
// run exactly once, when the last callback holding it goes (and also if the
// enqueue fails: so this is made before anything else can throw). Without
// one nothing needs owning, and a callback of fn and user_data fits
// std::function's inline storage: such an enqueue allocates nothing.
class EntryUserData {
 public:
  EntryUserData(void *data, mrt::capi::UserData::FreeFn free)
      : data_(data), owner_(free != nullptr ? mrt::capi::ownUserData(data, free) : nullptr) {}

  std::function<void()> callbackOf(mrt_queue_data_fn fn) const {
    if (fn == nullptr) return nullptr;
    if (!owner_) return [fn, data = data_] { fn(data); };
    return [fn, owner = owner_] { fn(owner->get()); };
  }

 private:
  void *data_;
  std::shared_ptr<mrt::capi::UserData> owner_;
};

template <class Queue>
auto entriesOf(const Queue &queue) {
  using Entry = std::conditional_t<std::is_same_v<Queue, mrt::InputQueue>, mrt_input_queue_entry, mrt_output_queue_entry>;
  return std::vector<Entry>(static_cast<std::size_t>(queue.numBuffers()));
}

template <class Handle>
const char *directionOf() {
  return std::is_same_v<Handle, mrt_input_queue> ? "input" : "output";
}

// Runs the user_data_free of the entry the producer holds locked (see
// held_slot in capi/queue.hpp) if the queue no longer has it locked: a
// reset or a lock on a disconnected queue dropped it, and nothing will
// publish it. `dropping` (the manager goes): also of an entry still locked.
// Only where no other thread may be writing the entry: producer calls,
// reset, destroy.
template <class Handle>
void releaseDroppedEntry(Handle &handle, bool dropping = false) noexcept {
  if (handle.held_slot < 0) return;
  if (!dropping && handle.queue->lockedSlot() == handle.held_slot) return;
  auto &entry = handle.entries[static_cast<std::size_t>(handle.held_slot)];
  handle.held_slot = -1;
  const auto user_data_free = std::exchange(entry.user_data_free, nullptr);
  if (user_data_free != nullptr) user_data_free(entry.user_data);
}

// enqueue and flush would publish the entry the producer has locked and is
// still filling: refused, naming the queue. An entry the queue dropped is
// released first (a producer call).
template <class Handle>
void requireNothingLocked(Handle &handle) {
  releaseDroppedEntry(handle);
  if (handle.queue->lockedSlot() >= 0) {
    throw Error(ErrorCode::FailedPrecondition,
                "{0} queue '{1}': an entry is locked (mrt_{0}_queue_enqueue_lock): complete it with "
                "mrt_{0}_queue_enqueue_complete first",
                directionOf<Handle>(), handle.queue->name());
  }
}

// *out_entry: the next slot's entry, zeroed but for its slot, or the
// locked one again (NULL if locking fails). Locking a disconnected queue
// drops a locked entry: its user data is released.
template <class Handle, class Entry>
void lockEntry(Handle *handle, Entry **out_entry) {
  requireNotNull(out_entry, "out_entry");
  *out_entry = nullptr;
  auto &queue = queueOf(handle);
  releaseDroppedEntry(*handle);  // before a fresh lock may reuse its slot
  const bool relock = queue.lockedSlot() >= 0;
  try {
    queue.enqueueLock();
  } catch (...) {
    releaseDroppedEntry(*handle);
    throw;
  }
  const std::int64_t slot = queue.lockedSlot();
  Entry &entry = handle->entries[static_cast<std::size_t>(slot)];
  if (!relock) {
    entry = {};
    entry.slot = slot;
    handle->held_slot = slot;
  }
  *out_entry = &entry;
}

// enqueue with an entry's fields: on the locked slot, which it fills in
// place and publishes.
void enqueueEntry(mrt::InputQueue &queue, const mrt_input_queue_entry &entry, const EntryUserData &user_data) {
  queue.enqueue(entry.data, entry.size_bytes, user_data.callbackOf(entry.read_start_fn),
                user_data.callbackOf(entry.read_complete_fn));
}
void enqueueEntry(mrt::OutputQueue &queue, const mrt_output_queue_entry &entry, const EntryUserData &user_data) {
  queue.enqueue(entry.data, entry.size_bytes, user_data.callbackOf(entry.write_complete_fn));
}

// Publishes the locked entry, checked before its user data is taken so that
// a bad entry stays locked to be fixed.
template <class Handle>
void completeEntry(Handle *handle) {
  const std::int64_t slot = queueOf(handle).lockedSlot();
  releaseDroppedEntry(*handle);
  if (slot < 0) {
    throw Error(ErrorCode::FailedPrecondition,
                "{0} queue '{1}': no entry is locked (call mrt_{0}_queue_enqueue_lock first; a reset or "
                "disconnect drops a locked entry)",
                directionOf<Handle>(), handle->queue->name());
  }
  const auto &entry = handle->entries[static_cast<std::size_t>(slot)];
  handle->queue->checkEntry(entry.data, entry.size_bytes);
  handle->held_slot = -1;  // taken over: from here on as enqueue's own
  enqueueEntry(*handle->queue, entry, EntryUserData(entry.user_data, entry.user_data_free));
}

// After a reset (which drops a locked entry) of every queue of `manager`.
void releaseDroppedEntries(mrt_queue_manager &manager, bool dropping) noexcept {
  for (auto &input : manager.inputs) releaseDroppedEntry(input.second, dropping);
  for (auto &output : manager.outputs) releaseDroppedEntry(output.second, dropping);
}

void fillInfo(const mrt::IQueue &queue, bool connected, std::int64_t sample_size,
              mrt_queue_info *out) {
  const mrt::popef::TensorInfo &info = queue.tensorInfo();
  mrt_queue_info full{};
  full.name = queue.name().c_str();
  full.data_type = static_cast<int32_t>(info.dataType());
  full.shape = info.shape().data();
  full.rank = info.shape().size();
  full.size_in_bytes = info.sizeInBytes();
  full.sample_size_bytes = sample_size;
  full.num_buffers = queue.numBuffers();
  full.connected = connected;
  mrt::capi::fillSized(out, full, MRT_QUEUE_INFO_V1_SIZE, "out_info");
}

}  // namespace

namespace mrt::capi {

std::unique_ptr<mrt_queue_manager> wrapQueueManager(std::shared_ptr<QueueManager> manager,
                                                    std::shared_ptr<void> keep_alive) {
  auto handle = std::make_unique<mrt_queue_manager>();
  for (auto &[name, queue] : manager->inputs) {
    auto &entry = *handle->inputs.try_emplace(name, mrt_input_queue{&queue, handle.get(), entriesOf(queue)}).first;
    handle->input_names.push_back(&entry.first);
  }
  for (auto &[name, queue] : manager->outputs) {
    auto &entry = *handle->outputs.try_emplace(name, mrt_output_queue{&queue, handle.get(), entriesOf(queue)}).first;
    handle->output_names.push_back(&entry.first);
  }
  handle->manager = std::move(manager);
  handle->keep_alive = std::move(keep_alive);
  return handle;
}

QueueManagerArgs queueManagerArgs(const popef::Model &model, const mrt_queue_manager_config *config) {
  mrt_queue_manager_config defaults;
  mrt_queue_manager_config_init(&defaults);
  // Own the user data first, so its free runs exactly once whatever fails.
  QueueManagerArgs args;
  std::shared_ptr<UserData> owner;
  if (config != nullptr) {
    owner = ownUserData(config->timeout_user_data, config->timeout_user_data_free);
    args.keep_alive = owner;
  }
  const mrt_queue_manager_config c =
      config != nullptr ? readSized(config, defaults, MRT_QUEUE_MANAGER_CONFIG_V1_SIZE, "config") : defaults;
  if (c.ring_size_multiplier < 1) {
    throw Error(ErrorCode::InvalidArgument, "config->ring_size_multiplier must be at least 1, got {}",
                c.ring_size_multiplier);
  }
  if (c.load_save_ring_size_multiplier < 1) {
    throw Error(ErrorCode::InvalidArgument,
                "config->load_save_ring_size_multiplier must be at least 1, got {}",
                c.load_save_ring_size_multiplier);
  }
  args.ring_size_multiplier = withRingSizeOverrides(
      ring_size_multiplier_factory::ringSizeMultForMainProgs(model, c.ring_size_multiplier,
                                                             c.load_save_ring_size_multiplier),
      model, c.ring_size_overrides, c.num_ring_size_overrides);
  args.timeout = callbackPeriodOf(c.timeout_ns, "config->timeout_ns");
  if (c.timeout_fn != nullptr) {
    args.timeout_callback = [fn = c.timeout_fn, owner](const std::string &name,
                                                       popef::TensorType direction,
                                                       std::int64_t bytes_done) {
      fn(name.c_str(), static_cast<int32_t>(direction), bytes_done, owner ? owner->get() : nullptr);
    };
  }
  return args;
}

}  // namespace mrt::capi

extern "C" {

MRT_API mrt_status mrt_queue_manager_config_init_sized(mrt_queue_manager_config *config, size_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt_queue_manager_config c{};
    c.ring_size_multiplier = mrt::kDefaultQueueManagerRingSizeMultiplier;
    c.load_save_ring_size_multiplier = 1;
    c.timeout_ns = MRT_FOREVER;
    mrt::capi::initSized(config, c, size, MRT_QUEUE_MANAGER_CONFIG_V1_SIZE,
              MRT_STRUCT_SIZE(mrt_queue_manager_config, num_ring_size_overrides), "config");
  });
}

// The symbol of callers built before mrt_queue_manager_config_init_sized: V1 fields.
MRT_API void(mrt_queue_manager_config_init)(mrt_queue_manager_config *config) noexcept {
  if (config != nullptr) mrt_queue_manager_config_init_sized(config, MRT_QUEUE_MANAGER_CONFIG_V1_SIZE);
}

MRT_API mrt_status mrt_queue_manager_create(const mrt_model *model,
                                            const mrt_queue_manager_config *config,
                                            mrt_queue_manager **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    if (model == nullptr && config != nullptr) {
      // The promise: the config's user_data_free runs once, also on failure.
      mrt::capi::ownUserData(config->timeout_user_data, config->timeout_user_data_free);
    }
    const std::shared_ptr<mrt::popef::Model> &popef_model = mrt::capi::modelOf(model, "model");
    mrt::capi::QueueManagerArgs args = mrt::capi::queueManagerArgs(*popef_model, config);
    requireNotNull(out, "out");
    auto manager = std::make_shared<mrt::QueueManager>(*popef_model, args.ring_size_multiplier,
                                                       args.timeout, args.timeout_callback);
    *out = mrt::capi::wrapQueueManager(std::move(manager), std::move(args.keep_alive)).release();
  });
}

MRT_API void mrt_queue_manager_destroy(mrt_queue_manager *manager) noexcept {
  if (manager == nullptr) return;
  if (manager->session_link) manager->session_link->handleDestroyed();
  releaseDroppedEntries(*manager, /*dropping=*/true);
  delete manager;
}

MRT_API mrt_status mrt_queue_manager_input_queue(mrt_queue_manager *manager, const char *name,
                                                 mrt_input_queue **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(name, "name");
    requireNotNull(out, "out");
    const std::string &key = managerOf(manager).inputQueue(name).name();
    *out = &manager->inputs.at(key);
  });
}

MRT_API mrt_status mrt_queue_manager_output_queue(mrt_queue_manager *manager, const char *name,
                                                  mrt_output_queue **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(name, "name");
    requireNotNull(out, "out");
    const std::string &key = managerOf(manager).outputQueue(name).name();
    *out = &manager->outputs.at(key);
  });
}

MRT_API mrt_status mrt_queue_manager_num_inputs(const mrt_queue_manager *manager,
                                                size_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(manager, "manager");
    requireNotNull(out_count, "out_count");
    *out_count = manager->input_names.size();
  });
}

MRT_API mrt_status mrt_queue_manager_num_outputs(const mrt_queue_manager *manager,
                                                 size_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(manager, "manager");
    requireNotNull(out_count, "out_count");
    *out_count = manager->output_names.size();
  });
}

namespace {
const char *nameAt(const std::vector<const std::string *> &names, size_t index, const char *what) {
  if (index >= names.size()) {
    throw Error(ErrorCode::InvalidArgument, "{} index {} is out of range (the manager has {})", what,
                index, names.size());
  }
  return names[index]->c_str();
}
}  // namespace

MRT_API mrt_status mrt_queue_manager_input_name(const mrt_queue_manager *manager, size_t index,
                                                const char **out_name) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(manager, "manager");
    requireNotNull(out_name, "out_name");
    *out_name = nameAt(manager->input_names, index, "input queue");
  });
}

MRT_API mrt_status mrt_queue_manager_output_name(const mrt_queue_manager *manager, size_t index,
                                                 const char **out_name) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(manager, "manager");
    requireNotNull(out_name, "out_name");
    *out_name = nameAt(manager->output_names, index, "output queue");
  });
}

MRT_API mrt_status mrt_queue_manager_flush_all(mrt_queue_manager *manager) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::QueueManager &queues = managerOf(manager);
    for (auto &input : manager->inputs) requireNothingLocked(input.second);
    for (auto &output : manager->outputs) requireNothingLocked(output.second);
    queues.flushAll();
  });
}

MRT_API mrt_status mrt_queue_manager_disconnect_all(mrt_queue_manager *manager) noexcept {
  return mrt::capi::guard(__func__, [&] { managerOf(manager).disconnectAll(); });
}

MRT_API mrt_status mrt_queue_manager_reset_all(mrt_queue_manager *manager) noexcept {
  return mrt::capi::guard(__func__, [&] {
    managerOf(manager).resetAll();
    releaseDroppedEntries(*manager, /*dropping=*/false);
  });
}

MRT_API mrt_status mrt_queue_manager_transfer(mrt_queue_manager *manager, const char *handle,
                                              void *device_buffer) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(handle, "handle");
    mrt::QueueManager &queues = managerOf(manager);
    if (manager->session_link) {
      throw Error(ErrorCode::FailedPrecondition,
                  "the manager belongs to a session, whose device transfers the data (transfer is for managers "
                  "from mrt_queue_manager_create)");
    }
    const mrt::StreamCallbackFn &callback = queues.streamCallback(handle);
    requireNotNull(device_buffer, "device_buffer");
    callback(device_buffer);
  });
}

MRT_API mrt_status mrt_input_queue_enqueue(mrt_input_queue *queue, const void *data,
                                           int64_t size_bytes, mrt_queue_data_fn read_start_fn,
                                           mrt_queue_data_fn read_complete_fn, void *user_data,
                                           void (*user_data_free)(void *)) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const EntryUserData owner(user_data, user_data_free);
    mrt::InputQueue &input = queueOf(queue);
    requireNothingLocked(*queue);
    requireNotNull(data, "data");
    requireSize(size_bytes);
    input.enqueue(data, size_bytes, owner.callbackOf(read_start_fn), owner.callbackOf(read_complete_fn));
  });
}

MRT_API mrt_status mrt_input_queue_flush(mrt_input_queue *queue) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::InputQueue &input = queueOf(queue);
    requireNothingLocked(*queue);
    input.flush();
  });
}

MRT_API mrt_status mrt_input_queue_reset(mrt_input_queue *queue) noexcept {
  return mrt::capi::guard(__func__, [&] {
    queueOf(queue).reset();
    releaseDroppedEntry(*queue);
  });
}

MRT_API mrt_status mrt_input_queue_disconnect(mrt_input_queue *queue) noexcept {
  return mrt::capi::guard(__func__, [&] { queueOf(queue).disconnect(); });
}

MRT_API mrt_status mrt_output_queue_enqueue(mrt_output_queue *queue, void *data,
                                            int64_t size_bytes,
                                            mrt_queue_data_fn write_complete_fn, void *user_data,
                                            void (*user_data_free)(void *)) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const EntryUserData owner(user_data, user_data_free);
    mrt::OutputQueue &output = queueOf(queue);
    requireNothingLocked(*queue);
    requireNotNull(data, "data");
    requireSize(size_bytes);
    output.enqueue(data, size_bytes, owner.callbackOf(write_complete_fn));
  });
}

MRT_API mrt_status mrt_input_queue_enqueue_lock(mrt_input_queue *queue,
                                                mrt_input_queue_entry **out_entry) noexcept {
  return mrt::capi::guard(__func__, [&] { lockEntry(queue, out_entry); });
}

MRT_API mrt_status mrt_input_queue_enqueue_complete(mrt_input_queue *queue) noexcept {
  return mrt::capi::guard(__func__, [&] { completeEntry(queue); });
}

MRT_API mrt_status mrt_output_queue_enqueue_lock(mrt_output_queue *queue,
                                                 mrt_output_queue_entry **out_entry) noexcept {
  return mrt::capi::guard(__func__, [&] { lockEntry(queue, out_entry); });
}

MRT_API mrt_status mrt_output_queue_enqueue_complete(mrt_output_queue *queue) noexcept {
  return mrt::capi::guard(__func__, [&] { completeEntry(queue); });
}

MRT_API mrt_status mrt_output_queue_flush(mrt_output_queue *queue) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::OutputQueue &output = queueOf(queue);
    requireNothingLocked(*queue);
    output.flush();
  });
}

MRT_API mrt_status mrt_output_queue_reset(mrt_output_queue *queue) noexcept {
  return mrt::capi::guard(__func__, [&] {
    queueOf(queue).reset();
    releaseDroppedEntry(*queue);
  });
}

MRT_API mrt_status mrt_output_queue_disconnect(mrt_output_queue *queue) noexcept {
  return mrt::capi::guard(__func__, [&] { queueOf(queue).disconnect(); });
}

MRT_API mrt_status mrt_queue_info_init_sized(mrt_queue_info *info, size_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::initSized(info, mrt_queue_info{}, size, MRT_QUEUE_INFO_V1_SIZE, MRT_STRUCT_SIZE(mrt_queue_info, connected),
              "info");
  });
}

// The symbol of callers built before mrt_queue_info_init_sized: V1 fields.
MRT_API void(mrt_queue_info_init)(mrt_queue_info *info) noexcept {
  if (info != nullptr) mrt_queue_info_init_sized(info, MRT_QUEUE_INFO_V1_SIZE);
}

MRT_API mrt_status mrt_input_queue_info(const mrt_input_queue *queue,
                                        mrt_queue_info *out_info) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(queue, "queue");
    const mrt::InputQueue &input = *queue->queue;
    fillInfo(input, input.isConnected(), input.sampleSize(), out_info);
  });
}

MRT_API mrt_status mrt_output_queue_info(const mrt_output_queue *queue,
                                         mrt_queue_info *out_info) noexcept {
  return mrt::capi::guard(__func__, [&] {
    requireNotNull(queue, "queue");
    const mrt::OutputQueue &output = *queue->queue;
    fillInfo(output, output.isConnected(), output.sampleSize(), out_info);
  });
}

}  // extern "C"
