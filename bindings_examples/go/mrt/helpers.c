/* See helpers.h. */
#include "helpers.h"

#include <string.h>

#include "_cgo_export.h"

/* This thread's last error message, copied into malloc'd memory. */
static char *copy_last_error(void) {
  size_t length = 0;
  if (mrt_last_error_message_copy(NULL, 0, &length) != MRT_OK) return NULL;
  char *message = malloc(length + 1);
  if (message != NULL && mrt_last_error_message_copy(message, length + 1, NULL) != MRT_OK) {
    free(message);
    return NULL;
  }
  return message;
}

/* Must be called right after the call that returned status. */
static gomrt_result result_of(mrt_status status) {
  gomrt_result result = {status, NULL};
  if (status != MRT_OK) result.message = copy_last_error();
  return result;
}

gomrt_result gomrt_model_load(const char *path, mrt_model **out) {
  const char *paths[] = {path};
  return result_of(mrt_model_load(paths, 1, out));
}

gomrt_result gomrt_model_tensor_data(const mrt_model *model, const char *name, const void **out_data,
                                     uint64_t *out_size) {
  return result_of(mrt_model_tensor_data(model, name, out_data, out_size));
}

gomrt_result gomrt_runner_create(const mrt_model *model, uint32_t replicas, int64_t wait_timeout_ns,
                                 mrt_model_runner **out) {
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.replication_factor = replicas;
  config.thread_safe = true;
  mrt_device_wait_config wait;
  mrt_device_wait_config_init(&wait);
  if (wait_timeout_ns > 0) {
    wait.strategy = MRT_DEVICE_WAIT_WITH_TIMEOUT;
    wait.timeout_ns = wait_timeout_ns;
    wait.sleep_time_ns = 1000000;
  }
  config.device_wait_config = &wait;
  return result_of(mrt_model_runner_create(model, &config, out));
}

gomrt_result gomrt_runner_descs(const mrt_model_runner *runner, int outputs, const mrt_data_desc **out_descs,
                                size_t *out_count) {
  return result_of(outputs ? mrt_model_runner_execute_outputs(runner, out_descs, out_count)
                           : mrt_model_runner_execute_inputs(runner, out_descs, out_count));
}

gomrt_result gomrt_execute(mrt_model_runner *runner, const mrt_tensor_view *inputs, size_t num_inputs,
                           const mrt_tensor_view *outputs, size_t num_outputs) {
  return result_of(mrt_model_runner_execute(runner, inputs, num_inputs, outputs, num_outputs, 0));
}

mrt_tensor_view *gomrt_tensors_alloc(size_t n) {
  return calloc(n == 0 ? 1 : n, sizeof(mrt_tensor_view));
}

void gomrt_tensors_free(mrt_tensor_view *views, size_t n) {
  if (views == NULL) return;
  for (size_t i = 0; i < n; ++i) {
    free((void *)views[i].name);
    free(views[i].data);
  }
  free(views);
}

/* The inputs of one queued request, freed when it is done. */
typedef struct pending_inputs {
  mrt_tensor_view *views;
  size_t count;
} pending_inputs;

static void free_pending_inputs(mrt_status status, void *user_data) {
  (void)status;
  pending_inputs *pending = user_data;
  gomrt_tensors_free(pending->views, pending->count);
  free(pending);
}

gomrt_result gomrt_execute_async(mrt_model_runner *runner, mrt_tensor_view *inputs, size_t num_inputs,
                                 mrt_future **out_future, mrt_tensor_memory **out_outputs) {
  pending_inputs *pending = malloc(sizeof *pending);
  if (pending == NULL) {
    gomrt_tensors_free(inputs, num_inputs);
    gomrt_result oom = {MRT_RESOURCE_EXHAUSTED, strdup("out of memory for the request's inputs")};
    return oom;
  }
  pending->views = inputs;
  pending->count = num_inputs;
  mrt_future *future = NULL;
  gomrt_result result =
      result_of(mrt_model_runner_execute_async_alloc(runner, inputs, num_inputs, 0, &future, out_outputs));
  if (result.status != MRT_OK) {
    free_pending_inputs(result.status, pending);
    return result;
  }
  /* The callback runs exactly once, after the request stopped reading its
   * inputs. If registering it fails (it cannot for a valid future), wait. */
  if (mrt_future_on_ready(future, free_pending_inputs, pending, NULL) != MRT_OK) {
    mrt_future_wait(future, -1);
    free_pending_inputs(MRT_OK, pending);
  }
  *out_future = future;
  return result;
}

gomrt_result gomrt_future_wait(mrt_future *future, int64_t timeout_ns) {
  gomrt_result result = {mrt_future_wait(future, timeout_ns), NULL};
  if (result.status != MRT_OK && mrt_future_is_ready(future)) {
    result.message = strdup(mrt_future_error_message(future));
  } else if (result.status == MRT_DEADLINE_EXCEEDED) {
    result.message = strdup("the request is not done yet");
  }
  return result;
}

static void future_ready_trampoline(mrt_status status, void *user_data) {
  goFutureReady(status, (uintptr_t)user_data);
}

static void delete_handle(void *user_data) { goDeleteHandle((uintptr_t)user_data); }

gomrt_result gomrt_future_on_ready(mrt_future *future, uintptr_t handle) {
  /* On failure the library calls delete_handle itself: the Go side must not. */
  return result_of(mrt_future_on_ready(future, future_ready_trampoline, (void *)handle, delete_handle));
}

static void log_trampoline(mrt_log_level level, const char *message, void *user_data) {
  goLogMessage((int32_t)level, (char *)message, (uintptr_t)user_data);
}

gomrt_result gomrt_set_log_callback(uintptr_t handle) {
  if (handle == 0) return result_of(mrt_set_log_callback(NULL, NULL, NULL));
  return result_of(mrt_set_log_callback(log_trampoline, (void *)handle, delete_handle));
}

gomrt_result gomrt_set_log_level(int32_t level) { return result_of(mrt_set_log_level(level)); }

gomrt_result gomrt_log_message(int32_t level, const char *message) {
  return result_of(mrt_log_message(level, message));
}

gomrt_result gomrt_check_version(int major, int minor) { return result_of(mrt_check_version(major, minor)); }
