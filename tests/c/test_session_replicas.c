/* In-model replication through the session part of the C API, on
 * `replicated` (add_one, 16 floats, compiled with replication factor 2;
 * MRT_TEST_SESSION_MODELS): the replica count; a queue manager per replica
 * fed by its own producer while each replica runs its Main programs on a
 * thread of its own, every output checked against its own replica's input;
 * handler factories told which replica they bind; and the errors naming a
 * bad replica, a NULL argument or the wrong state. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

enum { N = 16, REPLICAS = 2, REQUESTS = 50 };

/* A deferred session of `name`, bound to its own small IPU Model device. */
static mrt_session *bound_session(const char *name) {
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", name);
  mrt_session *session = test_bound_session(model, NULL);
  mrt_model_destroy(model); /* the session keeps it */
  return session;
}

static void expect_message_contains(const char *needle) { test_expect_contains(mrt_last_error_message(), needle); }

/* Replica r's input for request i: distinct for every (replica, request). */
static float input_value(uint32_t replica, int request, int i) { return (float)(1000 * replica + 20 * request + i); }

static void test_num_replicas(void **state) {
  (void)state;
  uint32_t count = 0;
  mrt_session *session = bound_session("replicated");
  assert_int_equal(mrt_session_num_replicas(session, &count), MRT_OK);
  assert_int_equal(count, REPLICAS);
  assert_int_equal(mrt_session_num_replicas(session, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("out_count");
  mrt_session_destroy(session);

  session = bound_session("add_one");
  assert_int_equal(mrt_session_num_replicas(session, &count), MRT_OK);
  assert_int_equal(count, 1);
  mrt_session_destroy(session);
  assert_int_equal(mrt_session_num_replicas(NULL, &count), MRT_INVALID_ARGUMENT);
  expect_message_contains("session");
}

/* ---- a queue manager and a device thread per replica ---- */

typedef struct replica_runs {
  mrt_session *session;
  uint32_t replica;
  mrt_status status; /* the first failure, or MRT_OK */
} replica_runs;

static void *run_replica(void *arg) {
  replica_runs *runs = arg;
  runs->status = MRT_OK;
  for (int i = 0; i < REQUESTS && runs->status == MRT_OK; ++i) {
    runs->status = mrt_session_run_main_programs_for_replica(runs->session, runs->replica);
  }
  return NULL;
}

static void test_per_replica_queues_and_runs(void **state) {
  (void)state;
  mrt_session *session = bound_session("replicated");
  static float in[REPLICAS][REQUESTS][N], out[REPLICAS][REQUESTS][N];
  mrt_queue_manager *managers[REPLICAS];
  mrt_input_queue *x[REPLICAS];
  mrt_output_queue *y[REPLICAS];
  for (uint32_t r = 0; r < REPLICAS; ++r) {
    assert_int_equal(mrt_session_create_queue_manager_for_replica(session, r, NULL, &managers[r]), MRT_OK);
    assert_int_equal(mrt_queue_manager_input_queue(managers[r], "x", &x[r]), MRT_OK);
    assert_int_equal(mrt_queue_manager_output_queue(managers[r], "y", &y[r]), MRT_OK);
    for (int q = 0; q < REQUESTS; ++q) {
      for (int i = 0; i < N; ++i) {
        in[r][q][i] = input_value(r, q, i);
        out[r][q][i] = -1.0f;
      }
    }
  }
  replica_runs runs[REPLICAS];
  pthread_t threads[REPLICAS];
  for (uint32_t r = 0; r < REPLICAS; ++r) {
    runs[r] = (replica_runs){session, r, MRT_OK};
    assert_int_equal(pthread_create(&threads[r], NULL, run_replica, &runs[r]), 0);
  }
  /* One producer (this thread) for every queue: the rings are 2 deep, so
   * alternate replicas request by request; each device thread drains its own. */
  for (int q = 0; q < REQUESTS; ++q) {
    for (uint32_t r = 0; r < REPLICAS; ++r) {
      assert_int_equal(mrt_input_queue_enqueue(x[r], in[r][q], sizeof in[r][q], NULL, NULL, NULL, NULL), MRT_OK);
      assert_int_equal(mrt_output_queue_enqueue(y[r], out[r][q], sizeof out[r][q], NULL, NULL, NULL), MRT_OK);
    }
  }
  for (uint32_t r = 0; r < REPLICAS; ++r) {
    assert_int_equal(pthread_join(threads[r], NULL), 0);
    assert_int_equal(runs[r].status, MRT_OK);
  }
  for (uint32_t r = 0; r < REPLICAS; ++r) {
    for (int q = 0; q < REQUESTS; ++q) {
      for (int i = 0; i < N; ++i) assert_float_equal(out[r][q][i], input_value(r, q, i) + 1.0f, 0);
    }
  }

  /* One more request on replica 1 alone, from this thread: replica 0's queues are not touched. */
  float one_in[N], one_out[N];
  for (int i = 0; i < N; ++i) one_in[i] = (float)(-i);
  assert_int_equal(mrt_input_queue_enqueue(x[1], one_in, sizeof one_in, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(y[1], one_out, sizeof one_out, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs_for_replica(session, 1), MRT_OK);
  for (int i = 0; i < N; ++i) assert_float_equal(one_out[i], one_in[i] + 1.0f, 0);

  /* A newer manager for replica 0 detaches replica 0's old one only. */
  mrt_queue_manager *newer = NULL;
  assert_int_equal(mrt_session_create_queue_manager_for_replica(session, 0, NULL, &newer), MRT_OK);
  assert_int_equal(mrt_queue_manager_flush_all(managers[0]), MRT_FAILED_PRECONDITION);
  expect_message_contains("its session made a newer queue manager");
  assert_int_equal(mrt_queue_manager_flush_all(managers[1]), MRT_OK);
  mrt_queue_manager_destroy(newer);
  mrt_queue_manager_destroy(managers[0]);

  /* Destroying the session detaches every replica's manager. */
  mrt_session_destroy(session);
  assert_int_equal(mrt_queue_manager_flush_all(managers[1]), MRT_FAILED_PRECONDITION);
  expect_message_contains("its session was destroyed");
  mrt_queue_manager_destroy(managers[1]);
}

/* ---- handler factories told the replica ---- */

typedef struct replica_buffers {
  float x[REPLICAS][N], y[REPLICAS][N];
  uint32_t seen[4]; /* the replica each factory call was given, in call order */
  int calls;
} replica_buffers;

static void copy_in(void *device_buffer, uint64_t size, void *user_data) { memcpy(device_buffer, user_data, size); }
static void copy_out(void *device_buffer, uint64_t size, void *user_data) { memcpy(user_data, device_buffer, size); }

static bool replica_factory(const mrt_anchor_info *anchor, mrt_anchor_callback *out, void *user_data) {
  replica_buffers *b = user_data;
  assert_true(anchor->struct_size >= MRT_STRUCT_SIZE(mrt_anchor_info, replica));
  assert_true(anchor->replica < REPLICAS);
  assert_true(b->calls < 4);
  b->seen[b->calls++] = anchor->replica;
  const bool input = strcmp(anchor->handle, "x") == 0;
  out->fn = input ? copy_in : copy_out;
  out->user_data = input ? (void *)b->x[anchor->replica] : (void *)b->y[anchor->replica];
  return true;
}

static void test_handler_factories_see_the_replica(void **state) {
  (void)state;
  mrt_session *session = bound_session("replicated");
  static replica_buffers b;
  memset(&b, 0, sizeof b);
  for (uint32_t r = 0; r < REPLICAS; ++r) {
    for (int i = 0; i < N; ++i) b.x[r][i] = input_value(r, 0, i);
  }
  assert_int_equal(mrt_session_set_user_input_handler(session, replica_factory, &b, NULL, NULL, false), MRT_OK);
  assert_int_equal(mrt_session_set_user_output_handler(session, replica_factory, &b, NULL, NULL, false), MRT_OK);
  assert_int_equal(b.calls, 4); /* x and y, once per replica, in replica order */
  const uint32_t expected[4] = {0, 1, 0, 1};
  assert_memory_equal(b.seen, expected, sizeof expected);
  for (uint32_t r = 0; r < REPLICAS; ++r) {
    assert_int_equal(mrt_session_run_main_programs_for_replica(session, r), MRT_OK);
    for (int i = 0; i < N; ++i) assert_float_equal(b.y[r][i], input_value(r, 0, i) + 1.0f, 0);
  }
  mrt_session_destroy(session);

  /* Anchors listed outside a factory call say replica 0. */
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "replicated");
  mrt_anchor_info info;
  memset(&info, 0xff, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(mrt_model_anchor(model, 0, &info), MRT_OK);
  assert_int_equal(info.replica, 0);
  mrt_model_destroy(model);
}

/* ---- errors ---- */

static int g_freed;
static void count_free(void *user_data) {
  (void)user_data;
  ++g_freed;
}

static void test_bad_replicas_and_states(void **state) {
  (void)state;
  mrt_session *session = bound_session("replicated");
  mrt_queue_manager *manager = NULL;
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.timeout_user_data_free = count_free;

  /* Out of range: the replica and the model's count named; user data freed. */
  g_freed = 0;
  assert_int_equal(mrt_session_create_queue_manager_for_replica(session, 2, &config, &manager),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("replica 2 out of range: the session's model 'replicated' has 2 replicas");
  assert_int_equal(g_freed, 1);
  assert_null(manager);
  assert_int_equal(mrt_session_run_main_programs_for_replica(session, 2), MRT_INVALID_ARGUMENT);
  expect_message_contains("replica 2 out of range");
  assert_int_equal(mrt_session_run_main_programs_for_replica(session, UINT32_MAX), MRT_INVALID_ARGUMENT);
  expect_message_contains("replica 4294967295 out of range");

  /* A replicated model has no manager for all replicas. */
  assert_int_equal(mrt_session_create_queue_manager(session, &config, &manager), MRT_INVALID_ARGUMENT);
  expect_message_contains("has 2 replicas, each with its own queues");
  expect_message_contains("mrt_session_create_queue_manager_for_replica()");
  assert_int_equal(g_freed, 2);

  /* NULL arguments. */
  assert_int_equal(mrt_session_create_queue_manager_for_replica(NULL, 0, &config, &manager), MRT_INVALID_ARGUMENT);
  expect_message_contains("session");
  assert_int_equal(g_freed, 3);
  assert_int_equal(mrt_session_create_queue_manager_for_replica(session, 0, NULL, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("out");
  assert_int_equal(mrt_session_run_main_programs_for_replica(NULL, 0), MRT_INVALID_ARGUMENT);
  expect_message_contains("session");

  /* Wrong state: stopped, then reloaded. */
  assert_int_equal(mrt_session_stop(session), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs_for_replica(session, 0), MRT_FAILED_PRECONDITION);
  assert_int_equal(mrt_session_reload(session), MRT_OK);
  /* Each failure left the session usable. */
  assert_int_equal(mrt_session_create_queue_manager_for_replica(session, 1, NULL, &manager), MRT_OK);
  mrt_queue_manager_destroy(manager); /* replica 1's runs now get zeros */
  assert_int_equal(mrt_session_run_main_programs_for_replica(session, 1), MRT_OK);
  mrt_session_destroy(session);

  /* Wrong state: not bound to a device. */
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "replicated");
  assert_int_equal(mrt_session_create(model, NULL, &session), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs_for_replica(session, 0), MRT_FAILED_PRECONDITION);
  expect_message_contains("not bound to a device");
  mrt_session_destroy(session);
  mrt_model_destroy(model);

  /* A model that is not replicated: replica 0 is its only one. */
  session = bound_session("add_one");
  assert_int_equal(mrt_session_create_queue_manager_for_replica(session, 1, NULL, &manager), MRT_INVALID_ARGUMENT);
  expect_message_contains("replica 1 out of range: the session's model 'add_one' has 1 replica");
  assert_int_equal(mrt_session_create_queue_manager_for_replica(session, 0, NULL, &manager), MRT_OK);
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  assert_int_equal(mrt_queue_manager_input_queue(manager, "x", &x), MRT_OK);
  assert_int_equal(mrt_queue_manager_output_queue(manager, "y", &y), MRT_OK);
  float in[N], out[N];
  for (int i = 0; i < N; ++i) in[i] = (float)i * 0.5f;
  assert_int_equal(mrt_input_queue_enqueue(x, in, sizeof in, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(y, out, sizeof out, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs_for_replica(session, 0), MRT_OK);
  for (int i = 0; i < N; ++i) assert_float_equal(out[i], in[i] + 1.0f, 0);
  mrt_queue_manager_destroy(manager);
  mrt_session_destroy(session);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_num_replicas),
      cmocka_unit_test(test_per_replica_queues_and_runs),
      cmocka_unit_test(test_handler_factories_see_the_replica),
      cmocka_unit_test(test_bad_replicas_and_states),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
