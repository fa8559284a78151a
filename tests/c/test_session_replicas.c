/* A session of a model compiled with replication factor 2 driven by hand
 * through the C API, as mrt-bench drives it: a queue manager per replica
 * (mrt_session_create_replica_queue_manager), each fed its own inputs, and
 * each replica's modelled device cycles (mrt_session_device_cycles); managers
 * replaced or detached per replica, and every bad argument. Models from
 * mrt-gen (MRT_TEST_SESSION_MODELS): replicated (add_one, R = 2) and add_one. */
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

static mrt_session *bound_session(const mrt_model *model) {
  mrt_session *session = NULL;
  assert_int_equal(mrt_session_create(model, NULL, &session), MRT_OK);
  mrt_device *device = test_small_device_for_model(model);
  assert_int_equal(mrt_session_bind_to_device(session, device), MRT_OK);
  mrt_device_destroy(device);
  return session;
}

static void expect_message_contains(const char *needle) { test_expect_contains(mrt_last_error_message(), needle); }

static mrt_queue_manager *replica_queues(mrt_session *session, uint32_t replica, mrt_input_queue **x,
                                         mrt_output_queue **y) {
  mrt_queue_manager *queues = NULL;
  assert_int_equal(mrt_session_create_replica_queue_manager(session, replica, NULL, &queues), MRT_OK);
  assert_int_equal(mrt_queue_manager_input_queue(queues, "x", x), MRT_OK);
  assert_int_equal(mrt_queue_manager_output_queue(queues, "y", y), MRT_OK);
  return queues;
}

static uint64_t cycles_of(const mrt_session *session, uint32_t replica) {
  uint64_t cycles = 0;
  double clock_hz = 0;
  assert_int_equal(mrt_session_device_cycles(session, replica, &cycles, &clock_hz), MRT_OK);
  assert_true(clock_hz > 1e8);
  return cycles;
}

static void each_replica_has_its_queues_and_its_cycles(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "replicated");
  mrt_session *session = bound_session(model);
  mrt_queue_manager *whole = NULL;
  assert_int_equal(mrt_session_create_queue_manager(session, NULL, &whole), MRT_INVALID_ARGUMENT);
  expect_message_contains("the model has 2 replicas, each with its own queues: create them with "
                          "mrt_session_create_replica_queue_manager()");
  assert_null(whole);

  mrt_input_queue *x[REPLICAS];
  mrt_output_queue *y[REPLICAS];
  mrt_queue_manager *queues[REPLICAS];
  for (uint32_t r = 0; r < REPLICAS; ++r) queues[r] = replica_queues(session, r, &x[r], &y[r]);
  assert_int_equal(mrt_session_run_load_programs(session), MRT_OK);
  const uint64_t loaded[REPLICAS] = {cycles_of(session, 0), cycles_of(session, 1)};

  float in[REPLICAS][N], out[REPLICAS][N];
  for (int r = 0; r < REPLICAS; ++r) {
    for (int i = 0; i < N; ++i) in[r][i] = (float)(100 * r + i);
    assert_int_equal(mrt_input_queue_enqueue(x[r], in[r], sizeof in[r], NULL, NULL, NULL, NULL), MRT_OK);
    assert_int_equal(mrt_output_queue_enqueue(y[r], out[r], sizeof out[r], NULL, NULL, NULL), MRT_OK);
  }
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int r = 0; r < REPLICAS; ++r) {
    for (int i = 0; i < N; ++i) assert_float_equal(out[r][i], in[r][i] + 1.0f, 0);
    /* Each replica's own lane ran the Main program. */
    assert_true(cycles_of(session, (uint32_t)r) > loaded[r]);
  }
  for (int r = 0; r < REPLICAS; ++r) mrt_queue_manager_destroy(queues[r]);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

static void replacing_one_replicas_manager_leaves_the_other(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "replicated");
  mrt_session *session = bound_session(model);
  mrt_input_queue *x0 = NULL, *x1 = NULL, *newer_x0 = NULL;
  mrt_output_queue *y0 = NULL, *y1 = NULL, *newer_y0 = NULL;
  mrt_queue_manager *first0 = replica_queues(session, 0, &x0, &y0);
  mrt_queue_manager *queues1 = replica_queues(session, 1, &x1, &y1);
  mrt_queue_manager *second0 = replica_queues(session, 0, &newer_x0, &newer_y0);

  float in[N] = {0}, out[N];
  assert_int_equal(mrt_input_queue_enqueue(x0, in, sizeof in, NULL, NULL, NULL, NULL), MRT_FAILED_PRECONDITION);
  expect_message_contains("queue manager: its session made a newer queue manager");
  float out1[N];
  assert_int_equal(mrt_input_queue_enqueue(newer_x0, in, sizeof in, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(newer_y0, out, sizeof out, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_input_queue_enqueue(x1, in, sizeof in, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(y1, out1, sizeof out1, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  assert_float_equal(out[3], 1.0f, 0);
  assert_float_equal(out1[3], 1.0f, 0);

  /* Destroying the session detaches every replica's manager. */
  mrt_session_destroy(session);
  assert_int_equal(mrt_input_queue_enqueue(x1, in, sizeof in, NULL, NULL, NULL, NULL), MRT_FAILED_PRECONDITION);
  expect_message_contains("queue manager: its session was destroyed");
  assert_int_equal(mrt_input_queue_enqueue(newer_x0, in, sizeof in, NULL, NULL, NULL, NULL),
                   MRT_FAILED_PRECONDITION);
  mrt_queue_manager_destroy(first0);
  mrt_queue_manager_destroy(second0);
  mrt_queue_manager_destroy(queues1);
  mrt_model_destroy(model);
}

/* A model that is not replicated has replica 0 only, the session's manager. */
static void a_model_that_is_not_replicated_has_replica_0(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = bound_session(model);
  assert_int_equal(cycles_of(session, 0), 0); /* nothing has run since the load */
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  mrt_queue_manager *queues = replica_queues(session, 0, &x, &y);
  float in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = (float)i;
  assert_int_equal(mrt_input_queue_enqueue(x, in, sizeof in, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(y, out, sizeof out, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int i = 0; i < N; ++i) assert_float_equal(out[i], in[i] + 1.0f, 0);
  assert_true(cycles_of(session, 0) > 0);
  mrt_queue_manager_destroy(queues);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

static void count_free(void *user_data) { ++*(int *)user_data; }

static void bad_arguments(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "replicated");
  mrt_session *session = bound_session(model);
  mrt_queue_manager *queues = NULL;
  int frees = 0;
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.timeout_user_data = &frees;
  config.timeout_user_data_free = count_free;
  assert_int_equal(mrt_session_create_replica_queue_manager(session, 2, &config, &queues), MRT_INVALID_ARGUMENT);
  expect_message_contains("mrt_session_create_replica_queue_manager: replica 2 is out of range (the model has 2 "
                          "replicas)");
  assert_int_equal(frees, 1);
  assert_int_equal(mrt_session_create_replica_queue_manager(NULL, 0, &config, &queues), MRT_INVALID_ARGUMENT);
  expect_message_contains("session must not be NULL");
  assert_int_equal(frees, 2);
  assert_int_equal(mrt_session_create_replica_queue_manager(session, 0, NULL, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("out must not be NULL");
  assert_null(queues);

  uint64_t cycles = 7;
  assert_int_equal(mrt_session_device_cycles(session, 2, &cycles, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("mrt_session_device_cycles: replica 2 is out of range (the model has 2 replicas)");
  assert_int_equal(mrt_session_device_cycles(NULL, 0, &cycles, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("session must not be NULL");
  assert_int_equal(mrt_session_device_cycles(session, 0, NULL, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("out_cycles must not be NULL");
  assert_int_equal(cycles, 7);

  /* The session is still usable. */
  assert_int_equal(mrt_session_device_cycles(session, 1, &cycles, NULL), MRT_OK);
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  queues = replica_queues(session, 1, &x, &y);
  mrt_queue_manager_destroy(queues);
  mrt_session_destroy(session);

  mrt_model_destroy(model);

  model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  session = bound_session(model);
  assert_int_equal(mrt_session_create_replica_queue_manager(session, 1, NULL, &queues), MRT_INVALID_ARGUMENT);
  expect_message_contains("replica 1 is out of range (the model has 1 replicas)");
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(each_replica_has_its_queues_and_its_cycles),
      cmocka_unit_test(replacing_one_replicas_manager_leaves_the_other),
      cmocka_unit_test(a_model_that_is_not_replicated_has_replica_0),
      cmocka_unit_test(bad_arguments),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
