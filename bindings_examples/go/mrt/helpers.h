/* C side of the Go binding. Every fallible call goes through a helper here
 * that, in the same C call, copies the library's per-thread error message
 * when the call fails. A goroutine may move to another OS thread between two
 * cgo calls, so reading mrt_last_error_message() in a second call could read
 * another call's message; one call cannot. */
#ifndef GOMRT_HELPERS_H
#define GOMRT_HELPERS_H

#include <stdint.h>
#include <stdlib.h>

#include "mrt_c.h"

/* The outcome of one call: its status and, if it failed, the thread's error
 * message (malloc'd; the Go side frees it). */
typedef struct gomrt_result {
  mrt_status status;
  char *message;
} gomrt_result;

gomrt_result gomrt_model_load(const char *path, mrt_model **out);
gomrt_result gomrt_model_tensor_data(const mrt_model *model, const char *name, const void **out_data,
                                     uint64_t *out_size);

/* A runner with thread_safe set (so Go may call execute from many
 * goroutines), `replicas` replicas, waiting up to wait_timeout_ns for a free
 * device (0: do not wait). */
gomrt_result gomrt_runner_create(const mrt_model *model, uint32_t replicas, int64_t wait_timeout_ns,
                                 mrt_model_runner **out);
/* The execute inputs (outputs != 0: outputs) descriptions. */
gomrt_result gomrt_runner_descs(const mrt_model_runner *runner, int outputs, const mrt_data_desc **out_descs,
                                size_t *out_count);
gomrt_result gomrt_execute(mrt_model_runner *runner, const mrt_tensor_view *inputs, size_t num_inputs,
                           const mrt_tensor_view *outputs, size_t num_outputs);

/* Queues a request whose inputs (views, names and bytes, all in C memory
 * from gomrt_tensors_alloc) this call takes over: they are freed once the
 * request is done - by the library's completion callback, whatever the Go
 * side does with the future - or here if the request cannot be queued. */
gomrt_result gomrt_execute_async(mrt_model_runner *runner, mrt_tensor_view *inputs, size_t num_inputs,
                                 mrt_future **out_future, mrt_tensor_memory **out_outputs);

/* C memory for n tensor views (zeroed) and its release, with each view's
 * name and data (either may be NULL). */
mrt_tensor_view *gomrt_tensors_alloc(size_t n);
void gomrt_tensors_free(mrt_tensor_view *views, size_t n);

/* Waits up to timeout_ns (< 0: forever). status is the request's status,
 * MRT_DEADLINE_EXCEEDED if it is not done; on failure the future's message. */
gomrt_result gomrt_future_wait(mrt_future *future, int64_t timeout_ns);

/* Registers the exported Go function goFutureReady with a cgo.Handle as
 * user_data; the handle is deleted through user_data_free. */
gomrt_result gomrt_future_on_ready(mrt_future *future, uintptr_t handle);

/* Sets (handle != 0) or clears (handle == 0) the log callback goLogMessage;
 * the handle is deleted through user_data_free. */
gomrt_result gomrt_set_log_callback(uintptr_t handle);
gomrt_result gomrt_set_log_level(int32_t level);
gomrt_result gomrt_log_message(int32_t level, const char *message);
gomrt_result gomrt_check_version(int major, int minor);

#endif
