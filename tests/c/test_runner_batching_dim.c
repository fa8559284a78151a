/* Through the C API: dynamic batch sizing along dimension 1 (batching_dim 1)
 * on time_major, whose tensors are [time 4, batch 4, features 8] and whose
 * output is a running sum over time, so a sample gathered from the wrong
 * place gives wrong numbers; requests of 1 to 12 samples, sync and async,
 * replicas 1 and 2; tensors that cannot batch along the dimension; and a
 * frozen input that fills a remote buffer (remote_buffer), kept across a
 * device reset. Models written by mrt-gen (MRT_TEST_RUNNER_MODELS). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

enum { STEPS = 4, WIDTH = 8, SAMPLE = STEPS * WIDTH, MAX_SAMPLES = 12, REQUESTS = 200 };
#define MS 1000000LL
#define WAIT_NS (10000 * MS)

/* time_major's math on a request of n samples, [STEPS, n, WIDTH]. */
static void running_sum(const float *x, float *y, size_t n) {
  memcpy(y, x, n * SAMPLE * sizeof(float));
  for (size_t t = 1; t < STEPS; ++t) {
    for (size_t i = 0; i < n * WIDTH; ++i) y[t * n * WIDTH + i] += y[(t - 1) * n * WIDTH + i];
  }
}

static void expect_running_sum(const float *x, const float *y, size_t n) {
  float expected[MAX_SAMPLES * SAMPLE];
  running_sum(x, expected, n);
  for (size_t i = 0; i < n * SAMPLE; ++i) {
    if (y[i] != expected[i]) fail_msg("%zu samples: element %zu is %g, expected %g", n, i, y[i], expected[i]);
  }
}

static mrt_model_runner_config along_dimension_1(void) {
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.batching_dim = 1;
  config.timeout_ns = MRT_FOREVER;
  config.batch_size_timeout_ns = 2 * MS;
  config.is_batch_size_timeout_enabled = true;
  return config;
}

typedef struct request {
  float x[MAX_SAMPLES * SAMPLE], y[MAX_SAMPLES * SAMPLE];
  size_t samples;
  mrt_future *future;
} request;

static void any_batch_size_along_dimension_1_async(void **state) {
  (void)state;
  request *requests = calloc(REQUESTS, sizeof(request));
  assert_non_null(requests);
  for (uint32_t replicas = 1; replicas <= 2; ++replicas) {
    mrt_model_runner_config config = along_dimension_1();
    config.replication_factor = replicas;
    mrt_model_runner *runner = test_make_runner("time_major_b4", &config);
    unsigned seed = replicas;
    for (int i = 0; i < REQUESTS; ++i) {
      request *r = &requests[i];
      r->samples = 1 + (size_t)rand_r(&seed) % MAX_SAMPLES;
      test_fill_random(r->x, r->samples * SAMPLE, &seed, -1, 1);
      const uint64_t bytes = r->samples * SAMPLE * sizeof(float);
      mrt_tensor_view in = {"x", r->x, bytes}, out = {"y", r->y, bytes};
      assert_int_equal(mrt_model_runner_execute_async(runner, &in, 1, &out, 1, (uint32_t)i % replicas, &r->future),
                       MRT_OK);
    }
    for (int i = 0; i < REQUESTS; ++i) {
      assert_int_equal(mrt_future_wait(requests[i].future, WAIT_NS), MRT_OK);
      expect_running_sum(requests[i].x, requests[i].y, requests[i].samples);
      mrt_future_destroy(requests[i].future);
    }
    mrt_model_runner_destroy(runner);
  }
  free(requests);
}

static void sync_requests_along_dimension_1(void **state) {
  (void)state;
  const mrt_model_runner_config config = along_dimension_1();
  mrt_model_runner *runner = test_make_runner("time_major_b4", &config);
  unsigned seed = 7;
  static const size_t sizes[] = {1, 2, 3, 4, 5, 8, 11, 12};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
    float x[MAX_SAMPLES * SAMPLE], y[MAX_SAMPLES * SAMPLE];
    const size_t n = sizes[k];
    test_fill_random(x, n * SAMPLE, &seed, -1, 1);
    mrt_tensor_view in = {"x", x, n * SAMPLE * sizeof(float)}, out = {"y", y, n * SAMPLE * sizeof(float)};
    assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
    expect_running_sum(x, y, n);
  }
  /* A ragged request names the sample size, and the runner serves on. */
  float x[SAMPLE + WIDTH], y[SAMPLE];
  test_fill_random(x, SAMPLE + WIDTH, &seed, -1, 1);
  mrt_tensor_view ragged = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  assert_int_equal(mrt_model_runner_execute(runner, &ragged, 1, &out, 1, 0), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "input 'x': expected 128 bytes, got 160 (a whole number of samples");
  mrt_tensor_view in = {"x", x, sizeof y};
  assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
  expect_running_sum(x, y, 1);
  mrt_model_runner_destroy(runner);
}

static void tensors_that_cannot_batch_along_the_dimension_are_refused(void **state) {
  (void)state;
  mrt_model *model = NULL;
  mrt_model_runner *runner = NULL;
  mrt_model_runner_config config = along_dimension_1();
  /* mlp: dimension 1 is 784 pixels in, 10 classes out. */
  const char *path = test_model_path("MRT_TEST_RUNNER_MODELS", "mlp");
  assert_int_equal(mrt_model_load(&path, 1, &model), MRT_OK);
  assert_int_equal(mrt_model_runner_create(model, &config, &runner), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(),
                       "batching_dim 1: input 'image' is F32[1,784], 784 in that dimension, but output 'probs' is "
                       "F32[1,10], 10");
  config.batching_dim = 2;
  assert_int_equal(mrt_model_runner_create(model, &config, &runner), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "batching_dim 2: input 'image': tensor F32[1,784] has no dimension 2");
  assert_null(runner);
  mrt_model_destroy(model);
}

/* ---- frozen input in a remote buffer ---- */

static void frozen_input_fills_a_remote_buffer_across_a_reset(void **state) {
  (void)state;
  float w[WIDTH];
  for (int i = 0; i < WIDTH; ++i) w[i] = 10.0f * (float)(i + 1);
  mrt_tensor_view frozen = {"w", w, sizeof w};
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.frozen_inputs = &frozen;
  config.num_frozen_inputs = 1;
  config.auto_reset = true;
  mrt_model_runner *runner = test_make_runner("remote_buffer_b2", &config);
  memset(w, 0, sizeof w); /* the runner keeps its own copy */
  unsigned seed = 3;
  for (int round = 0; round < 4; ++round) {
    if (round == 1) {
      /* A device error resets the device: the buffer is refilled from the frozen data. */
      assert_int_equal(mrt_model_runner_insert_simulated_error(runner, MRT_SIMULATED_TILE_EXCEPTION, "fetch_w", 0),
                       MRT_OK);
      float x[2 * WIDTH] = {0}, y[2 * WIDTH];
      mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
      assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_DEVICE_ERROR);
    }
    float x[2 * WIDTH], y[2 * WIDTH];
    test_fill_random(x, 2 * WIDTH, &seed, -1, 1);
    mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
    assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
    for (int i = 0; i < 2 * WIDTH; ++i) assert_float_equal(y[i], x[i] + 10.0f * (float)(i % WIDTH + 1), 1e-6);
  }
  mrt_model_runner_destroy(runner);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(any_batch_size_along_dimension_1_async),
      cmocka_unit_test(sync_requests_along_dimension_1),
      cmocka_unit_test(tensors_that_cannot_batch_along_the_dimension_are_refused),
      cmocka_unit_test(frozen_input_fills_a_remote_buffer_across_a_reset),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
