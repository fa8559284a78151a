/* Helpers of the queue tests without a session (test_queue.c,
 * test_queue_enqueue_lock.c), over add_one with batch 4 (x, y F32[4,2]):
 * a manager and its queues, callbacks counting their calls and the test
 * playing the device. */
#ifndef MRT_QUEUE_TEST_SUPPORT_H
#define MRT_QUEUE_TEST_SUPPORT_H

#include "mrt_c.h"

/* What the callbacks below count, for the user_data they are given. */
typedef struct counters {
  int started, completed, freed;
} counters;

void on_start(void *user_data);    /* read_start_fn */
void on_complete(void *user_data); /* read_complete_fn / write_complete_fn */
void on_free(void *user_data);     /* user_data_free */

/* A manager over `model` (add_one_b4, rings of 2 x batch = 8 entries) and
 * its queues x and y. */
typedef struct queue_fixture {
  mrt_queue_manager *manager;
  mrt_input_queue *x;
  mrt_output_queue *y;
} queue_fixture;
queue_fixture make_queue_fixture(const mrt_model *model);

/* The device: one transfer of x in, y = x + 1 out through the manager. */
void run_device_once(mrt_queue_manager *manager);

#endif
