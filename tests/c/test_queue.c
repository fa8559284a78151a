/* The queue part of the C API without a session: a queue manager over the
 * add_one model (x F32[4,2] -> y F32[4,2], from mrt-gen in
 * MRT_TEST_QUEUE_MODELS), with the test playing the device through
 * mrt_queue_manager_transfer: packing and splitting of batches, pointers
 * read when the device transfers, callbacks and user_data_free, flush,
 * disconnect and reset, timeouts, a producer thread, and bad arguments. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "queue_test_support.h"

static mrt_model *g_model;

static int setup(void **state) {
  (void)state;
  const char *dir = getenv("MRT_TEST_QUEUE_MODELS");
  assert_non_null(dir);
  char path[1024];
  snprintf(path, sizeof path, "%s/add_one_b4.popef", dir);
  const char *paths[] = {path};
  assert_int_equal(mrt_model_load(paths, 1, &g_model), MRT_OK);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  mrt_model_destroy(g_model);
  return 0;
}

static mrt_queue_manager *make_manager(const mrt_queue_manager_config *config) {
  mrt_queue_manager *manager = NULL;
  assert_int_equal(mrt_queue_manager_create(g_model, config, &manager), MRT_OK);
  assert_non_null(manager);
  return manager;
}

static void test_lists_queues_and_describes_them(void **state) {
  (void)state;
  mrt_queue_manager *manager = make_manager(NULL);
  size_t count = 0;
  const char *name = NULL;
  assert_int_equal(mrt_queue_manager_num_inputs(manager, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_int_equal(mrt_queue_manager_input_name(manager, 0, &name), MRT_OK);
  assert_string_equal(name, "x");
  assert_int_equal(mrt_queue_manager_num_outputs(manager, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_int_equal(mrt_queue_manager_output_name(manager, 0, &name), MRT_OK);
  assert_string_equal(name, "y");
  assert_int_equal(mrt_queue_manager_input_name(manager, 1, &name), MRT_INVALID_ARGUMENT);
  assert_string_equal(mrt_last_error_message(),
                      "mrt_queue_manager_input_name: input queue index 1 is out of range (the manager has 1)");

  mrt_input_queue *x = NULL;
  assert_int_equal(mrt_queue_manager_input_queue(manager, "x", &x), MRT_OK);
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  assert_int_equal(mrt_input_queue_info(x, &info), MRT_OK);
  assert_string_equal(info.name, "x");
  assert_int_equal(info.data_type, MRT_F32);
  assert_int_equal(info.rank, 2);
  assert_int_equal(info.shape[0], 4);
  assert_int_equal(info.shape[1], 2);
  assert_int_equal(info.size_in_bytes, 32);
  assert_int_equal(info.sample_size_bytes, 8);
  assert_int_equal(info.num_buffers, 256); /* default multiplier 64 x batch 4 */
  assert_true(info.connected);

  mrt_output_queue *y = NULL;
  assert_int_equal(mrt_queue_manager_output_queue(manager, "y", &y), MRT_OK);
  assert_int_equal(mrt_output_queue_info(y, &info), MRT_OK);
  assert_string_equal(info.name, "y");
  mrt_queue_manager_destroy(manager);
}

static void test_ring_size_multiplier(void **state) {
  (void)state;
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  assert_int_equal(config.ring_size_multiplier, 64);
  assert_int_equal(config.load_save_ring_size_multiplier, 1);
  assert_int_equal(config.timeout_ns, MRT_FOREVER);
  config.ring_size_multiplier = 3;
  mrt_queue_manager *manager = make_manager(&config);
  mrt_input_queue *x = NULL;
  assert_int_equal(mrt_queue_manager_input_queue(manager, "x", &x), MRT_OK);
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  assert_int_equal(mrt_input_queue_info(x, &info), MRT_OK);
  assert_int_equal(info.num_buffers, 12);
  mrt_queue_manager_destroy(manager);

  config.ring_size_multiplier = 0;
  mrt_queue_manager *bad = NULL;
  assert_int_equal(mrt_queue_manager_create(g_model, &config, &bad), MRT_INVALID_ARGUMENT);
  assert_string_equal(mrt_last_error_message(),
                      "mrt_queue_manager_create: config->ring_size_multiplier must be at least 1, got 0");
  assert_null(bad);
}

static int64_t num_buffers_of_x_and_y(mrt_queue_manager *manager, int64_t *y_buffers) {
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  assert_int_equal(mrt_queue_manager_output_queue(manager, "y", &y), MRT_OK);
  assert_int_equal(mrt_output_queue_info(y, &info), MRT_OK);
  *y_buffers = info.num_buffers;
  assert_int_equal(mrt_queue_manager_input_queue(manager, "x", &x), MRT_OK);
  assert_int_equal(mrt_input_queue_info(x, &info), MRT_OK);
  return info.num_buffers;
}

static void expect_refused(const mrt_ring_size_override *overrides, size_t count, mrt_status status,
                           const char *message) {
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.ring_size_overrides = overrides;
  config.num_ring_size_overrides = count;
  mrt_queue_manager *bad = NULL;
  assert_int_equal(mrt_queue_manager_create(g_model, &config, &bad), status);
  assert_string_equal(mrt_last_error_message(), message);
  assert_null(bad);
}

/* x and y are both Main anchors: an override gives x its own multiplier. */
static void test_ring_size_overrides(void **state) {
  (void)state;
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  assert_null(config.ring_size_overrides);
  assert_int_equal(config.num_ring_size_overrides, 0);
  const mrt_ring_size_override five_for_x[] = {{"x", 5}};
  config.ring_size_overrides = five_for_x;
  config.num_ring_size_overrides = 1;
  mrt_queue_manager *manager = make_manager(&config);
  int64_t y_buffers = 0;
  assert_int_equal(num_buffers_of_x_and_y(manager, &y_buffers), 20); /* 5 x batch 4 */
  assert_int_equal(y_buffers, 256);                                   /* the group's 64 x 4 */
  mrt_queue_manager_destroy(manager);

  expect_refused(NULL, 1, MRT_INVALID_ARGUMENT,
                 "mrt_queue_manager_create: config->ring_size_overrides is NULL with num_ring_size_overrides 1");
  const mrt_ring_size_override no_name[] = {{NULL, 2}};
  expect_refused(no_name, 1, MRT_INVALID_ARGUMENT,
                 "mrt_queue_manager_create: config->ring_size_overrides[0].anchor_name is NULL");
  const mrt_ring_size_override zero[] = {{"y", 3}, {"x", 0}};
  expect_refused(zero, 2, MRT_INVALID_ARGUMENT,
                 "mrt_queue_manager_create: config->ring_size_overrides[1] ('x'): the multiplier must be at "
                 "least 1, got 0");
  const mrt_ring_size_override unknown[] = {{"z", 3}};
  expect_refused(unknown, 1, MRT_NOT_FOUND,
                 "mrt_queue_manager_create: config->ring_size_overrides[0]: the model has no anchor named 'z'");
  const mrt_ring_size_override twice[] = {{"x", 3}, {"x", 4}};
  expect_refused(twice, 2, MRT_INVALID_ARGUMENT,
                 "mrt_queue_manager_create: config->ring_size_overrides[1]: anchor 'x' is named twice");
}

static void test_packs_and_splits_user_batches(void **state) {
  (void)state;
  const queue_fixture f = make_queue_fixture(g_model);

  /* 1 sample, then 6 samples, then 1: two device transfers of 4 samples. */
  float in[16], out[16];
  for (int i = 0; i < 16; ++i) {
    in[i] = (float)i;
    out[i] = -1.0f;
  }
  counters in_counts = {0, 0, 0}, out_counts = {0, 0, 0};
  assert_int_equal(mrt_input_queue_enqueue(f.x, in, 8, on_start, on_complete, &in_counts, on_free), MRT_OK);
  assert_int_equal(mrt_input_queue_enqueue(f.x, in + 2, 48, NULL, on_complete, &in_counts, NULL), MRT_OK);
  assert_int_equal(mrt_input_queue_enqueue(f.x, in + 14, 8, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(f.y, out, 40, on_complete, &out_counts, on_free), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(f.y, out + 10, 24, on_complete, &out_counts, NULL), MRT_OK);

  /* Pointers, not bytes: this change before the transfer is what the device sees. */
  in[15] = 100.0f;
  run_device_once(f.manager);
  assert_int_equal(in_counts.started, 1);
  assert_int_equal(in_counts.completed, 1); /* the 6-sample buffer is half read */
  assert_int_equal(out_counts.completed, 0); /* the 5-sample buffer holds 4 */
  run_device_once(f.manager);
  assert_int_equal(in_counts.completed, 2);
  assert_int_equal(out_counts.completed, 2);
  for (int i = 0; i < 15; ++i) assert_true(out[i] == (float)i + 1.0f);
  assert_true(out[15] == 101.0f);

  mrt_queue_manager_destroy(f.manager);
  /* The user data is freed exactly once, at the latest with the manager. */
  assert_int_equal(in_counts.freed, 1);
  assert_int_equal(out_counts.freed, 1);
}

static void test_flush_disconnect_reset(void **state) {
  (void)state;
  const queue_fixture f = make_queue_fixture(g_model);
  float in[2] = {5.0f, 6.0f}, out[2] = {0.0f, 0.0f};
  assert_int_equal(mrt_input_queue_enqueue(f.x, in, 8, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(f.y, out, 8, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_queue_manager_flush_all(f.manager), MRT_OK);
  float device[8];
  assert_int_equal(mrt_queue_manager_transfer(f.manager, "x", device), MRT_OK);
  assert_true(device[0] == 5.0f && device[1] == 6.0f);
  for (int i = 2; i < 8; ++i) assert_true(device[i] == 0.0f); /* padded */
  assert_int_equal(mrt_queue_manager_transfer(f.manager, "y", device), MRT_OK);
  assert_true(out[0] == 5.0f && out[1] == 6.0f);

  assert_int_equal(mrt_queue_manager_disconnect_all(f.manager), MRT_OK);
  assert_int_equal(mrt_input_queue_enqueue(f.x, in, 8, NULL, NULL, NULL, NULL), MRT_CANCELLED);
  assert_string_equal(mrt_last_error_message(), "mrt_input_queue_enqueue: input queue 'x' is disconnected");
  /* Disconnected: the device gets zeros at once instead of blocking. */
  for (int i = 0; i < 8; ++i) device[i] = -1.0f;
  assert_int_equal(mrt_queue_manager_transfer(f.manager, "x", device), MRT_OK);
  for (int i = 0; i < 8; ++i) assert_true(device[i] == 0.0f);
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  assert_int_equal(mrt_input_queue_info(f.x, &info), MRT_OK);
  assert_false(info.connected);

  assert_int_equal(mrt_queue_manager_reset_all(f.manager), MRT_OK);
  assert_int_equal(mrt_input_queue_info(f.x, &info), MRT_OK);
  assert_true(info.connected);
  assert_int_equal(mrt_input_queue_disconnect(f.x), MRT_OK);
  assert_int_equal(mrt_input_queue_reset(f.x), MRT_OK);
  assert_int_equal(mrt_output_queue_disconnect(f.y), MRT_OK);
  assert_int_equal(mrt_output_queue_reset(f.y), MRT_OK);
  assert_int_equal(mrt_input_queue_flush(f.x), MRT_OK);
  assert_int_equal(mrt_output_queue_flush(f.y), MRT_OK);
  run_device_once(f.manager); /* the whole dummy transfer */
  mrt_queue_manager_destroy(f.manager);
}

typedef struct timeout_state {
  mrt_input_queue *x;
  int calls;
  char name[16];
  int32_t direction;
  int64_t bytes_done;
  int freed;
} timeout_state;

static void on_timeout(const char *name, int32_t direction, int64_t bytes_done, void *user_data) {
  timeout_state *s = (timeout_state *)user_data;
  s->calls++;
  snprintf(s->name, sizeof s->name, "%s", name);
  s->direction = direction;
  s->bytes_done = bytes_done;
  /* Same thread as the producer here, so flushing cannot overlap with it. */
  mrt_input_queue_flush(s->x);
}

static void free_timeout_state(void *user_data) { ((timeout_state *)user_data)->freed++; }

static void test_timeout_callback_pads_a_partial_batch(void **state) {
  (void)state;
  timeout_state s;
  memset(&s, 0, sizeof s);
  mrt_queue_manager_config config;
  mrt_queue_manager_config_init(&config);
  config.timeout_ns = 2000000; /* 2 ms */
  config.timeout_fn = on_timeout;
  config.timeout_user_data = &s;
  config.timeout_user_data_free = free_timeout_state;
  mrt_queue_manager *manager = make_manager(&config);
  assert_int_equal(mrt_queue_manager_input_queue(manager, "x", &s.x), MRT_OK);
  float in[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  assert_int_equal(mrt_input_queue_enqueue(s.x, in, 16, NULL, NULL, NULL, NULL), MRT_OK);
  float device[8];
  assert_int_equal(mrt_queue_manager_transfer(manager, "x", device), MRT_OK);
  assert_int_equal(s.calls, 1);
  assert_string_equal(s.name, "x");
  assert_int_equal(s.direction, MRT_TENSOR_INPUT);
  assert_int_equal(s.bytes_done, 16);
  assert_true(device[3] == 4.0f && device[4] == 0.0f && device[7] == 0.0f);
  assert_int_equal(s.freed, 0);
  mrt_queue_manager_destroy(manager);
  assert_int_equal(s.freed, 1);

  /* The free runs once even when creation fails. */
  s.freed = 0;
  config.timeout_ns = 0; /* a zero period would time out continuously */
  mrt_queue_manager *bad = NULL;
  assert_int_equal(mrt_queue_manager_create(g_model, &config, &bad), MRT_INVALID_ARGUMENT);
  assert_non_null(strstr(mrt_last_error_message(), "config->timeout_ns is 0"));
  assert_non_null(strstr(mrt_last_error_message(), "MRT_FOREVER"));
  assert_int_equal(s.freed, 1);
  assert_int_equal(mrt_queue_manager_create(NULL, &config, &bad), MRT_INVALID_ARGUMENT);
  assert_int_equal(s.freed, 2);
}

#define SAMPLES 4000

typedef struct producer_args {
  mrt_input_queue *x;
  mrt_output_queue *y;
  float *in;
  float *out;
} producer_args;

static void *produce(void *arg) {
  producer_args *p = (producer_args *)arg;
  for (int s = 0; s < SAMPLES; ++s) {
    if (mrt_output_queue_enqueue(p->y, p->out + 2 * s, 8, NULL, NULL, NULL) != MRT_OK) return p;
    if (mrt_input_queue_enqueue(p->x, p->in + 2 * s, 8, NULL, NULL, NULL, NULL) != MRT_OK) return p;
  }
  return NULL;
}

static void test_producer_thread_and_device_thread(void **state) {
  (void)state;
  mrt_queue_manager *manager = make_manager(NULL);
  producer_args p;
  assert_int_equal(mrt_queue_manager_input_queue(manager, "x", &p.x), MRT_OK);
  assert_int_equal(mrt_queue_manager_output_queue(manager, "y", &p.y), MRT_OK);
  p.in = malloc(sizeof(float) * 2 * SAMPLES);
  p.out = malloc(sizeof(float) * 2 * SAMPLES);
  assert_non_null(p.in);
  assert_non_null(p.out);
  for (int i = 0; i < 2 * SAMPLES; ++i) p.in[i] = (float)i;
  pthread_t producer;
  assert_int_equal(pthread_create(&producer, NULL, produce, &p), 0);
  for (int t = 0; t < SAMPLES / 4; ++t) run_device_once(manager); /* this thread is the device */
  void *result = &p;
  assert_int_equal(pthread_join(producer, &result), 0);
  assert_null(result);
  for (int i = 0; i < 2 * SAMPLES; ++i) assert_true(p.out[i] == (float)i + 1.0f);
  free(p.in);
  free(p.out);
  mrt_queue_manager_destroy(manager);
}

static void test_bad_arguments(void **state) {
  (void)state;
  mrt_queue_manager *manager = make_manager(NULL);
  mrt_input_queue *x = NULL;
  mrt_output_queue *y = NULL;
  assert_int_equal(mrt_queue_manager_input_queue(manager, "nope", &x), MRT_NOT_FOUND);
  assert_string_equal(mrt_last_error_message(), "mrt_queue_manager_input_queue: no input queue named 'nope' (inputs [x], outputs [y])");
  assert_null(x);
  assert_int_equal(mrt_queue_manager_input_queue(NULL, "x", &x), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_queue_manager_input_queue(manager, NULL, &x), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_queue_manager_output_queue(manager, "x", &y), MRT_NOT_FOUND);
  assert_int_equal(mrt_queue_manager_transfer(manager, "z", NULL), MRT_NOT_FOUND);
  assert_int_equal(mrt_queue_manager_input_queue(manager, "x", &x), MRT_OK);

  float in[2] = {0};
  counters c = {0, 0, 0};
  assert_int_equal(mrt_input_queue_enqueue(x, in, 12, NULL, NULL, &c, on_free), MRT_INVALID_ARGUMENT);
  assert_string_equal(mrt_last_error_message(),
                      "mrt_input_queue_enqueue: input queue 'x': 12 bytes is not a positive multiple of the sample size "
                      "(8 bytes of F32[4,2])");
  assert_int_equal(c.freed, 1); /* freed also when the call fails */
  assert_int_equal(mrt_input_queue_enqueue(x, NULL, 8, NULL, NULL, NULL, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_input_queue_enqueue(NULL, in, 8, NULL, NULL, &c, on_free), MRT_INVALID_ARGUMENT);
  assert_int_equal(c.freed, 2);
  assert_int_equal(mrt_input_queue_flush(NULL), MRT_INVALID_ARGUMENT);
  mrt_queue_info info;
  mrt_queue_info_init(&info);
  info.struct_size = 4;
  assert_int_equal(mrt_input_queue_info(x, &info), MRT_INVALID_ARGUMENT);

  /* Still usable. */
  assert_int_equal(mrt_queue_manager_output_queue(manager, "y", &y), MRT_OK);
  float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8];
  assert_int_equal(mrt_input_queue_enqueue(x, a, 32, NULL, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_output_queue_enqueue(y, b, 32, NULL, NULL, NULL), MRT_OK);
  run_device_once(manager);
  for (int i = 0; i < 8; ++i) assert_true(b[i] == a[i] + 1.0f);
  mrt_queue_manager_destroy(manager);
  mrt_queue_manager_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lists_queues_and_describes_them),
      cmocka_unit_test(test_ring_size_multiplier),
      cmocka_unit_test(test_ring_size_overrides),
      cmocka_unit_test(test_packs_and_splits_user_batches),
      cmocka_unit_test(test_flush_disconnect_reset),
      cmocka_unit_test(test_timeout_callback_pads_a_partial_batch),
      cmocka_unit_test(test_producer_thread_and_device_thread),
      cmocka_unit_test(test_bad_arguments),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
