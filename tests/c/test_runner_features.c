/* ModelRunnerConfig options through the C API, on models written by mrt-gen
 * (MRT_TEST_RUNNER_MODELS), checked against reference math: Save outputs
 * after destruction (run_save_programs, save_programs_outputs), frozen
 * inputs overriding TensorData, conditional routing, simulated device errors
 * in the middle of a stream of requests with and without auto_reset,
 * destruction with requests in flight, batch sizes from 1 to 3x the model
 * batch with and without batching_dim, and wrong names, sizes, counts and
 * replica ids that leave the runner serving, and concurrent clients with
 * thread_safe. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mlp_reference.h"
#include "mrt_c.h"
#include "test_support.h"

enum { ADD_ONE_N = 16 };
#define MS 1000000LL /* nanoseconds */
#define WAIT_NS (10000 * MS) /* a request not done by then hangs */

static const char *model_path(const char *name) { return test_model_path("MRT_TEST_RUNNER_MODELS", name); }

static void expect_last_error(mrt_status got, mrt_status expected, const char *needle) {
  if (got != expected) {
    fail_msg("got %s, expected %s (%s)", mrt_status_string(got), mrt_status_string(expected),
             mrt_last_error_message());
  }
  test_expect_contains(mrt_last_error_message(), needle);
}

/* y = x + 1 on one request of `samples` samples of add_one. */
static void expect_add_one(mrt_model_runner *runner, int samples, unsigned *seed) {
  float x[12 * ADD_ONE_N], y[12 * ADD_ONE_N];
  const size_t n = (size_t)samples * ADD_ONE_N;
  test_fill_random(x, n, seed, -4, 4);
  mrt_tensor_view in = {"x", x, n * sizeof(float)}, out = {"y", y, n * sizeof(float)};
  const mrt_status status = mrt_model_runner_execute(runner, &in, 1, &out, 1, 0);
  if (status != MRT_OK) fail_msg("%d samples: %s", samples, mrt_last_error_message());
  for (size_t i = 0; i < n; ++i) assert_float_equal(y[i], x[i] + 1.0f, 0);
}

/* ---- Save programs ---- */

static void save_outputs_are_written_after_destruction(void **state) {
  (void)state;
  for (uint32_t replicas = 1; replicas <= 2; ++replicas) {
    float saved[2][4], sums[2][4] = {{0}};
    for (int r = 0; r < 2; ++r) {
      for (int k = 0; k < 4; ++k) saved[r][k] = -1.0f;
    }
    mrt_tensor_view save_views[2] = {{"acc_save", saved[0], sizeof saved[0]}, {"acc_save", saved[1], sizeof saved[1]}};
    mrt_replica_outputs save_outputs[2] = {{0, &save_views[0], 1}, {1, &save_views[1], 1}};
    mrt_model_runner_config config;
    mrt_model_runner_config_init(&config);
    config.replication_factor = replicas;
    config.run_save_programs = true;
    config.save_programs_outputs = save_outputs;
    config.num_save_programs_outputs = replicas;
    mrt_model_runner *runner = test_make_runner("stateful_b2", &config);
    const mrt_data_desc *descs = NULL;
    size_t count = 0;
    assert_int_equal(mrt_model_runner_execute_outputs(runner, &descs, &count), MRT_OK);
    assert_int_equal(count, 1); /* acc_out; acc_save is a Save output */
    assert_string_equal(descs[0].name, "acc_out");
    assert_int_equal(mrt_model_runner_model_outputs(runner, &descs, &count), MRT_OK);
    assert_int_equal(count, 2);

    unsigned seed = 9 + replicas;
    for (int i = 0; i < 60; ++i) {
      const uint32_t r = (uint32_t)i % replicas;
      float x[8], acc[4];
      test_fill_random(x, 8, &seed, -1, 1);
      for (int k = 0; k < 4; ++k) sums[r][k] += x[k] + x[4 + k]; /* the batch of 2 */
      mrt_tensor_view in = {"x", x, sizeof x}, out = {"acc_out", acc, sizeof acc};
      assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, r), MRT_OK);
      for (int k = 0; k < 4; ++k) assert_float_equal(acc[k], sums[r][k], 1e-4);
    }
    assert_float_equal(saved[0][0], -1.0f, 0); /* not yet */
    mrt_model_runner_destroy(runner);
    for (uint32_t r = 0; r < replicas; ++r) {
      for (int k = 0; k < 4; ++k) assert_float_equal(saved[r][k], sums[r][k], 1e-4);
    }
  }
}

static void without_run_save_programs_nothing_is_saved(void **state) {
  (void)state;
  float saved[4] = {-1, -1, -1, -1};
  mrt_tensor_view view = {"acc_save", saved, sizeof saved};
  mrt_replica_outputs outputs = {0, &view, 1};
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.save_programs_outputs = &outputs;
  config.num_save_programs_outputs = 1;
  mrt_model_runner *runner = test_make_runner("stateful_b2", &config);
  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, acc[4];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"acc_out", acc, sizeof acc};
  assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
  assert_float_equal(acc[3], 4.0f + 8.0f, 0);
  mrt_model_runner_destroy(runner);
  for (int k = 0; k < 4; ++k) assert_float_equal(saved[k], -1.0f, 0);

  /* acc_out is not a Save output; replica 1 does not exist. */
  const char *paths[] = {model_path("stateful_b2")};
  view.name = "acc_out";
  expect_last_error(mrt_model_runner_create_from_files(paths, 1, &config, &runner), MRT_NOT_FOUND, "acc_out");
  view.name = "acc_save";
  outputs.replica_id = 1;
  expect_last_error(mrt_model_runner_create_from_files(paths, 1, &config, &runner), MRT_INVALID_ARGUMENT, "1");
}

/* ---- frozen inputs, conditional routing ---- */

static void frozen_inputs_override_tensor_data(void **state) {
  (void)state;
  static float w1[MLP_IMAGE * MLP_HIDDEN], b1[MLP_HIDDEN], w2[MLP_HIDDEN * MLP_CLASSES], b2[MLP_CLASSES];
  unsigned seed = 5;
  test_fill_random(w1, MLP_IMAGE * MLP_HIDDEN, &seed, -0.1f, 0.1f);
  test_fill_random(b1, MLP_HIDDEN, &seed, -1, 1);
  test_fill_random(w2, MLP_HIDDEN * MLP_CLASSES, &seed, -1, 1);
  test_fill_random(b2, MLP_CLASSES, &seed, -1, 1);
  mrt_tensor_view frozen[4] = {
      {"w1", w1, sizeof w1}, {"b1", b1, sizeof b1}, {"w2", w2, sizeof w2}, {"b2", b2, sizeof b2}};
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.frozen_inputs = frozen;
  config.num_frozen_inputs = 4;
  mrt_model_runner *runner = test_make_runner("mlp", &config);
  const mrt_data_desc *descs = NULL;
  size_t count = 0;
  assert_int_equal(mrt_model_runner_execute_inputs(runner, &descs, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_string_equal(descs[0].name, "image");

  /* The runner copied the frozen data: our copy may change afterwards. */
  static float reference_w1[MLP_IMAGE * MLP_HIDDEN];
  memcpy(reference_w1, w1, sizeof w1);
  memset(w1, 0, sizeof w1);
  const mlp_weights weights = {reference_w1, b1, w2, b2};
  for (int request = 0; request < 20; ++request) {
    float image[MLP_IMAGE], probs[MLP_CLASSES];
    double expected[MLP_CLASSES];
    test_fill_random(image, MLP_IMAGE, &seed, 0, 1);
    mrt_tensor_view in = {"image", image, sizeof image}, out = {"probs", probs, sizeof probs};
    assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
    mlp_reference(&weights, image, expected);
    for (int k = 0; k < MLP_CLASSES; ++k) assert_float_equal(probs[k], expected[k], 1e-5);
  }
  mrt_model_runner_destroy(runner);

  frozen[0].size_bytes = 40;
  const char *paths[] = {model_path("mlp")};
  expect_last_error(mrt_model_runner_create_from_files(paths, 1, &config, &runner), MRT_INVALID_ARGUMENT,
                    "frozen input 'w1': expected 401408 bytes, got 40");
}

static void conditional_routing_follows_the_flag(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("conditional", NULL);
  unsigned seed = 2;
  for (int request = 0; request < 300; ++request) {
    float x[8], y[8];
    test_fill_random(x, 8, &seed, -10, 10);
    int32_t flag = rand_r(&seed) % 3; /* 0, 1 or 2 */
    mrt_tensor_view in[2] = {{"x", x, sizeof x}, {"flag", &flag, sizeof flag}}, out = {"y", y, sizeof y};
    assert_int_equal(mrt_model_runner_execute(runner, in, 2, &out, 1, 0), MRT_OK);
    for (int k = 0; k < 8; ++k) assert_float_equal(y[k], flag != 0 ? 2 * x[k] : x[k] - 1, 0);
  }
  int64_t wide_flag = 1;
  float x[8] = {0}, y[8];
  mrt_tensor_view in[2] = {{"x", x, sizeof x}, {"flag", &wide_flag, sizeof wide_flag}}, out = {"y", y, sizeof y};
  expect_last_error(mrt_model_runner_execute(runner, in, 2, &out, 1, 0), MRT_INVALID_ARGUMENT,
                    "input 'x': holds 1 batches but input 'flag' holds 2");
  mrt_model_runner_destroy(runner);

  /* A frozen flag is no longer an execute input. */
  int32_t flag = 0;
  mrt_tensor_view frozen = {"flag", &flag, sizeof flag};
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.frozen_inputs = &frozen;
  config.num_frozen_inputs = 1;
  runner = test_make_runner("conditional", &config);
  const mrt_data_desc *descs = NULL;
  size_t count = 0;
  assert_int_equal(mrt_model_runner_execute_inputs(runner, &descs, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_string_equal(descs[0].name, "x");
  for (int k = 0; k < 8; ++k) x[k] = (float)k;
  assert_int_equal(mrt_model_runner_execute(runner, in, 1, &out, 1, 0), MRT_OK);
  for (int k = 0; k < 8; ++k) assert_float_equal(y[k], (float)k - 1, 0);
  expect_last_error(mrt_model_runner_execute(runner, in, 2, &out, 1, 0), MRT_NOT_FOUND, "'flag'");
  mrt_model_runner_destroy(runner);
}

/* ---- device errors mid-stream ---- */

typedef struct stream_outcome {
  int ok, device_errors, other;
} stream_outcome;

/* A simulated error, the text its messages name and its recovery action. */
typedef struct fault {
  int32_t error;
  const char *text;
  int32_t action;
} fault;
static const fault kTileException = {MRT_SIMULATED_TILE_EXCEPTION, "TILE_EXCEPTION", MRT_RECOVERY_IPU_RESET};
static const fault kExchangeError = {MRT_SIMULATED_EXCHANGE_ERROR, "PARTITION_RESET", MRT_RECOVERY_PARTITION_RESET};
static const fault kHostLinkError = {MRT_SIMULATED_HOST_LINK_ERROR, "FULL_RESET", MRT_RECOVERY_FULL_RESET};

/* `requests` async add_one requests with simulated error f inserted before
 * request error_at. Every future must resolve in time; every device error
 * names the fault and carries its recovery action. */
static stream_outcome stream_with_error(mrt_model_runner *runner, int requests, int error_at, fault f) {
  enum { MAX = 400 };
  assert_true(requests <= MAX);
  static float xs[MAX][ADD_ONE_N], ys[MAX][ADD_ONE_N];
  mrt_future *futures[MAX];
  unsigned seed = (unsigned)error_at;
  stream_outcome outcome = {0, 0, 0};
  for (int i = 0; i < requests; ++i) {
    test_fill_random(xs[i], ADD_ONE_N, &seed, -4, 4);
    if (i == error_at) {
      assert_int_equal(mrt_model_runner_insert_simulated_error(runner, f.error, "Add", 0), MRT_OK);
    }
    mrt_tensor_view in = {"x", xs[i], sizeof xs[i]}, out = {"y", ys[i], sizeof ys[i]};
    futures[i] = NULL;
    const mrt_status status = mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &futures[i]);
    if (status == MRT_DEVICE_ERROR) {
      ++outcome.device_errors; /* refused at once: the replica is out of service */
      test_expect_contains(mrt_last_error_message(), f.text);
      assert_int_equal(mrt_last_error_recovery_action(), f.action);
    } else if (status != MRT_OK) {
      fail_msg("request %d: %s", i, mrt_last_error_message());
    }
  }
  for (int i = 0; i < requests; ++i) {
    if (futures[i] == NULL) continue;
    const mrt_status status = mrt_future_wait(futures[i], WAIT_NS);
    if (status == MRT_OK) {
      ++outcome.ok;
      for (int k = 0; k < ADD_ONE_N; ++k) assert_float_equal(ys[i][k], xs[i][k] + 1.0f, 0);
      assert_int_equal(mrt_future_recovery_action(futures[i]), MRT_RECOVERY_NONE);
    } else if (status == MRT_DEVICE_ERROR) {
      ++outcome.device_errors;
      test_expect_contains(mrt_future_error_message(futures[i]), f.text);
      assert_int_equal(mrt_future_recovery_action(futures[i]), f.action);
    } else {
      fail_msg("request %d: %s: %s", i, mrt_status_string(status), mrt_future_error_message(futures[i]));
    }
    mrt_future_destroy(futures[i]);
  }
  return outcome;
}

static void auto_reset_recovers_from_device_errors_mid_stream(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.auto_reset = true;
  mrt_model_runner *runner = test_make_runner("add_one", &config);
  unsigned seed = 1;
  for (int round = 0; round < 3; ++round) {
    const stream_outcome outcome = stream_with_error(runner, 200, 50 + 40 * round, kTileException);
    assert_int_equal(outcome.ok + outcome.device_errors, 200);
    assert_true(outcome.device_errors >= 1);
    expect_add_one(runner, 1, &seed); /* serving goes on */
  }
  mrt_model_runner_destroy(runner);
}

static void without_auto_reset_pending_and_later_requests_fail(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  const stream_outcome outcome = stream_with_error(runner, 150, 50, kTileException);
  assert_int_equal(outcome.ok + outcome.device_errors, 150);
  assert_true(outcome.device_errors >= 1);
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_DEVICE_ERROR, "out of service");
  test_expect_contains(mrt_last_error_message(), "TILE_EXCEPTION");
  test_expect_contains(mrt_last_error_message(), "auto_reset is off: destroy this runner and create a new one");
  if (strstr(mrt_last_error_message(), "reload") != NULL) fail_msg("%s", mrt_last_error_message());
  assert_int_equal(mrt_last_error_recovery_action(), MRT_RECOVERY_IPU_RESET);
  mrt_future *future = NULL;
  const mrt_status status = mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &future);
  if (status == MRT_OK) {
    assert_int_equal(mrt_future_wait(future, WAIT_NS), MRT_DEVICE_ERROR);
    mrt_future_destroy(future);
  } else {
    assert_int_equal(status, MRT_DEVICE_ERROR);
  }

  expect_last_error(mrt_model_runner_insert_simulated_error(runner, MRT_SIMULATED_TILE_EXCEPTION, "nope", 0),
                    MRT_NOT_FOUND, "'nope'");
  expect_last_error(mrt_model_runner_insert_simulated_error(runner, 7, "Add", 0), MRT_INVALID_ARGUMENT,
                    "error 7 is not an mrt_simulated_error value");
  assert_int_equal(mrt_last_error_recovery_action(), MRT_RECOVERY_NONE);
  expect_last_error(mrt_model_runner_insert_simulated_error(runner, MRT_SIMULATED_MEMORY_PARITY, "Add", 3),
                    MRT_INVALID_ARGUMENT, "replica_id 3 out of range");
  mrt_model_runner_destroy(runner);
}

/* auto_reset recovers from IPU_RESET only (the seed's contract): after a
 * fault needing a partition or full reset the replica is out of service, and
 * the message tells a runner's user what to do, which is not reload(). */
static void auto_reset_leaves_partition_and_full_resets_to_the_user(void **state) {
  (void)state;
  const fault faults[] = {kExchangeError, kHostLinkError};
  for (size_t i = 0; i < 2; ++i) {
    mrt_model_runner_config config;
    mrt_model_runner_config_init(&config);
    config.auto_reset = true;
    mrt_model_runner *runner = test_make_runner("add_one", &config);
    const stream_outcome outcome = stream_with_error(runner, 100, 30, faults[i]);
    assert_int_equal(outcome.ok + outcome.device_errors, 100);
    assert_true(outcome.device_errors >= 1);
    float x[ADD_ONE_N] = {0}, y[ADD_ONE_N];
    mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
    expect_last_error(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_DEVICE_ERROR, "out of service");
    test_expect_contains(mrt_last_error_message(), "auto_reset recovers from IPU_RESET errors only");
    test_expect_contains(mrt_last_error_message(), "destroy this runner and create a new one");
    if (strstr(mrt_last_error_message(), "reload") != NULL) fail_msg("%s", mrt_last_error_message());
    assert_int_equal(mrt_last_error_recovery_action(), faults[i].action);
    mrt_model_runner_destroy(runner);

    /* As the message says: a new runner resets the device and serves. */
    runner = test_make_runner("add_one", &config);
    unsigned seed = 3;
    expect_add_one(runner, 1, &seed);
    mrt_model_runner_destroy(runner);
  }
}

/* ---- destruction in flight ---- */

static void destroying_the_runner_cancels_requests_in_flight(void **state) {
  (void)state;
  /* With batching and no timeouts single samples of a batch-4 model never
   * run: they stay pending until the runner goes. */
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.batching_dim = 0;
  config.timeout_ns = MRT_FOREVER;
  mrt_model_runner *runner = test_make_runner("add_one_b4", &config);
  mrt_model_runner_config got;
  mrt_model_runner_config_init(&got);
  assert_int_equal(mrt_model_runner_get_config(runner, &got), MRT_OK);
  assert_int_equal(got.timeout_ns, MRT_FOREVER);
  float x[3][ADD_ONE_N], y[3][ADD_ONE_N];
  mrt_future *futures[3];
  for (int i = 0; i < 3; ++i) {
    for (int k = 0; k < ADD_ONE_N; ++k) x[i][k] = 1.0f;
    mrt_tensor_view in = {"x", x[i], sizeof x[i]}, out = {"y", y[i], sizeof y[i]};
    assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &futures[i]), MRT_OK);
  }
  assert_int_equal(mrt_future_wait(futures[0], 1 * MS), MRT_DEADLINE_EXCEEDED);
  mrt_model_runner_destroy(runner);
  for (int i = 0; i < 3; ++i) {
    assert_true(mrt_future_is_ready(futures[i]));
    assert_int_equal(mrt_future_wait(futures[i], 0), MRT_CANCELLED);
    test_expect_contains(mrt_future_error_message(futures[i]), "destroyed");
    mrt_future_destroy(futures[i]);
  }

  /* A stream of requests: each completes or is cancelled, none hangs. */
  enum { REQUESTS = 200 };
  static float xs[REQUESTS][ADD_ONE_N], ys[REQUESTS][ADD_ONE_N];
  mrt_future *stream[REQUESTS];
  runner = test_make_runner("add_one", NULL);
  unsigned seed = 4;
  for (int i = 0; i < REQUESTS; ++i) {
    test_fill_random(xs[i], ADD_ONE_N, &seed, -4, 4);
    mrt_tensor_view in = {"x", xs[i], sizeof xs[i]}, out = {"y", ys[i], sizeof ys[i]};
    assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &stream[i]), MRT_OK);
  }
  mrt_model_runner_destroy(runner);
  int ok = 0, cancelled = 0;
  for (int i = 0; i < REQUESTS; ++i) {
    const mrt_status status = mrt_future_wait(stream[i], 0);
    if (status == MRT_OK) {
      ++ok;
      for (int k = 0; k < ADD_ONE_N; ++k) assert_float_equal(ys[i][k], xs[i][k] + 1.0f, 0);
    } else {
      assert_int_equal(status, MRT_CANCELLED);
      ++cancelled;
    }
    mrt_future_destroy(stream[i]);
  }
  assert_int_equal(ok + cancelled, REQUESTS);
}

/* ---- batch sizes ---- */

static void batch_sizes_without_batching_dim(void **state) {
  (void)state;
  mrt_model_runner *runner = test_make_runner("add_one_b4", NULL);
  unsigned seed = 6;
  float x[12 * ADD_ONE_N] = {0}, y[12 * ADD_ONE_N];
  for (int samples = 1; samples <= 12; ++samples) {
    if (samples % 4 == 0) {
      expect_add_one(runner, samples, &seed); /* whole model batches */
      continue;
    }
    mrt_tensor_view in = {"x", x, (uint64_t)samples * ADD_ONE_N * 4}, out = {"y", y, sizeof y};
    char expected[96];
    snprintf(expected, sizeof expected, "input 'x': expected 256 bytes, got %d (or a whole multiple of it)",
             samples * ADD_ONE_N * 4);
    expect_last_error(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_INVALID_ARGUMENT, expected);
  }
  expect_add_one(runner, 4, &seed); /* still serving */
  mrt_model_runner_destroy(runner);
}

static void batch_sizes_with_batching_dim(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.batching_dim = 0;
  config.timeout_ns = MRT_FOREVER;
  config.batch_size_timeout_ns = 5 * MS;
  config.is_batch_size_timeout_enabled = true;
  mrt_model_runner *runner = test_make_runner("add_one_b4", &config);
  unsigned seed = 8;
  for (int samples = 1; samples <= 12; ++samples) expect_add_one(runner, samples, &seed);

  /* Async, sizes mixed: split across runs or merged. */
  enum { REQUESTS = 120 };
  static float xs[REQUESTS][12 * ADD_ONE_N], ys[REQUESTS][12 * ADD_ONE_N];
  int sizes[REQUESTS];
  mrt_future *futures[REQUESTS];
  for (int i = 0; i < REQUESTS; ++i) {
    sizes[i] = 1 + rand_r(&seed) % 12;
    test_fill_random(xs[i], (size_t)sizes[i] * ADD_ONE_N, &seed, -4, 4);
    const uint64_t bytes = (uint64_t)sizes[i] * ADD_ONE_N * sizeof(float);
    mrt_tensor_view in = {"x", xs[i], bytes}, out = {"y", ys[i], bytes};
    assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 0, &futures[i]), MRT_OK);
  }
  for (int i = 0; i < REQUESTS; ++i) {
    assert_int_equal(mrt_future_wait(futures[i], WAIT_NS), MRT_OK);
    for (int k = 0; k < sizes[i] * ADD_ONE_N; ++k) assert_float_equal(ys[i][k], xs[i][k] + 1.0f, 0);
    mrt_future_destroy(futures[i]);
  }
  /* Not a whole number of samples. */
  float x[ADD_ONE_N + 1] = {0}, y[ADD_ONE_N + 1];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_INVALID_ARGUMENT, "input 'x'");
  expect_add_one(runner, 3, &seed);
  mrt_model_runner_destroy(runner);
}

/* ---- wrong arguments ---- */

static void wrong_arguments_name_the_bad_value_and_the_runner_serves_on(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.replication_factor = 2;
  mrt_model_runner *runner = test_make_runner("add_one", &config);
  unsigned seed = 12;
  float x[ADD_ONE_N] = {0}, y[ADD_ONE_N], long_y[ADD_ONE_N + 4];
  mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};

  mrt_tensor_view unknown_out = {"z", y, sizeof y};
  mrt_tensor_view outs[2] = {{"y", y, sizeof y}, {"z", y, sizeof y}};
  expect_last_error(mrt_model_runner_execute(runner, &in, 1, outs, 2, 0), MRT_NOT_FOUND, "'z'");
  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &unknown_out, 1, 0), MRT_NOT_FOUND, "(missing: y)");
  mrt_tensor_view wrong_out = {"y", long_y, sizeof long_y};
  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &wrong_out, 1, 0), MRT_INVALID_ARGUMENT, "80");
  mrt_tensor_view null_data = {"x", NULL, sizeof x};
  expect_last_error(mrt_model_runner_execute(runner, &null_data, 1, &out, 1, 0), MRT_INVALID_ARGUMENT, "x");
  expect_last_error(mrt_model_runner_execute(runner, NULL, 1, &out, 1, 0), MRT_INVALID_ARGUMENT, "inputs");
  expect_last_error(mrt_model_runner_execute(runner, &in, 1, &out, 1, 2), MRT_INVALID_ARGUMENT,
                    "replica_id 2 out of range: the runner has 2 replicas");
  mrt_future *future = NULL;
  expect_last_error(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, 7, &future), MRT_INVALID_ARGUMENT,
                    "replica_id 7");
  assert_null(future);
  mrt_tensor_memory *memory = NULL;
  expect_last_error(mrt_model_runner_execute_alloc(runner, &unknown_out, 1, 0, &memory), MRT_NOT_FOUND,
                    "unknown input 'z'");
  assert_null(memory);
  mrt_request_times times = {0};
  times.struct_size = sizeof times;
  expect_last_error(mrt_model_runner_statistics_mean(runner, 5, &times), MRT_INVALID_ARGUMENT, "replica_id 5");

  /* Both replicas still serve. */
  for (uint32_t replica = 0; replica < 2; ++replica) {
    test_fill_random(x, ADD_ONE_N, &seed, -4, 4);
    assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, replica), MRT_OK);
    for (int k = 0; k < ADD_ONE_N; ++k) assert_float_equal(y[k], x[k] + 1.0f, 0);
  }
  mrt_model_runner_destroy(runner);
}

/* ---- concurrent clients ---- */

typedef struct client {
  mrt_model_runner *runner;
  unsigned seed;
  int requests;
  int failures; /* requests whose outputs were wrong or that failed */
} client;

/* Sync and async requests in turn, on both replicas; every output checked. */
static void *serve_client(void *arg) {
  client *c = arg;
  for (int i = 0; i < c->requests; ++i) {
    float x[ADD_ONE_N], y[ADD_ONE_N];
    test_fill_random(x, ADD_ONE_N, &c->seed, -4, 4);
    mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
    const uint32_t replica = (uint32_t)i % 2;
    mrt_status status;
    if (i % 2 == 0) {
      status = mrt_model_runner_execute(c->runner, &in, 1, &out, 1, replica);
    } else {
      mrt_future *future = NULL;
      status = mrt_model_runner_execute_async(c->runner, &in, 1, &out, 1, replica, &future);
      if (status == MRT_OK) status = mrt_future_wait(future, WAIT_NS);
      mrt_future_destroy(future);
    }
    int wrong = status != MRT_OK;
    for (int k = 0; k < ADD_ONE_N && !wrong; ++k) wrong = y[k] != x[k] + 1.0f;
    c->failures += wrong;
  }
  return NULL;
}

static void concurrent_clients_with_thread_safe(void **state) {
  (void)state;
  enum { CLIENTS = 4, REQUESTS = 400 };
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.thread_safe = true;
  config.replication_factor = 2;
  mrt_model_runner *runner = test_make_runner("add_one", &config);
  client clients[CLIENTS];
  pthread_t threads[CLIENTS];
  for (int t = 0; t < CLIENTS; ++t) {
    clients[t] = (client){runner, (unsigned)(100 + t), REQUESTS, 0};
    assert_int_equal(pthread_create(&threads[t], NULL, serve_client, &clients[t]), 0);
  }
  for (int t = 0; t < CLIENTS; ++t) assert_int_equal(pthread_join(threads[t], NULL), 0);
  for (int t = 0; t < CLIENTS; ++t) assert_int_equal(clients[t].failures, 0);
  mrt_request_times counts = {0};
  counts.struct_size = sizeof counts;
  assert_int_equal(mrt_model_runner_statistics_count(runner, 1, &counts), MRT_OK);
  assert_float_equal(counts.request_us, CLIENTS * REQUESTS / 2, 0);
  mrt_model_runner_destroy(runner);
}

static void reports_its_model_and_config(void **state) {
  (void)state;
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.replication_factor = 2;
  config.batching_dim = 0;
  config.timeout_ns = 7 * MS;
  config.max_look_ahead = 3;
  config.batch_size_timeout_ns = 4 * MS;
  config.is_batch_size_timeout_enabled = true;
  mrt_model_runner *runner = test_make_runner("add_one_b4", &config);
  mrt_model_runner_config got;
  memset(&got, 0xab, sizeof got);
  got.struct_size = sizeof got;
  assert_int_equal(mrt_model_runner_get_config(runner, &got), MRT_OK);
  assert_int_equal(got.struct_size, sizeof got);
  assert_int_equal(got.replication_factor, 2);
  assert_int_equal(got.batching_dim, 0);
  assert_int_equal(got.timeout_ns, 7 * MS);
  assert_int_equal(got.max_look_ahead, 3);
  assert_int_equal(got.batch_size_timeout_ns, 4 * MS);
  assert_int_equal(got.data_parallel_timeout_ns, -1);
  assert_true(got.is_batch_size_timeout_enabled);
  assert_true(got.check_package_hash);
  assert_false(got.auto_reset);
  assert_int_equal(got.ring_buffer_size_multiplier, 2);
  assert_null(got.frozen_inputs);
  assert_int_equal(got.num_frozen_inputs, 0);
  assert_null(got.flush_callback);
  got.struct_size = 4;
  expect_last_error(mrt_model_runner_get_config(runner, &got), MRT_INVALID_ARGUMENT, "out_config->struct_size is 4");

  mrt_model *model = NULL;
  assert_int_equal(mrt_model_runner_model(runner, &model), MRT_OK);
  mrt_model_runner_destroy(runner); /* the model handle lives on */
  mrt_anchor_info x = {.struct_size = sizeof x};
  assert_int_equal(mrt_model_anchor_by_name(model, "x", &x), MRT_OK);
  assert_int_equal(x.size_in_bytes, 4 * ADD_ONE_N * 4);
  mrt_model_destroy(model);
  expect_last_error(mrt_model_runner_model(NULL, &model), MRT_INVALID_ARGUMENT, "runner must not be NULL");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(save_outputs_are_written_after_destruction),
      cmocka_unit_test(without_run_save_programs_nothing_is_saved),
      cmocka_unit_test(frozen_inputs_override_tensor_data),
      cmocka_unit_test(conditional_routing_follows_the_flag),
      cmocka_unit_test(auto_reset_recovers_from_device_errors_mid_stream),
      cmocka_unit_test(without_auto_reset_pending_and_later_requests_fail),
      cmocka_unit_test(auto_reset_leaves_partition_and_full_resets_to_the_user),
      cmocka_unit_test(destroying_the_runner_cancels_requests_in_flight),
      cmocka_unit_test(batch_sizes_without_batching_dim),
      cmocka_unit_test(batch_sizes_with_batching_dim),
      cmocka_unit_test(wrong_arguments_name_the_bad_value_and_the_runner_serves_on),
      cmocka_unit_test(concurrent_clients_with_thread_safe),
      cmocka_unit_test(reports_its_model_and_config),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
