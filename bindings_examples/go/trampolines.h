/* C side of the Go binding's callbacks. libmrt calls these C functions,
 * which call the exported Go functions of callbacks.go with the
 * runtime/cgo.Handle that travels as user_data. Each gomrt_* registration
 * helper below passes a handle as user_data (Go may not turn an integer into
 * a pointer itself) and the trampolines as the callbacks; the handle is
 * deleted through user_data_free when the library lets go of it, also when
 * registration fails. */
#ifndef GOMRT_TRAMPOLINES_H
#define GOMRT_TRAMPOLINES_H

#include <stdint.h>
#include <stdlib.h>
#include "mrt_c.h"

/* The "forever" of the runner's and queue manager's timeout_ns. Headers of
 * the one duration convention define MRT_FOREVER (-1; 0 is refused there);
 * before it, those two fields took 0 for forever and refused negatives. */
#ifdef MRT_FOREVER
#define GOMRT_TIMEOUT_FOREVER MRT_FOREVER
#else
#define GOMRT_TIMEOUT_FOREVER 0
#endif

mrt_status gomrt_set_log_callback(uintptr_t handle);
mrt_status gomrt_future_on_ready(mrt_future *future, uintptr_t handle);
mrt_status gomrt_session_set_callback_for_anchor(mrt_session *session, const char *anchor_handle,
                                                 uintptr_t handle);
mrt_status gomrt_session_set_replica_callback_for_anchor(mrt_session *session, const char *anchor_handle,
                                                         uint32_t replica, uintptr_t handle);
mrt_status gomrt_session_set_user_handler(mrt_session *session, int outputs, uintptr_t factory,
                                          const mrt_anchor_predicate *predicate, bool skip_connected);
mrt_status gomrt_anchor_predicate_create_user(int32_t kind, uintptr_t handle, mrt_anchor_predicate **out);
mrt_status gomrt_session_anchors_not_connected(const mrt_session *session, const uint64_t *programs,
                                               size_t num_programs, uintptr_t handle, size_t *out_count);
/* Sets the config's timeout callback (handle 0: none). */
void gomrt_queue_manager_config_set_timeout(mrt_queue_manager_config *config, uintptr_t handle);
/* Enqueues `size` bytes of C memory at data, freed with the entry. */
mrt_status gomrt_input_queue_enqueue(mrt_input_queue *queue, const void *data, int64_t size, uintptr_t entry);
mrt_status gomrt_output_queue_enqueue(mrt_output_queue *queue, void *data, int64_t size, uintptr_t entry);
/* The two-phase enqueue of an input queue, or of an output queue if output:
 * locks the ring's next slot (*out_slot -1 on failure); complete fills the
 * locked entry with `size` bytes of C memory at data, freed with the entry,
 * and publishes it; on a failure other than MRT_CANCELLED the entry forgets
 * them (the library took nothing: the caller frees). */
mrt_status gomrt_queue_entry_lock(void *queue, bool output, void **out_entry, int64_t *out_slot);
mrt_status gomrt_queue_entry_complete(void *queue, bool output, void *locked, void *data, int64_t size,
                                      uintptr_t handle);
void gomrt_runner_config_set_flush(mrt_model_runner_config *config, uintptr_t handle);
/* As gomrt_runner_config_set_flush, for flush_select_callback. */
void gomrt_runner_config_set_flush_select(mrt_model_runner_config *config, uintptr_t handle);
mrt_status gomrt_graph_compile(mrt_graph *graph, const mrt_program *programs, size_t num_programs,
                               const char *const *options, uintptr_t progress, mrt_executable **out);
void gomrt_onnx_options_set_progress(mrt_onnx_options *options, uintptr_t handle);
mrt_status gomrt_engine_connect_stream(mrt_engine *engine, const char *stream, uint32_t replica,
                                       uintptr_t handle);
mrt_status gomrt_engine_set_print_callback(mrt_engine *engine, uintptr_t handle);

#endif
