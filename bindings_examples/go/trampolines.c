/* See trampolines.h. */
#include "trampolines.h"

#include "_cgo_export.h"

#define HANDLE(user_data) ((uintptr_t)(user_data))
#define USER_DATA(handle) ((void *)(handle))

static void delete_handle(void *user_data) { goDeleteHandle(HANDLE(user_data)); }

static void log_trampoline(mrt_log_level level, const char *message, void *user_data) {
  goLogMessage((int32_t)level, (char *)message, HANDLE(user_data));
}
mrt_status gomrt_set_log_callback(uintptr_t handle) {
  if (handle == 0) return mrt_set_log_callback(NULL, NULL, NULL);
  return mrt_set_log_callback(log_trampoline, USER_DATA(handle), delete_handle);
}

static void future_ready_trampoline(mrt_status status, void *user_data) {
  goFutureReady(status, HANDLE(user_data));
}
mrt_status gomrt_future_on_ready(mrt_future *future, uintptr_t handle) {
  return mrt_future_on_ready(future, future_ready_trampoline, USER_DATA(handle), delete_handle);
}

static void anchor_trampoline(void *buffer, uint64_t size, void *user_data) {
  goAnchorCallback(buffer, size, HANDLE(user_data));
}
mrt_status gomrt_session_set_callback_for_anchor(mrt_session *session, const char *anchor_handle,
                                                 uintptr_t handle) {
  return mrt_session_set_callback_for_anchor(session, anchor_handle, anchor_trampoline, USER_DATA(handle),
                                             delete_handle);
}
mrt_status gomrt_session_set_replica_callback_for_anchor(mrt_session *session, const char *anchor_handle,
                                                         uint32_t replica, uintptr_t handle) {
  return mrt_session_set_replica_callback_for_anchor(session, anchor_handle, replica, anchor_trampoline,
                                                     USER_DATA(handle), delete_handle);
}

static bool factory_trampoline(const mrt_anchor_info *anchor, mrt_anchor_callback *out, void *user_data) {
  uintptr_t callback = goCallbackFactory((mrt_anchor_info *)anchor, HANDLE(user_data));
  if (callback == 0) return false;
  out->fn = anchor_trampoline;
  out->user_data = USER_DATA(callback);
  out->user_data_free = delete_handle;
  return true;
}
mrt_status gomrt_session_set_user_handler(mrt_session *session, int outputs, uintptr_t factory,
                                          const mrt_anchor_predicate *predicate, bool skip_connected) {
  return (outputs ? mrt_session_set_user_output_handler
                  : mrt_session_set_user_input_handler)(session, factory_trampoline, USER_DATA(factory),
                                                        delete_handle, predicate, skip_connected);
}

static int32_t predicate_trampoline(const mrt_anchor_info *anchor, void *user_data) {
  return goPredicate((mrt_anchor_info *)anchor, HANDLE(user_data));
}
mrt_status gomrt_anchor_predicate_create_user(int32_t kind, uintptr_t handle, mrt_anchor_predicate **out) {
  return mrt_anchor_predicate_create_user(kind, predicate_trampoline, USER_DATA(handle), delete_handle, out);
}

static void unbound_trampoline(uint64_t program, const mrt_anchor_info *anchor, void *user_data) {
  goUnboundAnchor(program, (mrt_anchor_info *)anchor, HANDLE(user_data));
}
mrt_status gomrt_session_anchors_not_connected(const mrt_session *session, const uint64_t *programs,
                                               size_t num_programs, uintptr_t handle, size_t *out_count) {
  return mrt_session_anchors_not_connected(session, programs, num_programs, unbound_trampoline,
                                           USER_DATA(handle), out_count);
}

static void queue_timeout_trampoline(const char *anchor, int32_t direction, int64_t bytes_done,
                                     void *user_data) {
  goQueueTimeout((char *)anchor, direction, bytes_done, HANDLE(user_data));
}
void gomrt_queue_manager_config_set_timeout(mrt_queue_manager_config *config, uintptr_t handle) {
  if (handle == 0) return;
  config->timeout_fn = queue_timeout_trampoline;
  config->timeout_user_data = USER_DATA(handle);
  config->timeout_user_data_free = delete_handle;
}

static void queue_done_trampoline(void *user_data) { goQueueEntryDone(HANDLE(user_data)); }
static void queue_free_trampoline(void *user_data) { goQueueEntryFree(HANDLE(user_data)); }
mrt_status gomrt_input_queue_enqueue(mrt_input_queue *queue, const void *data, int64_t size, uintptr_t entry) {
  return mrt_input_queue_enqueue(queue, data, size, NULL, queue_done_trampoline, USER_DATA(entry),
                                 queue_free_trampoline);
}
mrt_status gomrt_output_queue_enqueue(mrt_output_queue *queue, void *data, int64_t size, uintptr_t entry) {
  return mrt_output_queue_enqueue(queue, data, size, queue_done_trampoline, USER_DATA(entry),
                                  queue_free_trampoline);
}
/* Whether a complete's status left the user data with the caller. */
#define NOT_TAKEN(status) ((status) != MRT_OK && (status) != MRT_CANCELLED)

mrt_status gomrt_queue_entry_lock(void *queue, bool output, void **out_entry, int64_t *out_slot) {
  if (output) {
    mrt_output_queue_entry *entry = NULL;
    const mrt_status status = mrt_output_queue_enqueue_lock(queue, &entry);
    *out_entry = entry;
    *out_slot = entry != NULL ? entry->slot : -1;
    return status;
  }
  mrt_input_queue_entry *entry = NULL;
  const mrt_status status = mrt_input_queue_enqueue_lock(queue, &entry);
  *out_entry = entry;
  *out_slot = entry != NULL ? entry->slot : -1;
  return status;
}

/* Sets the fields both kinds of locked entry share; handle 0 clears them. */
#define SET_ENTRY(entry, data_, size_, handle_)                                                   \
  ((entry)->data = (data_), (entry)->size_bytes = (size_), (entry)->user_data = USER_DATA(handle_), \
   (entry)->user_data_free = (handle_) != 0 ? queue_free_trampoline : NULL)

mrt_status gomrt_queue_entry_complete(void *queue, bool output, void *locked, void *data, int64_t size,
                                      uintptr_t handle) {
  mrt_status status;
  if (output) {
    mrt_output_queue_entry *entry = locked;
    SET_ENTRY(entry, data, size, handle);
    entry->write_complete_fn = queue_done_trampoline;
    status = mrt_output_queue_enqueue_complete(queue);
    if (NOT_TAKEN(status)) SET_ENTRY(entry, NULL, 0, 0);
  } else {
    mrt_input_queue_entry *entry = locked;
    SET_ENTRY(entry, data, size, handle);
    entry->read_start_fn = NULL;
    entry->read_complete_fn = queue_done_trampoline;
    status = mrt_input_queue_enqueue_complete(queue);
    if (NOT_TAKEN(status)) SET_ENTRY(entry, NULL, 0, 0);
  }
  return status;
}

static void flush_trampoline(const char *tensor, void *user_data) {
  goRunnerFlush((char *)tensor, HANDLE(user_data));
}
void gomrt_runner_config_set_flush(mrt_model_runner_config *config, uintptr_t handle) {
  if (handle == 0) return;
  config->flush_callback = flush_trampoline;
  config->flush_user_data = USER_DATA(handle);
  config->flush_user_data_free = delete_handle;
}

static void flush_select_trampoline(const char *tensor, mrt_flush_selection *selection, void *user_data) {
  goRunnerFlushSelect((char *)tensor, selection, HANDLE(user_data));
}
void gomrt_runner_config_set_flush_select(mrt_model_runner_config *config, uintptr_t handle) {
  if (handle == 0) return;
  config->flush_select_callback = flush_select_trampoline;
  config->flush_user_data = USER_DATA(handle);
  config->flush_user_data_free = delete_handle;
}

static void progress_trampoline(int32_t step, int32_t total, void *user_data) {
  goProgress(step, total, HANDLE(user_data));
}
mrt_status gomrt_graph_compile(mrt_graph *graph, const mrt_program *programs, size_t num_programs,
                               const char *const *options, uintptr_t progress, mrt_executable **out) {
  if (progress == 0) return mrt_graph_compile(graph, programs, num_programs, options, NULL, NULL, NULL, out);
  return mrt_graph_compile(graph, programs, num_programs, options, progress_trampoline, USER_DATA(progress),
                           delete_handle, out);
}
void gomrt_onnx_options_set_progress(mrt_onnx_options *options, uintptr_t handle) {
  if (handle == 0) return;
  options->progress = progress_trampoline;
  options->user_data = USER_DATA(handle);
  options->user_data_free = delete_handle;
}

static void stream_trampoline(void *data, uint64_t size, uint32_t replica, void *user_data) {
  goStream(data, size, replica, HANDLE(user_data));
}
mrt_status gomrt_engine_connect_stream(mrt_engine *engine, const char *stream, uint32_t replica,
                                       uintptr_t handle) {
  return mrt_engine_connect_stream(engine, stream, replica, stream_trampoline, USER_DATA(handle), delete_handle);
}

static void print_trampoline(const char *line, void *user_data) { goPrint((char *)line, HANDLE(user_data)); }
mrt_status gomrt_engine_set_print_callback(mrt_engine *engine, uintptr_t handle) {
  if (handle == 0) return mrt_engine_set_print_callback(engine, NULL, NULL, NULL);
  return mrt_engine_set_print_callback(engine, print_trampoline, USER_DATA(handle), delete_handle);
}
