/* C memory of the Go binding's runner requests: tensor views whose names and
 * bytes are copies in C memory, so that no Go pointer is held by the library
 * while a request is pending (Go 1.19 cannot pin Go memory). */
#ifndef GOMRT_REQUESTS_H
#define GOMRT_REQUESTS_H

#include <stdint.h>
#include <stdlib.h>
#include "mrt_c.h"

/* n zeroed views, and their release with each view's name and data. */
mrt_tensor_view *gomrt_views_alloc(size_t n);
void gomrt_views_free(mrt_tensor_view *views, size_t n);

/* Queues a request on replica whose inputs (from gomrt_views_alloc) this
 * call takes over: they are freed once the request is done - by a
 * completion callback, whatever the Go side does with the future - or here
 * if the request cannot be queued. */
mrt_status gomrt_execute_async(mrt_model_runner *runner, mrt_tensor_view *inputs, size_t num_inputs,
                               uint32_t replica, mrt_future **out_future, mrt_tensor_memory **out_outputs);

#endif
