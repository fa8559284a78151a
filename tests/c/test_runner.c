/* The model runner and futures through the C API: outputs against reference
 * math (add_one, mlp), sync and async, library-allocated outputs, replicas,
 * statistics, bad input that leaves the runner serving, and request arrays
 * that change between calls. */
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

#include <cmocka.h>

#include "mlp_reference.h"
#include "mrt_c.h"
#include "test_support.h"

enum { ADD_ONE_N = 16 };

static const char *model_path(const char *name) { return test_model_path("MRT_TEST_RUNNER_MODELS", name); }

static void fill_random(float *values, size_t n, unsigned *seed) { test_fill_random(values, n, seed, -2, 2); }

static void describes_inputs_and_outputs(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  const mrt_data_desc *descs = NULL;
  size_t count = 0;
  assert_int_equal(mrt_model_runner_execute_inputs(runner, &descs, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_string_equal(descs[0].name, "x");
  assert_int_equal(descs[0].size_in_bytes, ADD_ONE_N * 4);
  assert_int_equal(descs[0].rank, 2);
  assert_int_equal(descs[0].shape[1], ADD_ONE_N);
  assert_int_equal(descs[0].data_type, MRT_F32);
  assert_int_equal(mrt_model_runner_execute_outputs(runner, &descs, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_string_equal(descs[0].name, "y");
  mrt_model_runner_destroy(runner);
}

static void add_one_sync_matches_reference(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  unsigned seed = 7;
  float x[ADD_ONE_N], y[ADD_ONE_N];
  for (int request = 0; request < 2000; ++request) {
    fill_random(x, ADD_ONE_N, &seed);
    mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
    assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
    for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(y[i], x[i] + 1.0f, 1e-6);
  }
  mrt_request_times counts = {0};
  counts.struct_size = sizeof counts;
  assert_int_equal(mrt_model_runner_statistics_count(runner, 0, &counts), MRT_OK);
  assert_true(counts.request_us >= 1000.0); /* at least the kept traces */
  mrt_request_times last = {0};
  last.struct_size = sizeof last;
  assert_int_equal(mrt_model_runner_time_trace(runner, 0, -1, &last), MRT_OK);
  assert_true(last.request_us > 0.0);
  mrt_model_runner_destroy(runner);
}

/* Callbacks run on the device thread or inline on ours, possibly at once,
 * and may still be running when mrt_future_wait returns: the counters are
 * guarded, and read only after the runner (and its threads) are gone. */
typedef struct {
  pthread_mutex_t mutex;
  int calls;
  int frees;
  mrt_status last;
} ready_log;

static void on_ready(mrt_status status, void *user_data) {
  ready_log *log = user_data;
  pthread_mutex_lock(&log->mutex);
  log->calls++;
  log->last = status;
  pthread_mutex_unlock(&log->mutex);
}
static void count_free(void *user_data) {
  ready_log *log = user_data;
  pthread_mutex_lock(&log->mutex);
  log->frees++;
  pthread_mutex_unlock(&log->mutex);
}

static void add_one_async_with_callbacks(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  enum { IN_FLIGHT = 2, ROUNDS = 300 };
  unsigned seed = 11;
  float x[IN_FLIGHT][ADD_ONE_N], y[IN_FLIGHT][ADD_ONE_N];
  ready_log log = {PTHREAD_MUTEX_INITIALIZER, 0, 0, -1};
  for (int round = 0; round < ROUNDS; ++round) {
    mrt_future *futures[IN_FLIGHT];
    for (int k = 0; k < IN_FLIGHT; ++k) {
      fill_random(x[k], ADD_ONE_N, &seed);
      mrt_tensor_view in = {"x", x[k], sizeof x[k]}, out = {"y", y[k], sizeof y[k]};
      assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &futures[k]), MRT_OK);
      assert_int_equal(mrt_future_on_ready(futures[k], on_ready, &log, count_free), MRT_OK);
    }
    for (int k = 0; k < IN_FLIGHT; ++k) {
      assert_int_equal(mrt_future_wait(futures[k], -1), MRT_OK);
      assert_true(mrt_future_is_ready(futures[k]));
      mrt_status request = -1;
      assert_int_equal(mrt_future_status(futures[k], &request), MRT_OK);
      assert_int_equal(request, MRT_OK);
      assert_string_equal(mrt_future_error_message(futures[k]), "");
      for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(y[k][i], x[k][i] + 1.0f, 1e-6);
      mrt_future_destroy(futures[k]);
    }
  }
  mrt_model_runner_destroy(runner); /* joins the device thread */
  assert_int_equal(log.calls, IN_FLIGHT * ROUNDS);
  assert_int_equal(log.frees, IN_FLIGHT * ROUNDS);
  assert_int_equal(log.last, MRT_OK);
}

/* A runner destroyed from its own future's on_ready callback, which runs on
 * the runner's device thread: the destruction is left to another thread
 * (no join of itself, no abort), and flush_user_data_free says when. */
typedef struct {
  mrt_model_runner *runner;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  int destroyed;
} self_destroy;

static void destroy_runner_on_ready(mrt_status status, void *user_data) {
  (void)status;
  mrt_model_runner_destroy(((self_destroy *)user_data)->runner);
}
static void ignore_flush(const char *tensor_id, void *user_data) {
  (void)tensor_id;
  (void)user_data;
}
static void mark_destroyed(void *user_data) {
  self_destroy *s = user_data;
  pthread_mutex_lock(&s->mutex);
  s->destroyed = 1;
  pthread_cond_broadcast(&s->cond);
  pthread_mutex_unlock(&s->mutex);
}

static void runner_destroyed_from_its_own_callback(void **state) {
  (void)state;
  self_destroy s = {NULL, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.flush_callback = ignore_flush;
  config.flush_user_data = &s;
  config.flush_user_data_free = mark_destroyed;
  s.runner = test_make_runner("add_one", &config);
  float x[ADD_ONE_N], y[ADD_ONE_N];
  unsigned seed = 5;
  fill_random(x, ADD_ONE_N, &seed);
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  mrt_future *future = NULL;
  assert_int_equal(mrt_model_runner_execute_async(s.runner, &in, 1, &out, 1, 0, &future), MRT_OK);
  assert_int_equal(mrt_future_on_ready(future, destroy_runner_on_ready, &s, NULL), MRT_OK);
  assert_int_equal(mrt_future_wait(future, -1), MRT_OK);
  for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(y[i], x[i] + 1.0f, 1e-6);

  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 30;
  pthread_mutex_lock(&s.mutex);
  while (!s.destroyed && pthread_cond_timedwait(&s.cond, &s.mutex, &deadline) == 0) {
  }
  const int destroyed = s.destroyed;
  pthread_mutex_unlock(&s.mutex);
  assert_true(destroyed);
  mrt_future_destroy(future);
}

static void library_allocated_outputs(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  float x[ADD_ONE_N];
  unsigned seed = 3;
  fill_random(x, ADD_ONE_N, &seed);
  mrt_tensor_view in = {"x", x, sizeof x};

  mrt_tensor_memory *memory = NULL;
  assert_int_equal(mrt_model_runner_execute_alloc(runner, &in, 1, 0, &memory), MRT_OK);
  size_t count = 0;
  assert_int_equal(mrt_tensor_memory_count(memory, &count), MRT_OK);
  assert_int_equal(count, 1);
  mrt_tensor_view y = {0};
  assert_int_equal(mrt_tensor_memory_find(memory, "y", &y), MRT_OK);
  assert_int_equal(y.size_bytes, sizeof x);
  assert_int_equal((uintptr_t)y.data % 64, 0);
  for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(((float *)y.data)[i], x[i] + 1.0f, 1e-6);
  assert_int_equal(mrt_tensor_memory_find(memory, "nope", &y), MRT_NOT_FOUND);
  assert_non_null(strstr(mrt_last_error_message(), "no output named 'nope'"));
  assert_int_equal(mrt_tensor_memory_get(memory, 1, &y), MRT_INVALID_ARGUMENT);
  mrt_tensor_memory_destroy(memory);

  mrt_future *future = NULL;
  assert_int_equal(mrt_model_runner_execute_async_alloc(runner, &in, 1, 0, &future, &memory), MRT_OK);
  assert_int_equal(mrt_future_wait(future, -1), MRT_OK);
  assert_int_equal(mrt_tensor_memory_get(memory, 0, &y), MRT_OK);
  assert_string_equal(y.name, "y");
  for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(((float *)y.data)[i], x[i] + 1.0f, 1e-6);
  mrt_future_destroy(future); /* the outputs handle lives on its own */
  assert_float_equal(((float *)y.data)[0], x[0] + 1.0f, 1e-6);
  mrt_tensor_memory_destroy(memory);
  mrt_model_runner_destroy(runner);
}

static void two_replicas_both_serve(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.replication_factor = 2;
  mrt_model_runner *runner = test_make_runner("add_one", &config);
  unsigned seed = 5;
  float x[ADD_ONE_N], y[ADD_ONE_N];
  for (int request = 0; request < 200; ++request) {
    fill_random(x, ADD_ONE_N, &seed);
    mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
    assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, (uint32_t)(request % 2)), MRT_OK);
    for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(y[i], x[i] + 1.0f, 1e-6);
  }
  assert_int_equal(mrt_model_runner_execute(runner, NULL, 0, NULL, 0, 2), MRT_INVALID_ARGUMENT);
  mrt_model_runner_destroy(runner);
}

static void mlp_matches_reference_from_tensor_data(void **state) {
  (void)state;
  const char *paths[] = {model_path("mlp")};
  mrt_model *model = NULL;
  assert_int_equal(mrt_model_load(paths, 1, &model), MRT_OK);
  const mlp_weights weights = mlp_weights_of(model);
  mrt_model_runner *runner = NULL;
  assert_int_equal(mrt_model_runner_create(model, NULL, &runner), MRT_OK);

  unsigned seed = 13;
  static float image[MLP_IMAGE];
  float probs[MLP_CLASSES];
  double expected[MLP_CLASSES];
  for (int request = 0; request < 50; ++request) {
    test_fill_random(image, MLP_IMAGE, &seed, 0, 1);
    mrt_tensor_view in = {"image", image, sizeof image}, out = {"probs", probs, sizeof probs};
    assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
    mlp_reference(&weights, image, expected);
    for (int c = 0; c < MLP_CLASSES; ++c) assert_float_equal(probs[c], expected[c], 1e-5);
  }
  mrt_model_runner_destroy(runner);
  mrt_model_destroy(model);
}

static void bad_requests_leave_the_runner_serving(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view short_in = {"x", x, sizeof x - 4}, out = {"y", y, sizeof y};
  assert_int_equal(mrt_model_runner_execute(runner, &short_in, 1, &out, 1, 0), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "'x'"));
  assert_non_null(strstr(mrt_last_error_message(), "60"));

  mrt_tensor_view only_unknown = {"z", x, sizeof x};
  assert_int_equal(mrt_model_runner_execute(runner, &only_unknown, 1, &out, 1, 0), MRT_NOT_FOUND);
  assert_non_null(strstr(mrt_last_error_message(), "unknown input 'z': execute inputs are x (missing: x)"));
  mrt_tensor_view with_unknown[2] = {{"x", x, sizeof x}, {"z", x, sizeof x}};
  assert_int_equal(mrt_model_runner_execute(runner, with_unknown, 2, &out, 1, 0), MRT_NOT_FOUND);
  assert_non_null(strstr(mrt_last_error_message(), "unknown input 'z'"));

  mrt_tensor_view twice[2] = {{"x", x, sizeof x}, {"x", x, sizeof x}};
  assert_int_equal(mrt_model_runner_execute(runner, twice, 2, &out, 1, 0), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "inputs: 'x' is given twice"));

  mrt_tensor_view nameless = {NULL, x, sizeof x};
  assert_int_equal(mrt_model_runner_execute(runner, &nameless, 1, &out, 1, 0), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "inputs[0].name must not be NULL"));

  mrt_tensor_view in = {"x", x, sizeof x};
  assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 1), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_runner_execute(NULL, &in, 1, &out, 1, 0), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "runner must not be NULL"));
  mrt_future *future = NULL;
  assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_runner_execute_async(runner, &short_in, 1, &out, 1, 0, &future), MRT_INVALID_ARGUMENT);
  assert_null(future);

  /* Still serving. */
  x[3] = 41.0f;
  assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
  assert_float_equal(y[3], 42.0f, 1e-6);
  mrt_model_runner_destroy(runner);
}

/* The modelled device time: every add_one request is one Main run of the
 * same cost, so cycles grow by the same amount per request, at the clock of
 * the model's target. */
static uint64_t device_cycles(const mrt_model_runner *runner) {
  uint64_t cycles = 0;
  assert_int_equal(mrt_model_runner_device_cycles(runner, 0, &cycles, NULL), MRT_OK);
  return cycles;
}

static void device_cycles_grow_by_one_main_run_per_request(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  const uint64_t loaded = device_cycles(runner);
  assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
  const uint64_t one = device_cycles(runner) - loaded;
  assert_true(one > 0);
  for (int i = 0; i < 3; ++i) assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
  assert_int_equal(device_cycles(runner) - loaded, 4 * one);

  double clock_hz = 0;
  uint64_t cycles = 0;
  assert_int_equal(mrt_model_runner_device_cycles(runner, 0, &cycles, &clock_hz), MRT_OK);
  mrt_model *model = NULL;
  mrt_executable *executable = NULL;
  assert_int_equal(mrt_model_runner_model(runner, &model), MRT_OK);
  assert_int_equal(mrt_model_get_executable(model, &executable), MRT_OK);
  mrt_target target;
  memset(&target, 0, sizeof target);
  target.struct_size = sizeof target;
  assert_int_equal(mrt_executable_get_target(executable, &target), MRT_OK);
  assert_true(clock_hz > 0);
  assert_float_equal(clock_hz, target.clock_hz, 0);
  mrt_executable_destroy(executable);
  mrt_model_destroy(model);

  assert_int_equal(mrt_model_runner_device_cycles(runner, 1, &cycles, NULL), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "replica_id 1 out of range: the runner has 1 replica"));
  assert_int_equal(mrt_model_runner_device_cycles(runner, 0, NULL, &clock_hz), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "out_cycles must not be NULL"));
  assert_int_equal(mrt_model_runner_device_cycles(NULL, 0, &cycles, NULL), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "runner must not be NULL"));
  mrt_model_runner_destroy(runner);
}

/* replicated (add_one compiled with replication factor 2): one copy brings
 * two replicas on one device, each counting the cycles of its own lane. */
static uint64_t replica_cycles(const mrt_model_runner *runner, uint32_t replica_id) {
  uint64_t cycles = 0;
  assert_int_equal(mrt_model_runner_device_cycles(runner, replica_id, &cycles, NULL), MRT_OK);
  return cycles;
}

static void replicated_model_counts_its_replicas_and_their_cycles(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("replicated", NULL);
  uint32_t count = 0;
  assert_int_equal(mrt_model_runner_num_replicas(runner, &count), MRT_OK);
  assert_int_equal(count, 2);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  const uint64_t before0 = replica_cycles(runner, 0);
  assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 1), MRT_OK);
  const uint64_t after1 = replica_cycles(runner, 1);
  assert_true(after1 > 0);
  assert_int_equal(replica_cycles(runner, 0), before0); /* replica 0 has not run */
  assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
  assert_true(replica_cycles(runner, 0) > before0);
  assert_int_equal(replica_cycles(runner, 1), after1);
  for (int i = 0; i < ADD_ONE_N; ++i) assert_float_equal(y[i], 1.0f, 1e-6);

  uint64_t cycles = 0;
  assert_int_equal(mrt_model_runner_device_cycles(runner, 2, &cycles, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "replica_id 2 out of range: the runner has 2 replicas");
  assert_int_equal(mrt_model_runner_num_replicas(runner, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_count must not be NULL");
  assert_int_equal(mrt_model_runner_num_replicas(NULL, &count), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "runner must not be NULL");
  mrt_model_runner_destroy(runner);

  /* Without in-model replication, one replica per copy. */
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.replication_factor = 2;
  runner = test_make_runner("add_one", &config);
  assert_int_equal(mrt_model_runner_num_replicas(runner, &count), MRT_OK);
  assert_int_equal(count, 2);
  mrt_model_runner_destroy(runner);
}

/* The library keeps each thread's name -> view maps between calls and only
 * rewrites the data pointers when the names repeat: arrays whose order,
 * names (also rewritten in place, in the same buffers) or count change
 * must be read afresh, with every check. conditional: y = 2x if flag != 0,
 * else x - 1; x is 8 floats, flag one int32, so mixed-up views would fail
 * the size checks or the math. */
static void expect_conditional(mrt_model_runner *runner, const mrt_tensor_view *in, size_t count, const float *x,
                               int32_t flag) {
  float y[8];
  mrt_tensor_view out = {"y", y, sizeof y};
  const mrt_status status = mrt_model_runner_execute(runner, in, count, &out, 1, 0);
  if (status != MRT_OK) fail_msg("%s", mrt_last_error_message());
  for (int k = 0; k < 8; ++k) assert_float_equal(y[k], flag != 0 ? 2 * x[k] : x[k] - 1, 0);
}

static void request_arrays_are_read_afresh_on_every_call(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("conditional", NULL);
  float x[8], y[8];
  int32_t flag = 1;
  unsigned seed = 21;
  char names[2][8] = {"x", "flag"};
  for (int round = 0; round < 3; ++round) {
    fill_random(x, 8, &seed);
    flag = round % 2;
    mrt_tensor_view in[2] = {{names[0], x, sizeof x}, {names[1], &flag, sizeof flag}};
    expect_conditional(runner, in, 2, x, flag); /* the same names again: reused */

    mrt_tensor_view reordered[2] = {in[1], in[0]};
    expect_conditional(runner, reordered, 2, x, flag);

    /* The same name buffers, their contents swapped. */
    strcpy(names[0], "flag");
    strcpy(names[1], "x");
    mrt_tensor_view swapped[2] = {{names[0], &flag, sizeof flag}, {names[1], x, sizeof x}};
    expect_conditional(runner, swapped, 2, x, flag);
    strcpy(names[0], "x");
    strcpy(names[1], "flag");
  }

  mrt_tensor_view in[2] = {{names[0], x, sizeof x}, {names[1], &flag, sizeof flag}};
  mrt_tensor_view out = {"y", y, sizeof y};
  expect_conditional(runner, in, 2, x, flag);
  strcpy(names[1], "x"); /* now named twice */
  assert_int_equal(mrt_model_runner_execute(runner, in, 2, &out, 1, 0), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "inputs: 'x' is given twice"));
  strcpy(names[1], "flog"); /* misspelt: the unknown name is reported, with what it stands for */
  assert_int_equal(mrt_model_runner_execute(runner, in, 2, &out, 1, 0), MRT_NOT_FOUND);
  assert_non_null(strstr(mrt_last_error_message(), "unknown input 'flog'"));
  assert_non_null(strstr(mrt_last_error_message(), "(missing: flag)"));
  strcpy(names[1], "flag");
  expect_conditional(runner, in, 2, x, flag);
  assert_int_equal(mrt_model_runner_execute(runner, in, 1, &out, 1, 0), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "missing input 'flag'"));
  expect_conditional(runner, in, 2, x, flag);

  /* Outputs likewise: a second name that is not an output. */
  mrt_tensor_view outs[2] = {{"y", y, sizeof y}, {"z", y, sizeof y}};
  assert_int_equal(mrt_model_runner_execute(runner, in, 2, outs, 2, 0), MRT_NOT_FOUND);
  assert_non_null(strstr(mrt_last_error_message(), "'z'"));
  expect_conditional(runner, in, 2, x, flag);
  mrt_model_runner_destroy(runner);
}

static void bad_configs_and_futures(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  assert_int_equal(config.replication_factor, 1);
  assert_int_equal(config.timeout_ns, 5000000000LL);
  assert_int_equal(config.batching_dim, MRT_BATCHING_DISABLED);
  assert_true(config.check_package_hash);

  ready_log log = {PTHREAD_MUTEX_INITIALIZER, 0, 0, -1};
  config.timeout_ns = 0; /* refused: MRT_FOREVER says "wait forever" */
  config.flush_user_data = &log;
  config.flush_user_data_free = count_free;
  const char *paths[] = {model_path("add_one")};
  mrt_model_runner *runner = NULL;
  assert_int_equal(mrt_model_runner_create_from_files(paths, 1, &config, &runner), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "config->timeout_ns is 0, which would time out continuously; use MRT_FOREVER"));
  assert_null(runner);
  assert_int_equal(log.frees, 1); /* freed although creation failed */

  mrt_model_runner_config_init(&config);
  config.struct_size = 8;
  assert_int_equal(mrt_model_runner_create_from_files(paths, 1, &config, &runner), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "config->struct_size is 8"));
  const char *missing[] = {"/nonexistent.popef"};
  assert_int_equal(mrt_model_runner_create_from_files(missing, 1, NULL, &runner), MRT_NOT_FOUND);

  assert_int_equal(mrt_future_wait(NULL, 0), MRT_INVALID_ARGUMENT);
  assert_false(mrt_future_is_ready(NULL));
  assert_string_equal(mrt_future_error_message(NULL), "");
  mrt_future_destroy(NULL);
  mrt_model_runner_destroy(NULL);
  mrt_tensor_memory_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(describes_inputs_and_outputs),
      cmocka_unit_test(add_one_sync_matches_reference),
      cmocka_unit_test(add_one_async_with_callbacks),
      cmocka_unit_test(runner_destroyed_from_its_own_callback),
      cmocka_unit_test(library_allocated_outputs),
      cmocka_unit_test(two_replicas_both_serve),
      cmocka_unit_test(mlp_matches_reference_from_tensor_data),
      cmocka_unit_test(bad_requests_leave_the_runner_serving),
      cmocka_unit_test(device_cycles_grow_by_one_main_run_per_request),
      cmocka_unit_test(replicated_model_counts_its_replicas_and_their_cycles),
      cmocka_unit_test(request_arrays_are_read_afresh_on_every_call),
      cmocka_unit_test(bad_configs_and_futures),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
