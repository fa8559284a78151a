/* The engine part of the C API on example models written by mrt-gen
 * (MRT_TEST_ENGINE_MODELS, 4-tile builds on small IPU Model devices):
 * add_one through stream callbacks and circular buffers (y = x + 1); mlp
 * with its Load program fed from the model's TensorData and Main checked
 * against the reference math; remote buffer slots; simulated errors;
 * profiles in three formats and as options; option validation; and every
 * kind of bad input. The example executables have no host read/write
 * handles or PrintTensor steps, so a small graph built here has them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlp_reference.h"
#include "mrt_c.h"
#include "test_support.h"

enum { ADD_ONE_SIZE = 16, RB_WIDTH = 8 };

/* An engine of model `name` (with options), loaded on its own small device
 * unless device_out is NULL and load is false. */
typedef struct fixture {
  mrt_model *model;
  mrt_executable *exe;
  mrt_device *device;
  mrt_engine *engine;
} fixture;

static fixture make_fixture(const char *name, const char *const *options, bool load) {
  fixture f;
  f.model = test_load_model("MRT_TEST_ENGINE_MODELS", name);
  assert_int_equal(mrt_model_get_executable(f.model, &f.exe), MRT_OK);
  f.device = test_small_device_for_model(f.model);
  f.engine = NULL;
  assert_int_equal(mrt_engine_create(f.exe, options, &f.engine), MRT_OK);
  if (load) assert_int_equal(mrt_engine_load(f.engine, f.device), MRT_OK);
  return f;
}

static void free_fixture(fixture *f) {
  mrt_engine_destroy(f->engine);
  mrt_device_destroy(f->device);
  mrt_executable_destroy(f->exe);
  mrt_model_destroy(f->model);
}

static void expect_error(mrt_status status, mrt_status expected, const char *needle) {
  assert_int_equal(status, expected);
  test_expect_contains(mrt_last_error_message(), needle);
}

/* ---- stream callbacks ---- */

typedef struct floats {
  float values[ADD_ONE_SIZE * 64];
  uint64_t expected_size;
  int calls;
  int frees;
  uint32_t last_replica;
} floats;

static void feed(void *data, uint64_t size, uint32_t replica, void *user_data) {
  floats *f = user_data;
  assert_int_equal(size, f->expected_size);
  memcpy(data, f->values, size);
  f->last_replica = replica;
  ++f->calls;
}

static void take(void *data, uint64_t size, uint32_t replica, void *user_data) {
  floats *f = user_data;
  assert_int_equal(size, f->expected_size);
  memcpy(f->values, data, size);
  f->last_replica = replica;
  ++f->calls;
}

static void count_free(void *user_data) { ++((floats *)user_data)->frees; }

static void test_add_one_with_callbacks(void **state) {
  (void)state;
  fixture f = make_fixture("add_one", NULL, true);
  floats in = {{0}, ADD_ONE_SIZE * sizeof(float), 0, 0, 99}, out = in;
  for (int i = 0; i < ADD_ONE_SIZE; ++i) in.values[i] = (float)i * 0.5f - 3.0f;
  assert_int_equal(mrt_engine_connect_stream(f.engine, "x", MRT_ALL_REPLICAS, feed, &in, count_free), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream(f.engine, "y", 0, take, &out, count_free), MRT_OK);
  for (int run = 0; run < 3; ++run) {
    assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK);
    for (int i = 0; i < ADD_ONE_SIZE; ++i) assert_float_equal(out.values[i], in.values[i] + 1.0f, 0.0f);
    for (int i = 0; i < ADD_ONE_SIZE; ++i) in.values[i] = out.values[i] * 2.0f;
  }
  assert_int_equal(in.calls, 3);
  assert_int_equal(out.calls, 3);
  assert_int_equal(in.last_replica, 0);
  uint64_t cycles = 0;
  assert_int_equal(mrt_engine_device_cycles(f.engine, 0, &cycles), MRT_OK);
  assert_true(cycles > 0);

  /* Replacing a connection frees the old user_data exactly once. */
  floats other = in;
  other.frees = 0;
  assert_int_equal(mrt_engine_connect_stream(f.engine, "x", 0, feed, &other, count_free), MRT_OK);
  assert_int_equal(in.frees, 1);
  /* A failed connection frees its user_data too. */
  floats rejected = in;
  rejected.frees = 0;
  expect_error(mrt_engine_connect_stream(f.engine, "nope", 0, feed, &rejected, count_free), MRT_NOT_FOUND,
               "no stream 'nope': the executable has 'x', 'y'");
  assert_int_equal(rejected.frees, 1);
  rejected.frees = 0;
  expect_error(mrt_engine_connect_stream(f.engine, "x", 1, feed, &rejected, count_free), MRT_INVALID_ARGUMENT,
               "replica 1 out of range");
  assert_int_equal(rejected.frees, 1);
  free_fixture(&f);
  assert_int_equal(other.frees, 1);
  assert_int_equal(out.frees, 1);
}

static void test_add_one_with_buffers(void **state) {
  (void)state;
  fixture f = make_fixture("add_one", NULL, true);
  /* Two transfers' worth: successive runs read and write in turn. */
  float x[2 * ADD_ONE_SIZE], y[2 * ADD_ONE_SIZE];
  for (int i = 0; i < 2 * ADD_ONE_SIZE; ++i) x[i] = (float)(i * i) / 7.0f;
  memset(y, 0, sizeof y);
  assert_int_equal(mrt_engine_connect_stream_to_buffer(f.engine, "x", MRT_ALL_REPLICAS, x, sizeof x), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream_to_buffer(f.engine, "y", 0, y, sizeof y), MRT_OK);
  assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK);
  assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK);
  for (int i = 0; i < 2 * ADD_ONE_SIZE; ++i) assert_float_equal(y[i], x[i] + 1.0f, 1e-6);

  expect_error(mrt_engine_connect_stream_to_buffer(f.engine, "x", 0, x, sizeof x - 4), MRT_INVALID_ARGUMENT,
               "stream 'x': a buffer of 124 bytes is not a whole number of 64-byte transfers");
  expect_error(mrt_engine_connect_stream_to_buffer(f.engine, "x", 0, NULL, 64), MRT_INVALID_ARGUMENT,
               "buffer must not be NULL");
  expect_error(mrt_engine_connect_stream_to_buffer(f.engine, "z", 0, x, 64), MRT_NOT_FOUND, "no stream 'z'");
  free_fixture(&f);
}

/* ---- mlp: Load streams the weights, Main computes ---- */

typedef struct blob {
  const void *data;
  uint64_t size;
} blob;

static void feed_blob(void *data, uint64_t size, uint32_t replica, void *user_data) {
  (void)replica;
  const blob *b = user_data;
  assert_int_equal(size, b->size);
  memcpy(data, b->data, size);
}

static void test_mlp_load_then_main(void **state) {
  (void)state;
  fixture f = make_fixture("mlp", NULL, true);
  const char *names[] = {"w1", "b1", "w2", "b2"};
  blob blobs[4];
  for (int i = 0; i < 4; ++i) {
    assert_int_equal(mrt_model_tensor_data(f.model, names[i], &blobs[i].data, &blobs[i].size), MRT_OK);
    assert_int_equal(mrt_engine_connect_stream(f.engine, names[i], MRT_ALL_REPLICAS, feed_blob, &blobs[i], NULL),
                     MRT_OK);
  }
  static floats image, probs;
  memset(&image, 0, sizeof image);
  memset(&probs, 0, sizeof probs);
  image.expected_size = MLP_IMAGE * sizeof(float);
  probs.expected_size = MLP_CLASSES * sizeof(float);
  unsigned seed = 7;
  test_fill_random(image.values, MLP_IMAGE, &seed, 0.0f, 1.0f);
  assert_int_equal(mrt_engine_connect_stream(f.engine, "image", 0, feed, &image, NULL), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream(f.engine, "probs", 0, take, &probs, NULL), MRT_OK);

  const char *load_name = NULL;
  assert_int_equal(mrt_executable_program_name(f.exe, 0, &load_name), MRT_OK);
  assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK); /* Load */
  assert_int_equal(mrt_engine_run(f.engine, 1), MRT_OK); /* Main */
  const mlp_weights weights = mlp_weights_of(f.model);
  double expected[MLP_CLASSES];
  mlp_reference(&weights, image.values, expected);
  for (int k = 0; k < MLP_CLASSES; ++k) assert_float_equal(probs.values[k], expected[k], 1e-5);
  free_fixture(&f);
}

/* ---- remote buffers ---- */

static void test_remote_buffer(void **state) {
  (void)state;
  fixture f = make_fixture("remote_buffer", NULL, true);
  float w[RB_WIDTH], back[RB_WIDTH];
  for (int i = 0; i < RB_WIDTH; ++i) w[i] = 10.0f * (float)i - 3.5f;
  assert_int_equal(mrt_engine_copy_to_remote_buffer(f.engine, "w", w, sizeof w, 0, 0), MRT_OK);
  assert_int_equal(mrt_engine_copy_from_remote_buffer(f.engine, "w", back, sizeof back, 0, 0), MRT_OK);
  assert_memory_equal(back, w, sizeof w);

  floats x = {{0}, RB_WIDTH * sizeof(float), 0, 0, 0}, y = x;
  for (int i = 0; i < RB_WIDTH; ++i) x.values[i] = (float)i / 4.0f;
  assert_int_equal(mrt_engine_connect_stream(f.engine, "x", 0, feed, &x, NULL), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream(f.engine, "y", 0, take, &y, NULL), MRT_OK);
  assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK);
  for (int i = 0; i < RB_WIDTH; ++i) assert_float_equal(y.values[i], x.values[i] + w[i], 1e-6);

  expect_error(mrt_engine_copy_to_remote_buffer(f.engine, "w", w, sizeof w - 1, 0, 0), MRT_INVALID_ARGUMENT,
               "remote buffer 'w': size is 31 bytes, expected 32");
  expect_error(mrt_engine_copy_to_remote_buffer(f.engine, "w", w, sizeof w, 1, 0), MRT_INVALID_ARGUMENT,
               "slot 1 out of range");
  expect_error(mrt_engine_copy_from_remote_buffer(f.engine, "v", back, sizeof back, 0, 0), MRT_NOT_FOUND,
               "no remote buffer 'v': the executable has 'w'");
  expect_error(mrt_engine_copy_from_remote_buffer(f.engine, "w", back, sizeof back, 0, 2), MRT_INVALID_ARGUMENT,
               "replica 2 out of range");
  expect_error(mrt_engine_copy_from_remote_buffer(f.engine, "w", NULL, sizeof back, 0, 0), MRT_INVALID_ARGUMENT,
               "data must not be NULL");
  /* Host tensor handles: the example executables have none. */
  expect_error(mrt_engine_write_tensor(f.engine, "w", w, sizeof w, 0), MRT_NOT_FOUND,
               "no host write handle 'w': the executable has none");
  expect_error(mrt_engine_read_tensor(f.engine, "w", back, sizeof back, 0), MRT_NOT_FOUND, "no host read handle 'w'");
  free_fixture(&f);
}

/* ---- states and bad input ---- */

static void test_bad_input_and_states(void **state) {
  (void)state;
  fixture f = make_fixture("add_one", NULL, false);
  expect_error(mrt_engine_run(f.engine, 0), MRT_FAILED_PRECONDITION, "engine is not loaded: call mrt_engine_load");
  float w[4] = {0};
  expect_error(mrt_engine_copy_to_remote_buffer(f.engine, "x", w, sizeof w, 0, 0), MRT_NOT_FOUND,
               "no remote buffer 'x'");
  assert_int_equal(mrt_engine_load(f.engine, f.device), MRT_OK);
  /* Streams not connected: the run names the first one it needs. */
  expect_error(mrt_engine_run(f.engine, 0), MRT_FAILED_PRECONDITION, "'x'");
  expect_error(mrt_engine_run(f.engine, 1), MRT_INVALID_ARGUMENT, "program 1 out of range: the executable has 1 program");
  expect_error(mrt_engine_run_replica(f.engine, 0, 1), MRT_INVALID_ARGUMENT,
               "replica 1 out of range: the executable has 1 replica");
  uint64_t cycles;
  expect_error(mrt_engine_device_cycles(f.engine, MRT_ALL_REPLICAS, &cycles), MRT_INVALID_ARGUMENT, "replica 4294967295");
  expect_error(mrt_engine_device_cycles(f.engine, 0, NULL), MRT_INVALID_ARGUMENT, "out_cycles must not be NULL");
  expect_error(mrt_engine_run(NULL, 0), MRT_INVALID_ARGUMENT, "engine must not be NULL");
  expect_error(mrt_engine_stop(NULL), MRT_INVALID_ARGUMENT, "engine must not be NULL");
  expect_error(mrt_engine_load(f.engine, NULL), MRT_INVALID_ARGUMENT, "device must not be NULL");
  expect_error(mrt_engine_connect_stream(f.engine, "x", 0, NULL, NULL, NULL), MRT_INVALID_ARGUMENT,
               "fn must not be NULL");
  expect_error(mrt_engine_connect_stream(f.engine, NULL, 0, feed, NULL, NULL), MRT_INVALID_ARGUMENT,
               "handle must not be NULL");
  mrt_engine *engine = NULL;
  expect_error(mrt_engine_create(NULL, NULL, &engine), MRT_INVALID_ARGUMENT, "executable must not be NULL");
  expect_error(mrt_engine_create(f.exe, NULL, NULL), MRT_INVALID_ARGUMENT, "out must not be NULL");
  mrt_engine_destroy(NULL);

  /* After all of that the engine still runs. */
  floats in = {{0}, ADD_ONE_SIZE * sizeof(float), 0, 0, 0}, out = in;
  in.values[3] = 41.0f;
  assert_int_equal(mrt_engine_connect_stream(f.engine, "x", 0, feed, &in, NULL), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream(f.engine, "y", 0, take, &out, NULL), MRT_OK);
  assert_int_equal(mrt_engine_run_replica(f.engine, 0, 0), MRT_OK);
  assert_float_equal(out.values[3], 42.0f, 0.0f);

  /* An executable for 4 tiles per IPU does not load on a full-size device. */
  mrt_device_manager *manager = NULL;
  assert_int_equal(mrt_device_manager_create(&manager), MRT_OK);
  mrt_device *big = NULL;
  if (mrt_device_manager_get_device(manager, 1, NULL, NULL, false, &big) == MRT_OK) {
    expect_error(mrt_engine_load(f.engine, big), MRT_FAILED_PRECONDITION, "cannot run on device");
    mrt_device_destroy(big);
    assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK); /* still loaded where it was */
  }
  mrt_device_manager_destroy(manager);
  free_fixture(&f);
}

/* ---- options ---- */

static int ignored_logged;
static void capture_log(mrt_log_level level, const char *message, void *user_data) {
  (void)user_data;
  if (level == MRT_LOG_DEBUG && strstr(message, "engine option 'debug.verify' = 'true' ignored") != NULL) {
    ++ignored_logged;
  }
}

static void test_options(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_ENGINE_MODELS", "add_one");
  mrt_executable *exe = NULL;
  assert_int_equal(mrt_model_get_executable(model, &exe), MRT_OK);
  mrt_engine *engine = NULL;

  const mrt_log_level level = mrt_get_log_level();
  assert_int_equal(mrt_set_log_level(MRT_LOG_DEBUG), MRT_OK);
  assert_int_equal(mrt_set_log_callback(capture_log, NULL, NULL), MRT_OK);
  /* Seed 003 options a simulator has no use for: accepted, logged as ignored. */
  const char *seeded[] = {"debug.verify", "true", "opt.internalExchangeOptimisationTarget", "memory",
                          "target.deterministicWorkers", "portable", "debug.profilingTile", "3",
                          "experimental.minLoweringTiles", "0", NULL};
  assert_int_equal(mrt_engine_create(exe, seeded, &engine), MRT_OK);
  mrt_engine_destroy(engine);
  assert_int_equal(mrt_set_log_callback(NULL, NULL, NULL), MRT_OK);
  assert_int_equal(mrt_set_log_level(level), MRT_OK);
  assert_int_equal(ignored_logged, 1);

  engine = NULL;
  const char *unknown[] = {"debug.bogusOption", "true", NULL};
  expect_error(mrt_engine_create(exe, unknown, &engine), MRT_INVALID_ARGUMENT, "unknown option 'debug.bogusOption'");
  assert_null(engine);
  const char *bad_bool[] = {"debug.verify", "maybe", NULL};
  expect_error(mrt_engine_create(exe, bad_bool, &engine), MRT_INVALID_ARGUMENT,
               "option 'debug.verify': value 'maybe' is not true or false");
  const char *bad_choice[] = {"opt.internalExchangeOptimisationTarget", "fast", NULL};
  expect_error(mrt_engine_create(exe, bad_choice, &engine), MRT_INVALID_ARGUMENT,
               "value 'fast' is not one of balanced, cycles, memory");
  const char *bad_int[] = {"debug.workerStackSizeInBytes", "-1", NULL};
  expect_error(mrt_engine_create(exe, bad_int, &engine), MRT_INVALID_ARGUMENT,
               "option 'debug.workerStackSizeInBytes': value '-1' is not a non-negative integer");
  const char *no_value[] = {"debug.verify", NULL};
  expect_error(mrt_engine_create(exe, no_value, &engine), MRT_INVALID_ARGUMENT, "debug.verify");
  assert_null(engine);
  mrt_executable_destroy(exe);
  mrt_model_destroy(model);
}

/* ---- simulated errors ---- */

static uint32_t first_step_of_kind(const mrt_executable *exe, const char *kind) {
  mrt_executable_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_executable_get_info(exe, &info), MRT_OK);
  for (size_t i = 0; i < info.num_steps; ++i) {
    mrt_step_info step;
    step.struct_size = sizeof step;
    assert_int_equal(mrt_executable_step(exe, i, &step), MRT_OK);
    if (strcmp(step.kind, kind) == 0) return (uint32_t)i;
  }
  fail_msg("no %s step", kind);
  return 0;
}

static void test_simulated_errors(void **state) {
  (void)state;
  fixture f = make_fixture("add_one", NULL, false);
  const uint32_t step = first_step_of_kind(f.exe, "Execute");
  expect_error(mrt_engine_insert_simulated_error(f.engine, MRT_SIMULATED_TILE_EXCEPTION, step, 0),
               MRT_FAILED_PRECONDITION, "engine is not loaded");
  assert_int_equal(mrt_engine_load(f.engine, f.device), MRT_OK);
  floats in = {{0}, ADD_ONE_SIZE * sizeof(float), 0, 0, 0}, out = in;
  assert_int_equal(mrt_engine_connect_stream(f.engine, "x", 0, feed, &in, NULL), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream(f.engine, "y", 0, take, &out, NULL), MRT_OK);

  expect_error(mrt_engine_insert_simulated_error(f.engine, 7, step, 0), MRT_INVALID_ARGUMENT,
               "error 7 is not an mrt_simulated_error");
  expect_error(mrt_engine_insert_simulated_error(f.engine, 0, 100000, 0), MRT_INVALID_ARGUMENT, "step 100000");
  expect_error(mrt_engine_insert_simulated_error(f.engine, 0, step, 4), MRT_INVALID_ARGUMENT, "tile 4 of 4");
  assert_int_equal(mrt_engine_insert_simulated_error(f.engine, MRT_SIMULATED_TILE_EXCEPTION, step, 0), MRT_OK);
  const mrt_status status = mrt_engine_run(f.engine, 0);
  assert_int_equal(status, MRT_DEVICE_ERROR);
  const char *message = mrt_last_error_message();
  test_expect_contains(message, "TILE_EXCEPTION");
  test_expect_contains(message, "IPU_RESET");
  assert_int_equal(mrt_last_error_recovery_action(), MRT_RECOVERY_IPU_RESET);
  test_expect_contains(message, "on tile 0, replica 0");
  char at_step[64];
  snprintf(at_step, sizeof at_step, "program step %u", step);
  test_expect_contains(message, at_step);
  expect_error(mrt_engine_run(f.engine, 0), MRT_FAILED_PRECONDITION, "engine is not loaded");

  /* The error stays until erased; load resets the device. */
  assert_int_equal(mrt_engine_erase_simulated_error(f.engine, step, 0), MRT_OK);
  expect_error(mrt_engine_erase_simulated_error(f.engine, step, 0), MRT_NOT_FOUND, "no simulated error at step");
  assert_int_equal(mrt_engine_load(f.engine, f.device), MRT_OK);
  in.values[0] = 5.0f;
  assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK);
  assert_float_equal(out.values[0], 6.0f, 0.0f);

  assert_int_equal(mrt_engine_insert_simulated_error(f.engine, MRT_SIMULATED_HOST_LINK_ERROR, step, 0), MRT_OK);
  assert_int_equal(mrt_engine_clear_simulated_errors(f.engine), MRT_OK);
  assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK);
  free_fixture(&f);
}

/* ---- profiles ---- */

static char *profile_text(mrt_engine *engine, int32_t format) {
  size_t length = 0;
  assert_int_equal(mrt_engine_profile_text(engine, format, NULL, 0, &length), MRT_OK);
  char *text = malloc(length + 1);
  assert_non_null(text);
  size_t again = 0;
  assert_int_equal(mrt_engine_profile_text(engine, format, text, length + 1, &again), MRT_OK);
  assert_int_equal(again, length);
  assert_int_equal(strlen(text), length);
  return text;
}

static char *read_file(const char *path) {
  FILE *file = fopen(path, "rb");
  if (file == NULL) fail_msg("cannot open %s", path);
  fseek(file, 0, SEEK_END);
  const long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *text = calloc((size_t)size + 1, 1);
  assert_non_null(text);
  assert_int_equal(fread(text, 1, (size_t)size, file), (size_t)size);
  fclose(file);
  return text;
}

static void test_profiles(void **state) {
  (void)state;
  fixture f = make_fixture("add_one", NULL, true);
  floats in = {{0}, ADD_ONE_SIZE * sizeof(float), 0, 0, 0}, out = in;
  assert_int_equal(mrt_engine_connect_stream(f.engine, "x", 0, feed, &in, NULL), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream(f.engine, "y", 0, take, &out, NULL), MRT_OK);
  char buffer[8];
  expect_error(mrt_engine_profile_text(f.engine, MRT_PROFILE_INTERVALS, buffer, sizeof buffer, NULL),
               MRT_FAILED_PRECONDITION, "execution profiling is disabled");
  expect_error(mrt_engine_profile_text(f.engine, 9, buffer, sizeof buffer, NULL), MRT_INVALID_ARGUMENT,
               "format 9 is not an mrt_profile_format");
  expect_error(mrt_engine_profile_text(f.engine, MRT_PROFILE_SUMMARY, NULL, 4, NULL), MRT_INVALID_ARGUMENT,
               "buffer must not be NULL");

  assert_int_equal(mrt_engine_set_profiling(f.engine, true), MRT_OK);
  assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK);

  char *summary = profile_text(f.engine, MRT_PROFILE_SUMMARY);
  test_expect_contains(summary, "Target: ");
  test_expect_contains(summary, "Execution:");
  /* Truncated copies keep the NUL and report the full length. */
  size_t length = 0;
  assert_int_equal(mrt_engine_profile_text(f.engine, MRT_PROFILE_SUMMARY, buffer, sizeof buffer, &length), MRT_OK);
  assert_int_equal(length, strlen(summary));
  assert_int_equal(strlen(buffer), sizeof buffer - 1);
  assert_memory_equal(buffer, summary, sizeof buffer - 1);

  char *csv = profile_text(f.engine, MRT_PROFILE_INTERVALS);
  const char *header = "begin,end,compute_tiles,exchange_tiles,sync_tiles\n";
  assert_memory_equal(csv, header, strlen(header));
  /* Every row: five unsigned integers, begin <= end. */
  int rows = 0;
  for (const char *line = csv + strlen(header); *line != '\0'; line = strchr(line, '\n') + 1) {
    unsigned long long begin, end, compute, exchange, sync;
    assert_int_equal(sscanf(line, "%llu,%llu,%llu,%llu,%llu", &begin, &end, &compute, &exchange, &sync), 5);
    assert_true(begin <= end);
    ++rows;
  }
  assert_true(rows >= 3); /* stream in, add, stream out */

  char *trace = profile_text(f.engine, MRT_PROFILE_TRACE);
  assert_int_equal(trace[0], '{');
  test_expect_contains(trace, "\"traceEvents\"");

  char path[] = "/tmp/mrt_test_engine_profile_XXXXXX";
  const int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(mrt_engine_write_profile(f.engine, MRT_PROFILE_INTERVALS, path), MRT_OK);
  char *written = read_file(path);
  assert_string_equal(written, csv);
  unlink(path);
  expect_error(mrt_engine_write_profile(f.engine, MRT_PROFILE_TRACE, "/nonexistent-dir/profile.json"), MRT_NOT_FOUND,
               "cannot write the profile to '/nonexistent-dir/profile.json'");
  expect_error(mrt_engine_write_profile(f.engine, MRT_PROFILE_TRACE, NULL), MRT_INVALID_ARGUMENT,
               "path must not be NULL");
  free(written);
  free(trace);
  free(csv);
  free(summary);
  assert_int_equal(mrt_engine_set_profiling(f.engine, false), MRT_OK);
  free_fixture(&f);
}

static void test_auto_report_options(void **state) {
  (void)state;
  char dir[] = "/tmp/mrt_test_engine_reports_XXXXXX";
  assert_non_null(mkdtemp(dir));
  const char *options[] = {"autoReport.all", "true", "autoReport.directory", dir, NULL};
  fixture f = make_fixture("add_one", options, true);
  floats in = {{0}, ADD_ONE_SIZE * sizeof(float), 0, 0, 0}, out = in;
  assert_int_equal(mrt_engine_connect_stream(f.engine, "x", 0, feed, &in, NULL), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream(f.engine, "y", 0, take, &out, NULL), MRT_OK);
  assert_int_equal(mrt_engine_run(f.engine, 0), MRT_OK);
  free_fixture(&f);
  const char *files[] = {"profile_trace.json", "intervals.csv", "profile_summary.txt"};
  for (int i = 0; i < 3; ++i) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    char *text = read_file(path);
    assert_true(strlen(text) > 0);
    free(text);
  }
  test_remove_directory(dir);
}

/* ---- print callback ---- */

static void ignore_line(const char *line, void *user_data) {
  (void)line;
  (void)user_data;
}
static void count_print_free(void *user_data) { ++*(int *)user_data; }

static void test_print_callback_user_data(void **state) {
  (void)state;
  fixture f = make_fixture("add_one", NULL, false);
  int first = 0, second = 0, unused = 0;
  assert_int_equal(mrt_engine_set_print_callback(f.engine, ignore_line, &first, count_print_free), MRT_OK);
  assert_int_equal(mrt_engine_set_print_callback(f.engine, ignore_line, &second, count_print_free), MRT_OK);
  assert_int_equal(first, 1);
  assert_int_equal(mrt_engine_set_print_callback(f.engine, NULL, &unused, count_print_free), MRT_OK);
  assert_int_equal(second, 1);
  assert_int_equal(unused, 1);
  assert_int_equal(mrt_engine_set_print_callback(NULL, ignore_line, &unused, count_print_free), MRT_INVALID_ARGUMENT);
  assert_int_equal(unused, 2);
  free_fixture(&f);
}

/* ---- host tensor access and PrintTensor, on a small built graph ---- */

typedef struct lines {
  char text[4][128];
  int count;
} lines;

static void keep_line(const char *line, void *user_data) {
  lines *l = user_data;
  if (l->count < 4) snprintf(l->text[l->count], sizeof l->text[0], "%s", line);
  ++l->count;
}

static void test_host_tensors_and_print(void **state) {
  (void)state;
  mrt_target target;
  assert_int_equal(mrt_target_init("ipu-model-small", 1, &target), MRT_OK);
  mrt_graph *graph = NULL;
  assert_int_equal(mrt_graph_create(&target, 1, &graph), MRT_OK);
  const uint64_t shape[] = {4};
  mrt_tensor v = 0;
  assert_int_equal(mrt_graph_add_variable(graph, MRT_F32, shape, 1, "v", &v), MRT_OK);
  assert_int_equal(mrt_graph_set_tile_mapping(graph, v, 0), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(graph, "v_in", v), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(graph, "v_out", v), MRT_OK);
  mrt_program print = 0, twice = 0;
  assert_int_equal(mrt_program_print_tensor(graph, "v", v, &print), MRT_OK);
  const mrt_program both[] = {print, print};
  assert_int_equal(mrt_program_sequence(graph, both, 2, "twice", &twice), MRT_OK);
  mrt_executable *exe = NULL;
  assert_int_equal(mrt_graph_compile(graph, &twice, 1, NULL, NULL, NULL, NULL, &exe), MRT_OK);
  mrt_graph_destroy(graph);

  mrt_device_manager *manager = NULL;
  assert_int_equal(mrt_device_manager_create(&manager), MRT_OK);
  mrt_device *device = NULL;
  assert_int_equal(mrt_device_manager_create_small_ipu_model_device(manager, 1, 2, &device), MRT_OK);
  mrt_device_manager_destroy(manager);
  mrt_engine *engine = NULL;
  assert_int_equal(mrt_engine_create(exe, NULL, &engine), MRT_OK);
  mrt_executable_destroy(exe); /* the engine keeps what it needs */
  const float in[4] = {1.5f, -2.0f, 0.0f, 8.0f};
  float back[4] = {0};
  expect_error(mrt_engine_write_tensor(engine, "v_in", in, sizeof in, 0), MRT_FAILED_PRECONDITION,
               "engine is not loaded");
  assert_int_equal(mrt_engine_load(engine, device), MRT_OK);
  assert_int_equal(mrt_engine_write_tensor(engine, "v_in", in, sizeof in, MRT_ALL_REPLICAS), MRT_OK);
  assert_int_equal(mrt_engine_read_tensor(engine, "v_out", back, sizeof back, 0), MRT_OK);
  assert_memory_equal(back, in, sizeof in);
  expect_error(mrt_engine_write_tensor(engine, "v_in", in, 8, 0), MRT_INVALID_ARGUMENT,
               "host write handle 'v_in': size is 8 bytes, expected 16");
  expect_error(mrt_engine_read_tensor(engine, "v_out", back, sizeof back, MRT_ALL_REPLICAS), MRT_INVALID_ARGUMENT,
               "replica 4294967295 out of range");
  expect_error(mrt_engine_read_tensor(engine, "v_in", back, sizeof back, 0), MRT_NOT_FOUND,
               "no host read handle 'v_in': the executable has 'v_out'");

  lines printed;
  memset(&printed, 0, sizeof printed);
  assert_int_equal(mrt_engine_set_print_callback(engine, keep_line, &printed, NULL), MRT_OK);
  assert_int_equal(mrt_engine_run(engine, 0), MRT_OK);
  assert_int_equal(printed.count, 2); /* one call per line, no newline */
  assert_string_equal(printed.text[0], "v: [1.5 -2 0 8]");
  assert_string_equal(printed.text[1], printed.text[0]);
  mrt_engine_destroy(engine);
  mrt_device_destroy(device);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_add_one_with_callbacks), cmocka_unit_test(test_add_one_with_buffers),
      cmocka_unit_test(test_mlp_load_then_main),     cmocka_unit_test(test_remote_buffer),
      cmocka_unit_test(test_bad_input_and_states),   cmocka_unit_test(test_options),
      cmocka_unit_test(test_simulated_errors),       cmocka_unit_test(test_profiles),
      cmocka_unit_test(test_auto_report_options),    cmocka_unit_test(test_print_callback_user_data),
      cmocka_unit_test(test_host_tensors_and_print),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
