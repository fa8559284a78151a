/* A model whose programs never complete a request must not hang the runtime
 * (issue 18, item 3). spin_forever_add_one.popef (tests/data/repro, from
 * ../shared/repro) runs Repeat(2^62, Add) in Main before its first stream
 * copy. With timeout_ns set, its requests end with MRT_DEADLINE_EXCEEDED and
 * a message saying why, synchronous or not; destroying the runner returns,
 * whatever its device is running. Nothing here is timed: a hang shows as a
 * test that does not finish (ctest's timeout). Meant to run under the asan
 * and tsan presets. */
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

enum { ADD_ONE_N = 16 };
#define MS 1000000LL
/* What a request stopped by the watchdog says (timeout_ns 100 ms: 1 s). */
#define HANG_MESSAGE "ran for 1000 ms without moving any data of the pending requests"

static mrt_model *load_spin_forever(void) {
  const char *paths[] = {test_model_path("MRT_TEST_REPRO_DIR", "spin_forever_add_one")};
  mrt_model *model = NULL;
  if (mrt_model_load(paths, 1, &model) != MRT_OK) fail_msg("mrt_model_load: %s", mrt_last_error_message());
  return model;
}

static mrt_model_runner *make_runner(const mrt_model *model, const mrt_model_runner_config *config) {
  mrt_model_runner *runner = NULL;
  if (mrt_model_runner_create(model, config, &runner) != MRT_OK) {
    fail_msg("mrt_model_runner_create: %s", mrt_last_error_message());
  }
  return runner;
}

/* Gives the device time to start the request's run, which never ends (so
 * the wait always times out): what follows then meets a spinning device. */
static void let_the_run_start(mrt_future *future) {
  assert_int_equal(mrt_future_wait(future, 200 * MS), MRT_DEADLINE_EXCEEDED);
  assert_false(mrt_future_is_ready(future));
}

/* Waits for the request without a limit, then checks how it ended. */
static void expect_request_failed(mrt_future *future, mrt_status expected, const char *needle) {
  mrt_status got = mrt_future_wait(future, -1);
  assert_true(mrt_future_is_ready(future));
  assert_int_equal(mrt_future_status(future, &got), MRT_OK);
  if (got != expected) {
    fail_msg("request: got %s, expected %s (%s)", mrt_status_string(got), mrt_status_string(expected),
             mrt_future_error_message(future));
  }
  test_expect_contains(mrt_future_error_message(future), needle);
}

static void expect_last_error(mrt_status got, mrt_status expected, const char *needle) {
  if (got != expected) {
    fail_msg("got %s, expected %s (%s)", mrt_status_string(got), mrt_status_string(expected),
             mrt_last_error_message());
  }
  test_expect_contains(mrt_last_error_message(), needle);
}

/* With auto_reset the replica is reset after each hang and serves on: a
 * synchronous request (run on the caller's thread) and then an asynchronous
 * one (on the device thread) both end with DEADLINE_EXCEEDED. */
static void spinning_requests_end_with_deadline_exceeded(void **state) {
  (void)state;
  mrt_model *model = load_spin_forever();
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.timeout_ns = 100 * MS;
  config.auto_reset = true;
  mrt_model_runner *runner = make_runner(model, &config);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};

  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_DEADLINE_EXCEEDED, HANG_MESSAGE);
  test_expect_contains(mrt_last_error_message(), "replica 0");
  test_expect_contains(mrt_last_error_message(), "timeout_ns, 100 ms");

  mrt_future *future = NULL;
  assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &future), MRT_OK);
  expect_request_failed(future, MRT_DEADLINE_EXCEEDED, HANG_MESSAGE);
  mrt_future_destroy(future);

  mrt_model_runner_destroy(runner);
  mrt_model_destroy(model);
}

/* Without auto_reset a hang puts the replica out of service, as a device
 * error does: later requests are refused at once, saying why. */
static void without_auto_reset_a_hang_takes_the_replica_out_of_service(void **state) {
  (void)state;
  mrt_model *model = load_spin_forever();
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.timeout_ns = 100 * MS;
  mrt_model_runner *runner = make_runner(model, &config);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};

  mrt_future *future = NULL;
  assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &future), MRT_OK);
  expect_request_failed(future, MRT_DEADLINE_EXCEEDED, HANG_MESSAGE);
  mrt_future_destroy(future);

  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_DEVICE_ERROR, "out of service");
  test_expect_contains(mrt_last_error_message(), HANG_MESSAGE);
  test_expect_contains(mrt_last_error_message(), "auto_reset is off");

  mrt_model_runner_destroy(runner);
  mrt_model_destroy(model);
}

/* ../shared/repro/r_spin.c: the default config, a request spinning on the
 * device thread, and the runner destroyed under it. */
static void destroy_returns_while_a_request_spins(void **state) {
  (void)state;
  mrt_model *model = load_spin_forever();
  mrt_model_runner *runner = make_runner(model, NULL);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  mrt_future *future = NULL;
  assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &future), MRT_OK);
  let_the_run_start(future);
  mrt_model_runner_destroy(runner);
  expect_request_failed(future, MRT_CANCELLED, "destroyed");
  mrt_future_destroy(future);
  mrt_model_destroy(model);
}

/* With run_save_programs destruction lets the Main run in progress finish
 * before Save, but not for ever, even when no timeout is set. */
static void destroy_with_run_save_programs_returns_while_a_request_spins(void **state) {
  (void)state;
  mrt_model *model = load_spin_forever();
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.run_save_programs = true;
  config.timeout_ns = MRT_FOREVER; /* requests wait for ever: only destruction is bounded */
  mrt_model_runner *runner = make_runner(model, &config);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  mrt_future *future = NULL;
  assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &future), MRT_OK);
  let_the_run_start(future);
  mrt_model_runner_destroy(runner);
  expect_request_failed(future, MRT_CANCELLED, "destroyed");
  mrt_future_destroy(future);
  mrt_model_destroy(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(spinning_requests_end_with_deadline_exceeded),
      cmocka_unit_test(without_auto_reset_a_hang_takes_the_replica_out_of_service),
      cmocka_unit_test(destroy_returns_while_a_request_spins),
      cmocka_unit_test(destroy_with_run_save_programs_returns_while_a_request_spins),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
