/* See requests.h. */
#include "requests.h"

mrt_tensor_view *gomrt_views_alloc(size_t n) { return calloc(n == 0 ? 1 : n, sizeof(mrt_tensor_view)); }

void gomrt_views_free(mrt_tensor_view *views, size_t n) {
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
  gomrt_views_free(pending->views, pending->count);
  free(pending);
}

mrt_status gomrt_execute_async(mrt_model_runner *runner, mrt_tensor_view *inputs, size_t num_inputs,
                               uint32_t replica, mrt_future **out_future, mrt_tensor_memory **out_outputs) {
  pending_inputs *pending = malloc(sizeof *pending);
  if (pending == NULL) {
    gomrt_views_free(inputs, num_inputs);
    return MRT_RESOURCE_EXHAUSTED;
  }
  pending->views = inputs;
  pending->count = num_inputs;
  mrt_future *future = NULL;
  mrt_status status =
      mrt_model_runner_execute_async_alloc(runner, inputs, num_inputs, replica, &future, out_outputs);
  if (status != MRT_OK) {
    free_pending_inputs(status, pending);
    return status;
  }
  /* The callback runs exactly once, after the request stopped reading its
   * inputs. Registering cannot fail for a valid future; if it did, wait. */
  if (mrt_future_on_ready(future, free_pending_inputs, pending, NULL) != MRT_OK) {
    mrt_future_wait(future, -1);
    free_pending_inputs(MRT_OK, pending);
  }
  *out_future = future;
  return MRT_OK;
}
