/* mrt_session_device_cycles: each replica's modelled device cycles of a
 * session driven by hand, as mrt-bench reads them, and its bad arguments.
 * Models from mrt-gen (MRT_TEST_SESSION_MODELS): replicated (add_one,
 * R = 2) and add_one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

enum { N = 16, REPLICAS = 2 };

static uint64_t cycles_of(const mrt_session *session, uint32_t replica) {
  uint64_t cycles = 0;
  double clock_hz = 0;
  assert_int_equal(mrt_session_device_cycles(session, replica, &cycles, &clock_hz), MRT_OK);
  assert_true(clock_hz > 1e8);
  return cycles;
}

/* Runs one add_one request through replica `replica`'s own queues. */
static void run_one_request(mrt_session *session, uint32_t replica) {
  mrt_queue_manager *queues = NULL;
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  assert_int_equal(mrt_session_create_queue_manager_for_replica(session, replica, NULL, &queues), MRT_OK);
  assert_int_equal(mrt_queue_manager_input_queue(queues, "x", &x), MRT_OK);
  assert_int_equal(mrt_queue_manager_output_queue(queues, "y", &y), MRT_OK);
  float in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = (float)(100 * (int)replica + i);
  assert_int_equal(mrt_input_queue_enqueue(x, in, sizeof in, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(y, out, sizeof out, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs_for_replica(session, replica), MRT_OK);
  for (int i = 0; i < N; ++i) assert_float_equal(out[i], in[i] + 1.0f, 0);
  mrt_queue_manager_destroy(queues);
}

/* A replica's cycles grow when that replica runs, and only then. */
static void each_replica_counts_its_own_runs(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "replicated");
  mrt_session *session = test_bound_session(model, NULL);
  run_one_request(session, 0);
  const uint64_t after_first[REPLICAS] = {cycles_of(session, 0), cycles_of(session, 1)};
  run_one_request(session, 1);
  assert_int_equal(cycles_of(session, 0), after_first[0]);
  assert_true(cycles_of(session, 1) > after_first[1]);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

static void a_model_that_is_not_replicated_has_replica_0(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = test_bound_session(model, NULL);
  assert_int_equal(cycles_of(session, 0), 0); /* nothing has run since the load */
  run_one_request(session, 0);
  assert_true(cycles_of(session, 0) > 0);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

static void bad_arguments(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "replicated");
  mrt_session *session = test_bound_session(model, NULL);
  uint64_t cycles = 7;
  assert_int_equal(mrt_session_device_cycles(session, 2, &cycles, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(),
                       "mrt_session_device_cycles: replica 2 out of range: the session's model 'replicated' has 2 "
                       "replicas");
  assert_int_equal(mrt_session_device_cycles(NULL, 0, &cycles, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "session must not be NULL");
  assert_int_equal(mrt_session_device_cycles(session, 0, NULL, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_cycles must not be NULL");
  assert_int_equal(cycles, 7);
  /* The session is still usable; the clock rate is optional. */
  assert_int_equal(mrt_session_device_cycles(session, 1, &cycles, NULL), MRT_OK);
  run_one_request(session, 1);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_replica_counts_its_own_runs),
      cmocka_unit_test(a_model_that_is_not_replicated_has_replica_0),
      cmocka_unit_test(bad_arguments),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
