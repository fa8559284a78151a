/* Regression tests of the API defects of issue 18 (item 4), each from a
 * reproducer of ../shared/repro: the call must now fail cleanly, with the
 * status the header promises and a message naming the bad value, and leave
 * the library usable. Models from the runner_models fixture
 * (MRT_TEST_RUNNER_MODELS) and tests/data/repro (MRT_TEST_REPRO_DIR). Meant
 * to run under the asan preset, where the old behaviour was a
 * use-after-free or an out-of-bounds read. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

enum { ADD_ONE_N = 16 };
#define WAIT_NS (10000 * 1000000LL) /* a request not done by then hangs */

static void expect_last_error(mrt_status got, mrt_status expected, const char *needle) {
  if (got != expected) {
    fail_msg("got %s, expected %s (%s)", mrt_status_string(got), mrt_status_string(expected),
             mrt_last_error_message());
  }
  test_expect_contains(mrt_last_error_message(), needle);
}

/* One add_one request on x0 + k; checks y = x + 1. */
static mrt_status add_one(mrt_model_runner *runner, float x0) {
  float x[ADD_ONE_N], y[ADD_ONE_N];
  for (int k = 0; k < ADD_ONE_N; ++k) x[k] = x0 + (float)k;
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  const mrt_status status = mrt_model_runner_execute(runner, &in, 1, &out, 1, 0);
  if (status == MRT_OK) {
    for (int k = 0; k < ADD_ONE_N; ++k) assert_float_equal(y[k], x[k] + 1.0f, 0);
  }
  return status;
}

/* ---- 1. validate_io_params=false: a refused request leaves nothing queued ---- */

static void unvalidated_refused_request_leaves_nothing_behind(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.validate_io_params = false;
  mrt_model_runner *runner = test_make_runner("add_one", &config);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, short_out = {"y", y, 32}, short_in = {"x", x, 32};
  mrt_tensor_view out = {"y", y, sizeof y};
  /* The input would have been queued before the output was refused. */
  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &short_out, 1, 0), MRT_INVALID_ARGUMENT,
                    "output queue 'y': 32 bytes is not a positive multiple of the sample size (64 bytes");
  expect_last_error(mrt_model_runner_execute(runner, &short_in, 1, &out, 1, 0), MRT_INVALID_ARGUMENT,
                    "input queue 'x': 32 bytes");
  mrt_future *future = NULL;
  expect_last_error(mrt_model_runner_execute_async(runner, &in, 1, &short_out, 1, 0, &future),
                    MRT_INVALID_ARGUMENT, "32 bytes");
  assert_null(future);
  /* Each good request gets its own input back, plus one. */
  for (int i = 0; i < 3; ++i) assert_int_equal(add_one(runner, 100.0f * (float)i), MRT_OK);
  mrt_model_runner_destroy(runner);
}

/* ---- 2. mrt_session_set_remote_buffer_data checks the size before copying ---- */

static void remote_buffer_size_is_checked_before_copying(void **state) {
  (void)state;
  const char *paths[] = {test_model_path("MRT_TEST_RUNNER_MODELS", "remote_buffer_b2")};
  mrt_model *model = NULL;
  assert_int_equal(mrt_model_load(paths, 1, &model), MRT_OK);
  mrt_session *session = NULL;
  assert_int_equal(mrt_session_create(model, NULL, &session), MRT_OK);
  float *w = malloc(32); /* exactly the anchor: ASan catches any read past it */
  assert_non_null(w);
  memset(w, 0, 32);
  const uint64_t sizes[] = {64, 0x10000000ULL, UINT64_MAX, 12};
  const char *given[] = {"got 64", "got 268435456", "got 18446744073709551615", "got 12"};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
    expect_last_error(mrt_session_set_remote_buffer_data(session, "w", w, sizes[i]), MRT_INVALID_ARGUMENT,
                      "anchor 'w' takes 32 bytes");
    test_expect_contains(mrt_last_error_message(), given[i]);
  }
  assert_int_equal(mrt_session_set_remote_buffer_data(session, "w", w, 32), MRT_OK);
  free(w);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

/* ---- 3. two simulated errors before a run, with auto_reset ---- */

static void two_errors_before_a_run_fail_one_request_and_auto_reset_recovers(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.auto_reset = true;
  mrt_model_runner *runner = test_make_runner("add_one", &config);
  assert_int_equal(mrt_model_runner_insert_simulated_error(runner, MRT_SIMULATED_TILE_EXCEPTION, "Add", 0), MRT_OK);
  expect_last_error(add_one(runner, 1.0f), MRT_DEVICE_ERROR, "TILE_EXCEPTION");
  assert_int_equal(add_one(runner, 2.0f), MRT_OK);
  /* Two at the same step: the last one counts. */
  assert_int_equal(mrt_model_runner_insert_simulated_error(runner, MRT_SIMULATED_TILE_EXCEPTION, "Add", 0), MRT_OK);
  assert_int_equal(mrt_model_runner_insert_simulated_error(runner, MRT_SIMULATED_MEMORY_PARITY, "Add", 0), MRT_OK);
  expect_last_error(add_one(runner, 3.0f), MRT_DEVICE_ERROR, "MEMORY_PARITY");
  if (strstr(mrt_last_error_message(), "auto_reset is off") != NULL) fail_msg("%s", mrt_last_error_message());
  for (int i = 4; i <= 6; ++i) {
    const mrt_status status = add_one(runner, (float)i);
    if (status != MRT_OK) fail_msg("request %d: %s", i, mrt_last_error_message());
  }
  mrt_model_runner_destroy(runner);
}

/* ---- 4. a failing mrt_* call from inside the log callback at DEBUG ---- */

typedef struct inner_calls {
  int calls;
  mrt_status replace_status, level_status;
  char replace_message[512];
} inner_calls;

static void failing_calls_from_the_callback(mrt_log_level level, const char *message, void *user_data) {
  (void)level;
  (void)message;
  inner_calls *inner = user_data;
  if (inner->calls++ > 0) return;
  inner->replace_status = mrt_set_log_callback(NULL, NULL, NULL);
  snprintf(inner->replace_message, sizeof inner->replace_message, "%s", mrt_last_error_message());
  inner->level_status = mrt_set_log_level(99);
}

static void failing_call_inside_the_log_callback_returns(void **state) {
  (void)state;
  inner_calls inner = {0, MRT_OK, MRT_OK, ""};
  assert_int_equal(mrt_set_log_level(MRT_LOG_DEBUG), MRT_OK);
  assert_int_equal(mrt_set_log_callback(failing_calls_from_the_callback, &inner, NULL), MRT_OK);
  alarm(20); /* a deadlock ends the test */
  assert_int_equal(mrt_log_message(MRT_LOG_ERR, "hello"), MRT_OK);
  alarm(0);
  /* The inner calls' own DEBUG messages were dropped, not delivered. */
  assert_int_equal(inner.calls, 1);
  assert_int_equal(inner.replace_status, MRT_FAILED_PRECONDITION);
  test_expect_contains(inner.replace_message, "from inside the log callback");
  assert_int_equal(inner.level_status, MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_set_log_callback(NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_set_log_level(MRT_LOG_WARN), MRT_OK);
}

/* ---- 5. a FIFO or device is refused without blocking ---- */

static void non_regular_files_are_refused_without_blocking(void **state) {
  (void)state;
  const char *tmp = getenv("TMPDIR");
  char dir[1024], fifo[1100];
  snprintf(dir, sizeof dir, "%s/mrt_fifo_XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(dir));
  snprintf(fifo, sizeof fifo, "%s/model.popef", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  mrt_model *model = NULL;
  const char *fifo_path[] = {fifo};
  alarm(20); /* open() without O_NONBLOCK waits for a writer forever */
  expect_last_error(mrt_model_load(fifo_path, 1, &model), MRT_INVALID_ARGUMENT, "is a FIFO, not a PopEF file");
  test_expect_contains(mrt_last_error_message(), fifo);
  expect_last_error(mrt_model_load_named(fifo_path, 1, "add_one", &model), MRT_INVALID_ARGUMENT, "is a FIFO");
  alarm(0);
  assert_null(model);
  const char *device[] = {"/dev/null"};
  expect_last_error(mrt_model_load(device, 1, &model), MRT_INVALID_ARGUMENT,
                    "'/dev/null': is a character device, not a PopEF file");
  const char *directory[] = {dir};
  expect_last_error(mrt_model_load(directory, 1, &model), MRT_INVALID_ARGUMENT, "is a directory");
  unlink(fifo);
  rmdir(dir);
}

/* ---- 6. one model's blobs twice in a file ---- */

static void a_model_given_twice_is_corrupt_for_load_and_load_named(void **state) {
  (void)state;
  const char *paths[] = {test_model_path("MRT_TEST_REPRO_DIR", "add_one_twice")};
  mrt_model *model = NULL;
  expect_last_error(mrt_model_load(paths, 1, &model), MRT_CORRUPT_MODEL, "second Metadata for executable 'add_one'");
  test_expect_contains(mrt_last_error_message(), "(first in ");
  char load_message[1024];
  snprintf(load_message, sizeof load_message, "%s", mrt_last_error_message());
  expect_last_error(mrt_model_load_named(paths, 1, "add_one", &model), MRT_CORRUPT_MODEL,
                    "second Metadata for executable 'add_one'");
  /* The same blobs named: only the function name differs. */
  test_expect_contains(load_message, strchr(mrt_last_error_message(), ':'));
  assert_null(model);
}

/* ---- 7. time_trace: cur -1 is the last trace, below -1 is refused ---- */

static void time_trace_takes_minus_one_or_an_index(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  mrt_request_times times = {0};
  times.struct_size = sizeof times;
  expect_last_error(mrt_model_runner_time_trace(runner, 0, -2, &times), MRT_INVALID_ARGUMENT, "trace -2");
  expect_last_error(mrt_model_runner_time_trace(runner, 0, -1, &times), MRT_NOT_FOUND, "no request trace yet");
  assert_int_equal(add_one(runner, 0.0f), MRT_OK);
  assert_int_equal(mrt_model_runner_time_trace(runner, 0, -1, &times), MRT_OK);
  assert_true(times.request_us > 0);
  assert_int_equal(mrt_model_runner_time_trace(runner, 0, 0, &times), MRT_OK);
  expect_last_error(mrt_model_runner_time_trace(runner, 0, INT32_MIN, &times), MRT_INVALID_ARGUMENT,
                    "-1 (the last) or an index from 0");
  expect_last_error(mrt_model_runner_time_trace(runner, 0, 1, &times), MRT_INVALID_ARGUMENT, "1 traces are kept");
  mrt_model_runner_destroy(runner);
}

/* ---- 8. a misspelt tensor name is MRT_NOT_FOUND ---- */

static void misnamed_tensors_are_not_found(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  mrt_tensor_view misnamed_in = {"z", x, sizeof x}, misnamed_out = {"w", y, sizeof y};
  expect_last_error(mrt_model_runner_execute(runner, &misnamed_in, 1, &out, 1, 0), MRT_NOT_FOUND,
                    "unknown input 'z': execute inputs are x (missing: x)");
  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &misnamed_out, 1, 0), MRT_NOT_FOUND,
                    "unknown output 'w': execute outputs are y (missing: y)");
  mrt_future *future = NULL;
  expect_last_error(mrt_model_runner_execute_async(runner, &misnamed_in, 1, &out, 1, 0, &future), MRT_NOT_FOUND,
                    "unknown input 'z'");
  assert_null(future);
  mrt_tensor_memory *memory = NULL;
  expect_last_error(mrt_model_runner_execute_alloc(runner, &misnamed_in, 1, 0, &memory), MRT_NOT_FOUND,
                    "unknown input 'z'");
  assert_null(memory);
  /* Too few tensors, none unknown: a wrong count. */
  expect_last_error(mrt_model_runner_execute(runner, NULL, 0, &out, 1, 0), MRT_INVALID_ARGUMENT,
                    "missing input 'x'");
  assert_int_equal(add_one(runner, 0.0f), MRT_OK);
  mrt_model_runner_destroy(runner);
}

/* ---- 9. ring_size_multiplier INT64_MAX (and a runner's UINT32_MAX) ---- */

static void huge_ring_size_multiplier_is_refused_before_allocating(void **state) {
  (void)state;
  const char *paths[] = {test_model_path("MRT_TEST_RUNNER_MODELS", "add_one")};
  mrt_model *model = NULL;
  assert_int_equal(mrt_model_load(paths, 1, &model), MRT_OK);
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.ring_size_multiplier = INT64_MAX;
  mrt_queue_manager *manager = NULL;
  expect_last_error(mrt_queue_manager_create(model, &config, &manager), MRT_INVALID_ARGUMENT,
                    "ring_size_multiplier 9223372036854775807 x 1 samples per transfer");
  assert_null(manager);
  mrt_session *session = NULL;
  assert_int_equal(mrt_session_create(model, NULL, &session), MRT_OK);
  expect_last_error(mrt_session_create_queue_manager(session, &config, &manager), MRT_INVALID_ARGUMENT,
                    "ring_size_multiplier 9223372036854775807");
  assert_null(manager);
  mrt_session_destroy(session);
  mrt_model_destroy(model);

  /* No overflow, but rings of 2^32 entries: refused before allocating. */
  mrt_set_host_memory_limit(1ULL << 30);
  mrt_model_runner_config runner_config;
  mrt_model_runner_config_init(&runner_config);
  runner_config.ring_buffer_size_multiplier = UINT32_MAX;
  mrt_model_runner *runner = NULL;
  expect_last_error(mrt_model_runner_create_from_files(paths, 1, &runner_config, &runner), MRT_RESOURCE_EXHAUSTED,
                    "(4294967295 ring entries) needs");
  assert_null(runner);
  mrt_set_host_memory_limit(0);
}

/* ---- 10. an empty step name ---- */

static void empty_step_name_is_refused(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  expect_last_error(mrt_model_runner_insert_simulated_error(runner, MRT_SIMULATED_TILE_EXCEPTION, "", 0),
                    MRT_INVALID_ARGUMENT, "step name");
  assert_int_equal(add_one(runner, 0.0f), MRT_OK); /* nothing was armed */
  mrt_model_runner_destroy(runner);
}

/* ---- 11. a fault fails only its run's requests ---- */

/* Holds the device thread in its device-error warning (before it resets
 * the device) until the test has queued its second request, so that request
 * is certainly queued, and untouched, when the fault is handled. */
typedef struct fault_gate {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int second_queued;
  int faults_seen;
} fault_gate;

static void hold_at_the_fault(mrt_log_level level, const char *message, void *user_data) {
  (void)level;
  fault_gate *gate = user_data;
  if (strstr(message, "resetting the device") == NULL) return;
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 10;
  pthread_mutex_lock(&gate->mutex);
  ++gate->faults_seen;
  while (!gate->second_queued) {
    if (pthread_cond_timedwait(&gate->cond, &gate->mutex, &deadline) != 0) break;
  }
  pthread_mutex_unlock(&gate->mutex);
}

static void a_fault_fails_only_the_requests_of_its_run(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.auto_reset = true;
  mrt_model_runner *runner = test_make_runner("add_one", &config);
  fault_gate gate = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
  assert_int_equal(mrt_set_log_level(MRT_LOG_WARN), MRT_OK);
  assert_int_equal(mrt_set_log_callback(hold_at_the_fault, &gate, NULL), MRT_OK);

  float xa[ADD_ONE_N], ya[ADD_ONE_N], xb[ADD_ONE_N], yb[ADD_ONE_N];
  for (int k = 0; k < ADD_ONE_N; ++k) {
    xa[k] = (float)k;
    xb[k] = 50.0f + (float)k;
  }
  mrt_tensor_view in_a = {"x", xa, sizeof xa}, out_a = {"y", ya, sizeof ya};
  mrt_tensor_view in_b = {"x", xb, sizeof xb}, out_b = {"y", yb, sizeof yb};
  assert_int_equal(mrt_model_runner_insert_simulated_error(runner, MRT_SIMULATED_TILE_EXCEPTION, "Add", 0), MRT_OK);
  mrt_future *a = NULL, *b = NULL;
  assert_int_equal(mrt_model_runner_execute_async(runner, &in_a, 1, &out_a, 1, 0, &a), MRT_OK);
  assert_int_equal(mrt_model_runner_execute_async(runner, &in_b, 1, &out_b, 1, 0, &b), MRT_OK);
  pthread_mutex_lock(&gate.mutex);
  gate.second_queued = 1;
  pthread_cond_broadcast(&gate.cond);
  pthread_mutex_unlock(&gate.mutex);

  assert_int_equal(mrt_future_wait(a, WAIT_NS), MRT_DEVICE_ERROR);
  test_expect_contains(mrt_future_error_message(a), "TILE_EXCEPTION");
  const mrt_status status_b = mrt_future_wait(b, WAIT_NS);
  if (status_b != MRT_OK) fail_msg("request behind the fault: %s", mrt_future_error_message(b));
  for (int k = 0; k < ADD_ONE_N; ++k) assert_float_equal(yb[k], xb[k] + 1.0f, 0);
  assert_int_equal(mrt_set_log_callback(NULL, NULL, NULL), MRT_OK);
  assert_int_equal(gate.faults_seen, 1);
  assert_int_equal(add_one(runner, 7.0f), MRT_OK);
  mrt_future_destroy(a);
  mrt_future_destroy(b);
  mrt_model_runner_destroy(runner);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(unvalidated_refused_request_leaves_nothing_behind),
      cmocka_unit_test(remote_buffer_size_is_checked_before_copying),
      cmocka_unit_test(two_errors_before_a_run_fail_one_request_and_auto_reset_recovers),
      cmocka_unit_test(failing_call_inside_the_log_callback_returns),
      cmocka_unit_test(non_regular_files_are_refused_without_blocking),
      cmocka_unit_test(a_model_given_twice_is_corrupt_for_load_and_load_named),
      cmocka_unit_test(time_trace_takes_minus_one_or_an_index),
      cmocka_unit_test(misnamed_tensors_are_not_found),
      cmocka_unit_test(huge_ring_size_multiplier_is_refused_before_allocating),
      cmocka_unit_test(empty_step_name_is_refused),
      cmocka_unit_test(a_fault_fails_only_the_requests_of_its_run),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
