/* flush_select_callback (the seeds' flush_callback with its inputs and
 * outputs) through the C API on mrt-gen's add_one (MRT_TEST_RUNNER_MODELS):
 * the queues it names are the ones padded after a timeout, a wrong choice
 * is logged and every queue padded instead, wrong arguments to
 * mrt_flush_selection_add are refused, and it cannot be set together
 * with flush_callback. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

enum { ADD_ONE_N = 16 };
#define MS 1000000LL /* nanoseconds */

typedef enum choice { BOTH_QUEUES, ONLY_OUTPUT, UNKNOWN_INPUT } choice;

typedef struct flush_log {
  pthread_mutex_t mutex;
  choice choice;
  int calls;
  char tensor_id[32];
  int frees;
  mrt_status added; /* the good adds' statuses, or-ed */
  mrt_status bad_adds[3]; /* what mrt_flush_selection_add said to wrong arguments */
  char bad_direction_message[256];
} flush_log;

static void select_queues(const char *tensor_id, mrt_flush_selection *selection, void *user_data) {
  flush_log *log = user_data;
  /* Wrong arguments are refused and add nothing. */
  const mrt_status bad_adds[3] = {mrt_flush_selection_add(NULL, MRT_TENSOR_INPUT, "x"),
                                  mrt_flush_selection_add(selection, MRT_TENSOR_INPUT, NULL),
                                  mrt_flush_selection_add(selection, 7, "x")};
  char bad_direction_message[256] = "";
  strncpy(bad_direction_message, mrt_last_error_message(), sizeof bad_direction_message - 1);
  mrt_status added = MRT_OK;
  switch (log->choice) {
    case BOTH_QUEUES:
      added |= mrt_flush_selection_add(selection, MRT_TENSOR_INPUT, "x");
      added |= mrt_flush_selection_add(selection, MRT_TENSOR_OUTPUT, "y");
      break;
    case ONLY_OUTPUT:
      added |= mrt_flush_selection_add(selection, MRT_TENSOR_OUTPUT, "y");
      break;
    case UNKNOWN_INPUT:
      added |= mrt_flush_selection_add(selection, MRT_TENSOR_INPUT, "nope");
      break;
  }
  pthread_mutex_lock(&log->mutex);
  log->added |= added;
  memcpy(log->bad_adds, bad_adds, sizeof bad_adds);
  memcpy(log->bad_direction_message, bad_direction_message, sizeof bad_direction_message);
  ++log->calls;
  strncpy(log->tensor_id, tensor_id, sizeof log->tensor_id - 1);
  pthread_mutex_unlock(&log->mutex);
}

static void count_free(void *user_data) { ++((flush_log *)user_data)->frees; }

static int calls_of(flush_log *log) {
  pthread_mutex_lock(&log->mutex);
  const int calls = log->calls;
  pthread_mutex_unlock(&log->mutex);
  return calls;
}

static void sleep_ms(long ms) {
  const struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

/* A runner on add_one that times out every 2 ms while idle, asking `log`. */
static mrt_model_runner *runner_choosing(flush_log *log) {
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.timeout_ns = 2 * MS;
  config.ring_buffer_size_multiplier = 1;
  config.flush_select_callback = select_queues;
  config.flush_user_data = log;
  config.flush_user_data_free = count_free;
  return test_make_runner("add_one", &config);
}

static void wait_for_calls(flush_log *log, int calls) {
  for (int waited = 0; calls_of(log) < calls; ++waited) {
    if (waited > 10000) fail_msg("flush_select_callback was called %d times in 10 s", calls_of(log));
    sleep_ms(1);
  }
}

/* y = x + 1 through `runner`, however many timeouts came before. */
static void expect_add_one(mrt_model_runner *runner) {
  float x[ADD_ONE_N], y[ADD_ONE_N];
  unsigned seed = 11;
  test_fill_random(x, ADD_ONE_N, &seed, -4, 4);
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  if (mrt_model_runner_execute(runner, &in, 1, &out, 1, 0) != MRT_OK) fail_msg("%s", mrt_last_error_message());
  for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(y[i], x[i] + 1.0f, 0);
}

static void naming_every_queue_lets_the_device_go_on(void **state) {
  (void)state;
  flush_log log = {PTHREAD_MUTEX_INITIALIZER, BOTH_QUEUES, 0, "", 0, MRT_OK, {0}, ""};
  mrt_model_runner *runner = runner_choosing(&log);
  wait_for_calls(&log, 3); /* each padded x and y: the device ran and waits again */
  expect_add_one(runner);
  mrt_model_runner_destroy(runner);
  assert_string_equal(log.tensor_id, "x"); /* what the device waited for */
  assert_int_equal(log.frees, 1);
  assert_int_equal(log.added, MRT_OK);
  for (int i = 0; i < 3; ++i) assert_int_equal(log.bad_adds[i], MRT_INVALID_ARGUMENT);
  test_expect_contains(log.bad_direction_message,
                       "direction 7 is neither MRT_TENSOR_INPUT (0) nor MRT_TENSOR_OUTPUT (1)");
}

/* Only y padded: the device, still waiting for x, never runs on padding,
 * so a real request's x makes it run once, writing into the padded output
 * entry, and the request's own output entry is never reached. With every
 * queue padded (the test above) the same request completes. */
static void only_the_named_queues_are_padded(void **state) {
  (void)state;
  flush_log log = {PTHREAD_MUTEX_INITIALIZER, ONLY_OUTPUT, 0, "", 0, MRT_OK, {0}, ""};
  mrt_model_runner *runner = runner_choosing(&log);
  wait_for_calls(&log, 1);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  mrt_future *future = NULL;
  assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &future), MRT_OK);
  assert_int_equal(mrt_future_wait(future, 200 * MS), MRT_DEADLINE_EXCEEDED);
  mrt_model_runner_destroy(runner);
  assert_true(mrt_future_is_ready(future));
  mrt_future_destroy(future);
  assert_int_equal(log.frees, 1);
}

typedef struct error_log {
  pthread_mutex_t mutex;
  char text[512];
} error_log;

static void keep_errors(mrt_log_level level, const char *message, void *user_data) {
  error_log *errors = user_data;
  if (level != MRT_LOG_ERR) return;
  pthread_mutex_lock(&errors->mutex);
  if (errors->text[0] == '\0') strncpy(errors->text, message, sizeof errors->text - 1);
  pthread_mutex_unlock(&errors->mutex);
}

/* A choice the runner cannot follow is logged, naming what is wrong, and
 * every queue is padded: the runner serves on. */
static void expect_wrong_choice_logged(choice wrong, const char *needle) {
  error_log errors = {PTHREAD_MUTEX_INITIALIZER, ""};
  const mrt_log_level level = mrt_get_log_level();
  if (level < MRT_LOG_ERR) assert_int_equal(mrt_set_log_level(MRT_LOG_ERR), MRT_OK);
  assert_int_equal(mrt_set_log_callback(keep_errors, &errors, NULL), MRT_OK);
  flush_log log = {PTHREAD_MUTEX_INITIALIZER, wrong, 0, "", 0, MRT_OK, {0}, ""};
  mrt_model_runner *runner = runner_choosing(&log);
  wait_for_calls(&log, 3);
  expect_add_one(runner);
  mrt_model_runner_destroy(runner);
  assert_int_equal(mrt_set_log_callback(NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_set_log_level(level), MRT_OK);
  test_expect_contains(errors.text, needle);
  test_expect_contains(errors.text, "flushing every queue");
}

static void an_unknown_queue_is_logged_and_every_queue_padded(void **state) {
  (void)state;
  expect_wrong_choice_logged(UNKNOWN_INPUT, "no input queue named 'nope'");
}

static void flush_callback_and_flush_select_callback_exclude_each_other(void **state) {
  (void)state;
  flush_log log = {PTHREAD_MUTEX_INITIALIZER, BOTH_QUEUES, 0, "", 0, MRT_OK, {0}, ""};
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.flush_select_callback = select_queues;
  config.flush_callback = (mrt_flush_fn)(void (*)(void))select_queues; /* any non-NULL function */
  config.flush_user_data = &log;
  config.flush_user_data_free = count_free;
  const char *paths[] = {test_model_path("MRT_TEST_RUNNER_MODELS", "add_one")};
  mrt_model_runner *runner = NULL;
  assert_int_equal(mrt_model_runner_create_from_files(paths, 1, &config, &runner), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "config->flush_callback and config->flush_select_callback");
  assert_null(runner);
  assert_int_equal(log.frees, 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(naming_every_queue_lets_the_device_go_on),
      cmocka_unit_test(only_the_named_queues_are_padded),
      cmocka_unit_test(an_unknown_queue_is_logged_and_every_queue_padded),
      cmocka_unit_test(flush_callback_and_flush_select_callback_exclude_each_other),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
