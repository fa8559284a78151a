/* A session's queue manager through the C API (mrt_session_create_queue_manager),
 * on the example models written by mrt-gen (MRT_TEST_SESSION_MODELS): a
 * producer enqueues inputs and output buffers on add_one and mlp while
 * another thread runs the Main programs, outputs checked against reference
 * math; timeout callbacks that flush; stop() waking a run blocked on an
 * empty queue; and the handles destroyed in either order, or replaced. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlp_reference.h"
#include "mrt_c.h"
#include "test_support.h"

enum { ADD_ONE_N = 16 };

static void expect_message_contains(const char *needle) { test_expect_contains(mrt_last_error_message(), needle); }

/* A manager of the session of add_one and its two queues. */
static mrt_queue_manager *add_one_queues(mrt_session *session, const mrt_queue_manager_config *config,
                                         mrt_input_queue **x, mrt_output_queue **y) {
  mrt_queue_manager *queues = NULL;
  assert_int_equal(mrt_session_create_queue_manager(session, config, &queues), MRT_OK);
  assert_int_equal(mrt_queue_manager_input_queue(queues, "x", x), MRT_OK);
  assert_int_equal(mrt_queue_manager_output_queue(queues, "y", y), MRT_OK);
  return queues;
}

static void sleep_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* One request on add_one from the calling thread: enqueue, run Main, check y = x + 1. */
static void serve_one(mrt_session *session, mrt_input_queue *x, mrt_output_queue *y, const float *in) {
  float out[ADD_ONE_N];
  assert_int_equal(mrt_input_queue_enqueue(x, in, ADD_ONE_N * sizeof(float), NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(y, out, sizeof out, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(out[i], in[i] + 1.0f, 0);
}

/* ---- a thread running Main programs ---- */

typedef struct runs {
  mrt_session *session;
  int count;
  mrt_status status; /* the first failure, or MRT_OK */
} runs;

static void *run_main_programs(void *arg) {
  runs *r = arg;
  r->status = MRT_OK;
  for (int i = 0; i < r->count && r->status == MRT_OK; ++i) r->status = mrt_session_run_main_programs(r->session);
  return NULL;
}

/* Counts calls from the device thread; read after joining it. */
static void count_call(void *user_data) { ++*(int *)user_data; }

/* ---- add_one and mlp served through the queues ---- */

static void add_one_requests_through_the_queues(void **state) {
  (void)state;
  enum { REQUESTS = 300 };
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = test_bound_session(model, NULL);
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  mrt_queue_manager *queues = add_one_queues(session, NULL, &x, &y);
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  assert_int_equal(mrt_input_queue_info(x, &info), MRT_OK);
  assert_int_equal(info.size_in_bytes, ADD_ONE_N * 4);
  assert_int_equal(info.num_buffers, 64); /* the default multiplier 64 x batch 1 */
  assert_true(info.connected);

  static float in[REQUESTS][ADD_ONE_N], out[REQUESTS][ADD_ONE_N];
  unsigned seed = 17;
  for (int r = 0; r < REQUESTS; ++r) {
    for (int i = 0; i < ADD_ONE_N; ++i) in[r][i] = (float)rand_r(&seed) / (float)RAND_MAX * 8.0f - 4.0f;
  }
  int reads = 0, writes = 0;
  runs device = {session, REQUESTS, MRT_OK};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, run_main_programs, &device), 0);
  for (int r = 0; r < REQUESTS; ++r) {
    /* Blocks while the rings are full: the device thread drains them. */
    assert_int_equal(mrt_input_queue_enqueue(x, in[r], sizeof in[r], NULL, count_call, &reads, NULL), MRT_OK);
    assert_int_equal(mrt_output_queue_enqueue(y, out[r], sizeof out[r], count_call, &writes, NULL), MRT_OK);
  }
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_int_equal(device.status, MRT_OK);
  assert_int_equal(reads, REQUESTS);
  assert_int_equal(writes, REQUESTS);
  for (int r = 0; r < REQUESTS; ++r) {
    for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(out[r][i], in[r][i] + 1.0f, 0);
  }
  mrt_queue_manager_destroy(queues);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

static void mlp_requests_through_the_queues(void **state) {
  (void)state;
  enum { REQUESTS = 24 };
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "mlp");
  mrt_session *session = test_bound_session(model, NULL);
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.ring_size_multiplier = 3;
  mrt_queue_manager *queues = NULL;
  assert_int_equal(mrt_session_create_queue_manager(session, &config, &queues), MRT_OK);
  size_t count = 0;
  assert_int_equal(mrt_queue_manager_num_inputs(queues, &count), MRT_OK);
  assert_int_equal(count, 1); /* the weights come from PopEF */
  const char *name = NULL;
  assert_int_equal(mrt_queue_manager_input_name(queues, 0, &name), MRT_OK);
  assert_string_equal(name, "image");
  mrt_input_queue *image = NULL;
  mrt_output_queue *probs = NULL;
  assert_int_equal(mrt_queue_manager_input_queue(queues, "image", &image), MRT_OK);
  assert_int_equal(mrt_queue_manager_output_queue(queues, "probs", &probs), MRT_OK);
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  assert_int_equal(mrt_output_queue_info(probs, &info), MRT_OK);
  assert_int_equal(info.num_buffers, 3);

  static float images[REQUESTS][MLP_IMAGE], results[REQUESTS][MLP_CLASSES];
  unsigned seed = 29;
  for (int r = 0; r < REQUESTS; ++r) {
    for (int i = 0; i < MLP_IMAGE; ++i) images[r][i] = (float)rand_r(&seed) / (float)RAND_MAX;
  }
  runs device = {session, REQUESTS, MRT_OK};
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, run_main_programs, &device), 0);
  for (int r = 0; r < REQUESTS; ++r) {
    assert_int_equal(mrt_input_queue_enqueue(image, images[r], sizeof images[r], NULL, NULL, NULL, NULL), MRT_OK);
    assert_int_equal(mrt_output_queue_enqueue(probs, results[r], sizeof results[r], NULL, NULL, NULL), MRT_OK);
  }
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_int_equal(device.status, MRT_OK);
  const mlp_weights weights = mlp_weights_of(model);
  for (int r = 0; r < REQUESTS; ++r) {
    double expected[MLP_CLASSES];
    mlp_reference(&weights, images[r], expected);
    for (int k = 0; k < MLP_CLASSES; ++k) assert_float_equal(results[r][k], expected[k], 1e-5);
  }
  mrt_queue_manager_destroy(queues);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

/* ---- timeouts, stop ---- */

typedef struct flusher {
  mrt_input_queue *queue;
  int calls;
  int frees;
  char anchor[32];
  int32_t direction;
} flusher;

static void flush_on_timeout(const char *anchor_name, int32_t direction, int64_t bytes_done, void *user_data) {
  flusher *f = user_data;
  ++f->calls;
  snprintf(f->anchor, sizeof f->anchor, "%s", anchor_name);
  f->direction = direction;
  assert_int_equal(bytes_done, 0);
  assert_int_equal(mrt_input_queue_flush(f->queue), MRT_OK); /* the only producer of the queue */
}

static void count_flusher_free(void *user_data) { ++((flusher *)user_data)->frees; }

static void timeout_callback_flushes_an_empty_input(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = test_bound_session(model, NULL);
  flusher f = {NULL, 0, 0, "", -1};
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.timeout_ns = 20 * 1000000LL;
  config.timeout_fn = flush_on_timeout;
  config.timeout_user_data = &f;
  config.timeout_user_data_free = count_flusher_free;
  mrt_output_queue *y = NULL;
  mrt_queue_manager *queues = add_one_queues(session, &config, &f.queue, &y);
  float out[ADD_ONE_N];
  memset(out, 0xff, sizeof out);
  assert_int_equal(mrt_output_queue_enqueue(y, out, sizeof out, NULL, NULL, NULL), MRT_OK);
  /* Nobody enqueues x: after 20 ms the callback flushes zeros in. */
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  assert_int_equal(f.calls, 1);
  assert_string_equal(f.anchor, "x");
  assert_int_equal(f.direction, MRT_TENSOR_INPUT);
  for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(out[i], 1.0f, 0);
  mrt_session_destroy(session);
  assert_int_equal(f.frees, 0); /* the manager still holds the callback */
  mrt_queue_manager_destroy(queues);
  assert_int_equal(f.frees, 1);
  mrt_model_destroy(model);
}

static void *stop_after_a_while(void *arg) {
  sleep_ms(30);
  assert_int_equal(mrt_session_stop(arg), MRT_OK);
  return NULL;
}

static void stop_wakes_a_run_waiting_for_input_and_reload_resets(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = test_bound_session(model, NULL);
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  mrt_queue_manager *queues = add_one_queues(session, NULL, &x, &y);
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, stop_after_a_while, session), 0);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_CANCELLED); /* x never came */
  assert_int_equal(pthread_join(thread, NULL), 0);
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  assert_int_equal(mrt_input_queue_info(x, &info), MRT_OK);
  assert_false(info.connected);
  float in[ADD_ONE_N] = {0};
  assert_int_equal(mrt_input_queue_enqueue(x, in, sizeof in, NULL, NULL, NULL, NULL), MRT_CANCELLED);

  assert_int_equal(mrt_session_reload(session), MRT_OK);
  assert_int_equal(mrt_input_queue_info(x, &info), MRT_OK);
  assert_true(info.connected);
  in[5] = 41.0f;
  serve_one(session, x, y, in);
  mrt_queue_manager_destroy(queues);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

/* ---- destruction order and replacement ---- */

typedef struct blocked_producer {
  mrt_input_queue *queue;
  float data[ADD_ONE_N];
  pthread_mutex_t mutex; /* guards accepted, read while the producer runs */
  pthread_cond_t changed;
  int accepted;
  int frees;
  mrt_status last; /* the status of the enqueue that had to wait */
} blocked_producer;

static void count_producer_free(void *user_data) { ++((blocked_producer *)user_data)->frees; }

/* Enqueues until an enqueue fails: the ring fills, the next call blocks
 * until the session goes. */
static void *produce_until_refused(void *arg) {
  blocked_producer *p = arg;
  for (;;) {
    p->last = mrt_input_queue_enqueue(p->queue, p->data, sizeof p->data, NULL, NULL, p, count_producer_free);
    if (p->last != MRT_OK) return NULL;
    pthread_mutex_lock(&p->mutex);
    ++p->accepted;
    pthread_cond_signal(&p->changed);
    pthread_mutex_unlock(&p->mutex);
  }
}

static void destroying_the_session_first_detaches_the_manager(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = test_bound_session(model, NULL);
  mrt_queue_manager *queues = NULL;
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.ring_size_multiplier = 2; /* two entries to fill */
  assert_int_equal(mrt_session_create_queue_manager(session, &config, &queues), MRT_OK);
  blocked_producer producer = {NULL, {0}, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, MRT_OK};
  assert_int_equal(mrt_queue_manager_input_queue(queues, "x", &producer.queue), MRT_OK);
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, produce_until_refused, &producer), 0);
  /* Once the ring's two entries are taken, the next enqueue blocks. */
  pthread_mutex_lock(&producer.mutex);
  while (producer.accepted < 2) pthread_cond_wait(&producer.changed, &producer.mutex);
  pthread_mutex_unlock(&producer.mutex);
  sleep_ms(20); /* most likely inside the blocking enqueue by now */
  mrt_session_destroy(session);
  assert_int_equal(pthread_join(thread, NULL), 0);
  /* Woken by the disconnection, or (if it came late) refused by the detached manager. */
  if (producer.last != MRT_CANCELLED && producer.last != MRT_FAILED_PRECONDITION) {
    fail_msg("the blocked enqueue returned %s", mrt_status_string(producer.last));
  }
  assert_int_equal(producer.accepted, 2); /* the ring's two entries */

  float data[ADD_ONE_N] = {0};
  assert_int_equal(mrt_input_queue_enqueue(producer.queue, data, sizeof data, NULL, NULL, NULL, NULL),
                   MRT_FAILED_PRECONDITION);
  expect_message_contains("queue manager: its session was destroyed");
  mrt_output_queue *y = NULL;
  assert_int_equal(mrt_queue_manager_output_queue(queues, "y", &y), MRT_FAILED_PRECONDITION);
  expect_message_contains("its session was destroyed");
  assert_int_equal(mrt_queue_manager_flush_all(queues), MRT_FAILED_PRECONDITION);
  assert_int_equal(mrt_input_queue_reset(producer.queue), MRT_FAILED_PRECONDITION);
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  assert_int_equal(mrt_input_queue_info(producer.queue, &info), MRT_OK);
  assert_string_equal(info.name, "x");
  assert_false(info.connected);
  mrt_queue_manager_destroy(queues);
  /* Every entry's user data freed exactly once: the refused one at once, queued ones by now. */
  assert_int_equal(producer.frees, producer.accepted + 1);
  mrt_model_destroy(model);
}

static void destroying_the_manager_first_lets_runs_go_on(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = test_bound_session(model, NULL);
  mrt_queue_manager *first = NULL;
  assert_int_equal(mrt_session_create_queue_manager(session, NULL, &first), MRT_OK);
  mrt_queue_manager_destroy(first);
  /* Its queues are disconnected: the run gets zeros instead of waiting. */
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);

  /* A new manager feeds the session again. */
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  mrt_queue_manager *second = add_one_queues(session, NULL, &x, &y);
  float in[ADD_ONE_N];
  for (int i = 0; i < ADD_ONE_N; ++i) in[i] = (float)i * 0.25f;
  serve_one(session, x, y, in);

  /* A third replaces the second, whose handle stays valid but refuses calls. */
  mrt_input_queue *old_x = x;
  mrt_queue_manager *third = add_one_queues(session, NULL, &x, &y);
  assert_int_equal(mrt_input_queue_enqueue(old_x, in, sizeof in, NULL, NULL, NULL, NULL), MRT_FAILED_PRECONDITION);
  expect_message_contains("queue manager: its session made a newer queue manager");
  in[0] = 99.0f;
  serve_one(session, x, y, in);
  mrt_session_destroy(session);
  mrt_queue_manager_destroy(second);
  mrt_queue_manager_destroy(third);
  mrt_model_destroy(model);
}

static int g_freed;
static void count_free(void *user_data) {
  (void)user_data;
  ++g_freed;
}

static void bad_arguments(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = test_bound_session(model, NULL);
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.timeout_user_data_free = count_free;
  mrt_queue_manager *queues = NULL;
  g_freed = 0;
  assert_int_equal(mrt_session_create_queue_manager(NULL, &config, &queues), MRT_INVALID_ARGUMENT);
  expect_message_contains("session must not be NULL");
  assert_int_equal(g_freed, 1); /* freed although creation failed */
  config.ring_size_multiplier = 0;
  assert_int_equal(mrt_session_create_queue_manager(session, &config, &queues), MRT_INVALID_ARGUMENT);
  expect_message_contains("config->ring_size_multiplier must be at least 1, got 0");
  assert_int_equal(g_freed, 2);
  assert_null(queues);
  assert_int_equal(mrt_session_create_queue_manager(session, NULL, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("out must not be NULL");

  assert_int_equal(mrt_session_create_queue_manager(session, NULL, &queues), MRT_OK);
  mrt_input_queue *x = NULL;
  assert_int_equal(mrt_queue_manager_input_queue(queues, "nope", &x), MRT_NOT_FOUND);
  expect_message_contains("nope");
  float buffer[ADD_ONE_N];
  assert_int_equal(mrt_queue_manager_transfer(queues, "x", buffer), MRT_FAILED_PRECONDITION);
  expect_message_contains("belongs to a session");
  assert_int_equal(mrt_queue_manager_input_queue(queues, "x", &x), MRT_OK);
  assert_int_equal(mrt_input_queue_enqueue(x, buffer, 6, NULL, NULL, NULL, NULL), MRT_INVALID_ARGUMENT);
  mrt_queue_manager_destroy(queues);
  mrt_queue_manager_destroy(NULL);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

/* The user data of a locked entry (two-phase enqueue) is freed exactly
 * once: a reload drops the entry and the producer's next lock frees it;
 * after the session is destroyed, complete is refused and destroying the
 * manager frees it. */
static void a_locked_entry_is_freed_once_after_reload_or_the_session(void **state) {
  (void)state;
  g_freed = 0;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = test_bound_session(model, NULL);
  mrt_queue_manager *queues = NULL;
  assert_int_equal(mrt_session_create_queue_manager(session, NULL, &queues), MRT_OK);
  mrt_input_queue *x = NULL;
  assert_int_equal(mrt_queue_manager_input_queue(queues, "x", &x), MRT_OK);
  mrt_input_queue_entry *entry = NULL;
  assert_int_equal(mrt_input_queue_enqueue_lock(x, &entry), MRT_OK);
  entry->user_data_free = count_free;
  assert_int_equal(mrt_session_reload(session), MRT_OK);
  assert_int_equal(g_freed, 0); /* the session resets the queue: freed at the producer's next call */
  assert_int_equal(mrt_input_queue_enqueue_lock(x, &entry), MRT_OK);
  assert_int_equal(g_freed, 1);
  assert_null(entry->user_data_free); /* a fresh entry */

  entry->user_data_free = count_free;
  mrt_session_destroy(session);
  assert_int_equal(mrt_input_queue_enqueue_complete(x), MRT_FAILED_PRECONDITION);
  expect_message_contains("queue manager: its session was destroyed");
  assert_int_equal(g_freed, 1);
  mrt_queue_manager_destroy(queues);
  assert_int_equal(g_freed, 2);
  mrt_model_destroy(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add_one_requests_through_the_queues),
      cmocka_unit_test(mlp_requests_through_the_queues),
      cmocka_unit_test(timeout_callback_flushes_an_empty_input),
      cmocka_unit_test(stop_wakes_a_run_waiting_for_input_and_reload_resets),
      cmocka_unit_test(destroying_the_session_first_detaches_the_manager),
      cmocka_unit_test(destroying_the_manager_first_lets_runs_go_on),
      cmocka_unit_test(bad_arguments),
      cmocka_unit_test(a_locked_entry_is_freed_once_after_reload_or_the_session),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
