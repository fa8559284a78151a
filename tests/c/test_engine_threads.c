/* Engines across threads, deterministically: a run of add_one blocks in its
 * "x" stream callback until the test lets it go, so the test knows a run is
 * in progress. Meanwhile other calls fail at once as busy (also from inside
 * the callback, on the running thread), mrt_engine_stop() from another
 * thread ends the run with MRT_CANCELLED, and mrt_engine_destroy() during a
 * run stops it and waits. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

enum { SIZE = 16 };

typedef struct gate {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  bool entered;
  bool released;
  mrt_engine *engine;
  mrt_status inner_status; /* of a call made from inside the callback */
  char inner_message[256];
  float y[SIZE];
} gate;

static void gate_init(gate *g) {
  memset(g, 0, sizeof *g);
  pthread_mutex_init(&g->mutex, NULL);
  pthread_cond_init(&g->cond, NULL);
}

static void gate_destroy(gate *g) {
  pthread_cond_destroy(&g->cond);
  pthread_mutex_destroy(&g->mutex);
}

/* x: tries a call on its own engine, says it entered, waits for release. */
static void blocking_feed(void *data, uint64_t size, uint32_t replica, void *user_data) {
  (void)replica;
  gate *g = user_data;
  memset(data, 0, size);
  uint64_t cycles = 0;
  g->inner_status = mrt_engine_device_cycles(g->engine, 0, &cycles);
  snprintf(g->inner_message, sizeof g->inner_message, "%s", mrt_last_error_message());
  pthread_mutex_lock(&g->mutex);
  g->entered = true;
  pthread_cond_broadcast(&g->cond);
  while (!g->released) pthread_cond_wait(&g->cond, &g->mutex);
  pthread_mutex_unlock(&g->mutex);
}

static void take(void *data, uint64_t size, uint32_t replica, void *user_data) {
  (void)replica;
  memcpy(((gate *)user_data)->y, data, size);
}

static void wait_entered(gate *g) {
  pthread_mutex_lock(&g->mutex);
  while (!g->entered) pthread_cond_wait(&g->cond, &g->mutex);
  pthread_mutex_unlock(&g->mutex);
}

static void release(gate *g) {
  pthread_mutex_lock(&g->mutex);
  g->released = true;
  pthread_cond_broadcast(&g->cond);
  pthread_mutex_unlock(&g->mutex);
}

typedef struct run_args {
  mrt_engine *engine;
  mrt_status status;
  char message[512];
} run_args;

static void *run_main(void *arg) {
  run_args *a = arg;
  a->status = mrt_engine_run(a->engine, 0);
  snprintf(a->message, sizeof a->message, "%s", mrt_last_error_message());
  return NULL;
}

typedef struct loaded {
  mrt_model *model;
  mrt_executable *exe;
  mrt_device *device;
  mrt_engine *engine;
} loaded;

static loaded load_add_one(gate *g) {
  loaded l;
  l.model = test_load_model("MRT_TEST_ENGINE_MODELS", "add_one");
  assert_int_equal(mrt_model_get_executable(l.model, &l.exe), MRT_OK);
  l.device = test_small_device_for_model(l.model);
  assert_int_equal(mrt_engine_create(l.exe, NULL, &l.engine), MRT_OK);
  assert_int_equal(mrt_engine_load(l.engine, l.device), MRT_OK);
  g->engine = l.engine;
  assert_int_equal(mrt_engine_connect_stream(l.engine, "x", 0, blocking_feed, g, NULL), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream(l.engine, "y", 0, take, g, NULL), MRT_OK);
  return l;
}

static void free_loaded(loaded *l) {
  mrt_device_destroy(l->device);
  mrt_executable_destroy(l->exe);
  mrt_model_destroy(l->model);
}

static void test_busy_and_stop(void **state) {
  (void)state;
  gate g;
  gate_init(&g);
  loaded l = load_add_one(&g);
  run_args args = {l.engine, MRT_OK, ""};
  pthread_t runner;
  assert_int_equal(pthread_create(&runner, NULL, run_main, &args), 0);
  wait_entered(&g);

  /* The callback's own call on its engine was refused, not deadlocked. */
  assert_int_equal(g.inner_status, MRT_FAILED_PRECONDITION);
  test_expect_contains(g.inner_message, "engine is busy running program 0 on another thread");
  /* So are calls from this thread while the run waits. */
  assert_int_equal(mrt_engine_run(l.engine, 0), MRT_FAILED_PRECONDITION);
  test_expect_contains(mrt_last_error_message(), "engine is busy running program 0 on another thread");
  assert_int_equal(mrt_engine_load(l.engine, l.device), MRT_FAILED_PRECONDITION);
  test_expect_contains(mrt_last_error_message(), "engine is busy");
  assert_int_equal(mrt_engine_set_profiling(l.engine, true), MRT_FAILED_PRECONDITION);

  /* Stop is seen once the transfer ends: before the Add compute set. */
  assert_int_equal(mrt_engine_stop(l.engine), MRT_OK);
  release(&g);
  assert_int_equal(pthread_join(runner, NULL), 0);
  assert_int_equal(args.status, MRT_CANCELLED);
  test_expect_contains(args.message, "program 0 was stopped by mrt_engine_stop");

  /* Stopped means unloaded; a load makes it run again (now unblocked). */
  assert_int_equal(mrt_engine_run(l.engine, 0), MRT_FAILED_PRECONDITION);
  test_expect_contains(mrt_last_error_message(), "engine is not loaded: call mrt_engine_load");
  assert_int_equal(mrt_engine_load(l.engine, l.device), MRT_OK);
  assert_int_equal(mrt_engine_run(l.engine, 0), MRT_OK);
  for (int i = 0; i < SIZE; ++i) assert_float_equal(g.y[i], 1.0f, 0.0f);
  mrt_engine_destroy(l.engine);
  free_loaded(&l);
  gate_destroy(&g);
}

typedef struct destroy_args {
  mrt_engine *engine;
  gate *g;
} destroy_args;

static void *destroy_engine(void *arg) {
  destroy_args *a = arg;
  mrt_engine_destroy(a->engine); /* stops the run, waits for it */
  return NULL;
}

static void test_destroy_during_run(void **state) {
  (void)state;
  gate g;
  gate_init(&g);
  loaded l = load_add_one(&g);
  run_args args = {l.engine, MRT_OK, ""};
  pthread_t runner, destroyer;
  assert_int_equal(pthread_create(&runner, NULL, run_main, &args), 0);
  wait_entered(&g);
  destroy_args d = {l.engine, &g};
  assert_int_equal(pthread_create(&destroyer, NULL, destroy_engine, &d), 0);
  release(&g);
  assert_int_equal(pthread_join(runner, NULL), 0);
  assert_int_equal(pthread_join(destroyer, NULL), 0);
  /* Whether the stop came before the Add or after the run: never anything else. */
  assert_true(args.status == MRT_OK || args.status == MRT_CANCELLED);
  free_loaded(&l);
  gate_destroy(&g);
}

/* A session binding the engine's device takes it over: the engine must load
 * again (and is told so), and the session runs. */
static void test_session_displaces_engine(void **state) {
  (void)state;
  gate g;
  gate_init(&g);
  g.released = true; /* the callback never blocks here */
  loaded l = load_add_one(&g);
  mrt_session *session = NULL;
  assert_int_equal(mrt_session_create(l.model, NULL, &session), MRT_OK);
  assert_int_equal(mrt_session_bind_to_device(session, l.device), MRT_OK);
  assert_int_equal(mrt_engine_run(l.engine, 0), MRT_FAILED_PRECONDITION);
  test_expect_contains(mrt_last_error_message(), "bound by another session or engine");
  assert_int_equal(mrt_engine_load(l.engine, l.device), MRT_OK);
  assert_int_equal(mrt_engine_run(l.engine, 0), MRT_OK);
  mrt_session_destroy(session);
  mrt_engine_destroy(l.engine);
  free_loaded(&l);
  gate_destroy(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_busy_and_stop),
      cmocka_unit_test(test_destroy_during_run),
      cmocka_unit_test(test_session_displaces_engine),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
