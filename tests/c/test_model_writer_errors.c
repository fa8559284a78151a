/* Bad input to the PopEF writer and model builder: each call fails with its
 * exact status and a message naming the bad value, and leaves the builder
 * usable (a model built afterwards serves x + 1). Truncated and corrupt
 * in-memory images are MRT_CORRUPT_MODEL, never a crash. */
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

/* add_one: x [1, 16] F32 in, y = x + 1 out, program 0 moves both. */
enum { N = 16 };
static const int64_t kShape[] = {1, N};
static const uint64_t kMain[] = {0};

static mrt_model *g_add_one;
static mrt_executable *g_executable;

static int setup(void **state) {
  g_add_one = test_load_model("MRT_TEST_WRITER_MODELS", "add_one");
  assert_int_equal(mrt_model_get_executable(g_add_one, &g_executable), MRT_OK);
  return test_private_system_setup(state);
}

static int teardown(void **state) {
  mrt_executable_destroy(g_executable);
  mrt_model_destroy(g_add_one);
  return test_private_system_teardown(state);
}

static void expect_failure(mrt_status status, mrt_status expected, const char *needle) {
  assert_int_equal(status, expected);
  test_expect_contains(mrt_last_error_message(), needle);
}

static mrt_anchor_config anchor(const char *handle) {
  mrt_anchor_config config;
  mrt_anchor_config_init(&config);
  config.handle = handle;
  config.shape = kShape;
  config.rank = 2;
  config.programs = kMain;
  config.num_programs = 1;
  return config;
}

static mrt_model_builder *new_builder(void) {
  mrt_model_builder *builder = NULL;
  assert_int_equal(mrt_model_builder_create("add_one", g_executable, &builder), MRT_OK);
  return builder;
}

/* Completes an add_one builder, builds and serves one request: x + 1. */
static void expect_builds_and_serves(mrt_model_builder *builder) {
  const mrt_anchor_config x = anchor("x"), y = anchor("y");
  assert_int_equal(mrt_model_builder_add_anchor(builder, &x), MRT_OK);
  assert_int_equal(mrt_model_builder_add_anchor(builder, &y), MRT_OK);
  assert_int_equal(mrt_model_builder_set_program_flow(builder, MRT_PHASE_MAIN, kMain, 1), MRT_OK);
  mrt_model *model = NULL;
  if (mrt_model_builder_build(builder, &model) != MRT_OK) fail_msg("build: %s", mrt_last_error_message());

  mrt_model_runner *runner = test_small_runner_for_model(model);
  float in[N], out[N];
  unsigned seed = 3;
  test_fill_random(in, N, &seed, -4, 4);
  const mrt_tensor_view input = {"x", in, sizeof in}, output = {"y", out, sizeof out};
  assert_int_equal(mrt_model_runner_execute(runner, &input, 1, &output, 1, 0), MRT_OK);
  for (int i = 0; i < N; ++i) assert_float_equal(out[i], in[i] + 1.0f, 1e-6);
  mrt_model_runner_destroy(runner);
  mrt_model_destroy(model);
}

static void null_arguments(void **state) {
  (void)state;
  mrt_model_builder *builder = NULL;
  expect_failure(mrt_model_builder_create(NULL, g_executable, &builder), MRT_INVALID_ARGUMENT, "name");
  expect_failure(mrt_model_builder_create("", g_executable, &builder), MRT_INVALID_ARGUMENT, "name");
  expect_failure(mrt_model_builder_create("m", NULL, &builder), MRT_INVALID_ARGUMENT, "executable");
  expect_failure(mrt_model_builder_create("m", g_executable, NULL), MRT_INVALID_ARGUMENT, "out");
  assert_null(builder);
  expect_failure(mrt_model_builder_set_inference(NULL, true), MRT_INVALID_ARGUMENT, "builder");
  builder = new_builder();
  expect_failure(mrt_model_builder_add_anchor(builder, NULL), MRT_INVALID_ARGUMENT, "config");
  mrt_anchor_config no_handle = anchor(NULL);
  expect_failure(mrt_model_builder_add_anchor(builder, &no_handle), MRT_INVALID_ARGUMENT, "config->handle");
  mrt_anchor_config no_shape = anchor("x");
  no_shape.shape = NULL;
  expect_failure(mrt_model_builder_add_anchor(builder, &no_shape), MRT_INVALID_ARGUMENT, "shape");
  expect_failure(mrt_model_builder_set_option(builder, MRT_MODEL_ENGINE_OPTIONS, NULL, "1"), MRT_INVALID_ARGUMENT, "key");
  expect_failure(mrt_model_builder_set_seed_handle(builder, NULL), MRT_INVALID_ARGUMENT, "handle");
  expect_failure(mrt_model_builder_add_tensor_data(builder, "t", MRT_F32, kShape, 2, NULL, N * 4),
                 MRT_INVALID_ARGUMENT, "data");
  expect_failure(mrt_model_builder_build(builder, NULL), MRT_INVALID_ARGUMENT, "out");
  expect_failure(mrt_model_write(NULL, "/tmp/x.popef"), MRT_INVALID_ARGUMENT, "model");
  expect_failure(mrt_model_write(g_add_one, NULL), MRT_INVALID_ARGUMENT, "path");
  expect_failure(mrt_model_write_split(g_add_one, "/tmp/a.popef", NULL), MRT_INVALID_ARGUMENT, "data_path");
  expect_failure(mrt_model_write_to_memory(g_add_one, NULL, 0, NULL), MRT_INVALID_ARGUMENT, "out_size");
  mrt_model *model = NULL;
  expect_failure(mrt_model_load_from_memory(NULL, 10, &model), MRT_INVALID_ARGUMENT, "data");
  assert_null(model);
  mrt_model_builder_destroy(NULL); /* accepted */
  expect_builds_and_serves(builder);
  mrt_model_builder_destroy(builder);
}

static void bad_anchors(void **state) {
  (void)state;
  mrt_model_builder *builder = new_builder();
  const mrt_anchor_config unknown = anchor("no_such_stream");
  expect_failure(mrt_model_builder_add_anchor(builder, &unknown), MRT_INVALID_ARGUMENT, "no_such_stream");

  static const int64_t wrong[] = {1, N + 1};
  mrt_anchor_config wrong_shape = anchor("x");
  wrong_shape.shape = wrong;
  expect_failure(mrt_model_builder_add_anchor(builder, &wrong_shape), MRT_INVALID_ARGUMENT, "'x'");
  test_expect_contains(mrt_last_error_message(), "17 elements");

  static const int64_t negative[] = {-1, -N};
  mrt_anchor_config negative_shape = anchor("x");
  negative_shape.shape = negative;
  expect_failure(mrt_model_builder_add_anchor(builder, &negative_shape), MRT_INVALID_ARGUMENT, "-1");

  static const uint64_t far[] = {7};
  mrt_anchor_config far_program = anchor("x");
  far_program.programs = far;
  expect_failure(mrt_model_builder_add_anchor(builder, &far_program), MRT_INVALID_ARGUMENT, "program 7");

  mrt_anchor_config bad_source = anchor("x");
  bad_source.data_source = 9;
  expect_failure(mrt_model_builder_add_anchor(builder, &bad_source), MRT_INVALID_ARGUMENT, "data_source 9");

  mrt_anchor_config old = anchor("x");
  old.struct_size = sizeof(size_t);
  expect_failure(mrt_model_builder_add_anchor(builder, &old), MRT_INVALID_ARGUMENT, "struct_size");

  /* A caller built against a longer, newer struct: the known part is read. */
  struct {
    mrt_anchor_config config;
    uint64_t newer_field;
  } newer;
  newer.config = anchor("x");
  newer.config.struct_size = sizeof newer;
  newer.newer_field = 42;
  assert_int_equal(mrt_model_builder_add_anchor(builder, &newer.config), MRT_OK);

  mrt_anchor_config same_name = anchor("y");
  same_name.name = "x";
  expect_failure(mrt_model_builder_add_anchor(builder, &same_name), MRT_INVALID_ARGUMENT, "already added");
  test_expect_contains(mrt_last_error_message(), "'x'");
  mrt_anchor_config same_handle = anchor("x");
  same_handle.name = "x2";
  expect_failure(mrt_model_builder_add_anchor(builder, &same_handle), MRT_INVALID_ARGUMENT, "'x2'");

  /* Only y is missing now, which build names: the program moves it. */
  assert_int_equal(mrt_model_builder_set_program_flow(builder, MRT_PHASE_MAIN, kMain, 1), MRT_OK);
  mrt_model *model = NULL;
  expect_failure(mrt_model_builder_build(builder, &model), MRT_CORRUPT_MODEL, "'y'");
  assert_null(model);
  mrt_model_builder_destroy(builder);

  /* The builder that saw all of that (except the x above) still works. */
  builder = new_builder();
  expect_failure(mrt_model_builder_add_anchor(builder, &unknown), MRT_INVALID_ARGUMENT, "no_such_stream");
  expect_failure(mrt_model_builder_add_anchor(builder, &wrong_shape), MRT_INVALID_ARGUMENT, "'x'");
  expect_builds_and_serves(builder);
  mrt_model_builder_destroy(builder);
}

static void bad_flow_options_and_data(void **state) {
  (void)state;
  mrt_model_builder *builder = new_builder();
  expect_failure(mrt_model_builder_set_program_flow(builder, 3, kMain, 1), MRT_INVALID_ARGUMENT, "phase 3");
  expect_failure(mrt_model_builder_set_program_flow(builder, -1, kMain, 1), MRT_INVALID_ARGUMENT, "phase -1");
  static const uint64_t out_of_range[] = {0, 1};
  expect_failure(mrt_model_builder_set_program_flow(builder, MRT_PHASE_LOAD, out_of_range, 2),
                 MRT_INVALID_ARGUMENT, "program 1");
  test_expect_contains(mrt_last_error_message(), "1 programs");
  expect_failure(mrt_model_builder_set_program_name(builder, 4, "p"), MRT_INVALID_ARGUMENT, "program 4");

  expect_failure(mrt_model_builder_set_option(builder, MRT_MODEL_ENGINE_OPTIONS, "no.such.option", "1"),
                 MRT_INVALID_ARGUMENT, "no.such.option");
  expect_failure(mrt_model_builder_set_option(builder, MRT_MODEL_ENGINE_OPTIONS, "debug.instrument", "maybe"),
                 MRT_INVALID_ARGUMENT, "maybe");
  expect_failure(mrt_model_builder_set_option(builder, MRT_MODEL_DEVICE_OPTIONS, "ipuLinkDomainSize", "zero"),
                 MRT_INVALID_ARGUMENT, "ipuLinkDomainSize");
  expect_failure(mrt_model_builder_set_option(builder, 2, "debug.instrument", "true"), MRT_INVALID_ARGUMENT, "set 2");

  float values[N] = {0};
  expect_failure(mrt_model_builder_add_tensor_data(builder, "t", MRT_F32, kShape, 2, values, sizeof values - 1),
                 MRT_INVALID_ARGUMENT, "63");
  test_expect_contains(mrt_last_error_message(), "'t'");
  expect_failure(mrt_model_builder_add_tensor_data(builder, "t", 99, kShape, 2, values, sizeof values),
                 MRT_INVALID_ARGUMENT, "data_type 99");
  assert_int_equal(mrt_model_builder_add_tensor_data(builder, "t", MRT_F32, kShape, 2, values, sizeof values), MRT_OK);
  expect_failure(mrt_model_builder_add_tensor_data(builder, "t", MRT_F32, kShape, 2, values, sizeof values),
                 MRT_INVALID_ARGUMENT, "'t' was already added");
  expect_failure(mrt_model_builder_add_feed_data(builder, "f", MRT_F32, kShape, 2, values, sizeof values, 2),
                 MRT_INVALID_ARGUMENT, "'f'");
  expect_failure(mrt_model_builder_add_feed_data(builder, "f", MRT_F32, kShape, 2, values, sizeof values, 0),
                 MRT_INVALID_ARGUMENT, "num_tensors");

  /* A seed handle naming no anchor is refused when built. */
  assert_int_equal(mrt_model_builder_set_seed_handle(builder, "no_seed"), MRT_OK);
  const mrt_anchor_config x = anchor("x"), y = anchor("y");
  assert_int_equal(mrt_model_builder_add_anchor(builder, &x), MRT_OK);
  assert_int_equal(mrt_model_builder_add_anchor(builder, &y), MRT_OK);
  assert_int_equal(mrt_model_builder_set_program_flow(builder, MRT_PHASE_MAIN, kMain, 1), MRT_OK);
  mrt_model *model = NULL;
  expect_failure(mrt_model_builder_build(builder, &model), MRT_CORRUPT_MODEL, "no_seed");
  assert_null(model);
  mrt_model_builder_destroy(builder);
}

static void bad_writes(void **state) {
  (void)state;
  size_t size = 0;
  assert_int_equal(mrt_model_write_to_memory(g_add_one, NULL, 0, &size), MRT_OK);
  unsigned char *buffer = malloc(size);
  assert_non_null(buffer);
  size_t written = 12345;
  char needle[64];
  snprintf(needle, sizeof needle, "buffer_size %zu", size - 1);
  expect_failure(mrt_model_write_to_memory(g_add_one, buffer, size - 1, &written), MRT_INVALID_ARGUMENT, needle);
  snprintf(needle, sizeof needle, "%zu bytes", size);
  test_expect_contains(mrt_last_error_message(), needle);
  assert_int_equal(written, 12345); /* not written on failure */
  free(buffer);

  expect_failure(mrt_model_write(g_add_one, "/nonexistent-dir/m.popef"), MRT_NOT_FOUND, "/nonexistent-dir/m.popef");
  /* add_one has no data blob for a data file. */
  expect_failure(mrt_model_write_split(g_add_one, "/tmp/mrt_writer_a.popef", "/tmp/mrt_writer_b.popef"),
                 MRT_INVALID_ARGUMENT, "mrt_writer_b.popef");
  expect_failure(mrt_model_write_split(g_add_one, "/tmp/mrt_writer_a.popef", "/tmp/mrt_writer_a.popef"),
                 MRT_INVALID_ARGUMENT, "same file");
}

/* Every truncation of the image, and a flipped bit in every 61st byte. */
static void corrupt_memory_images(void **state) {
  (void)state;
  size_t size = 0;
  assert_int_equal(mrt_model_write_to_memory(g_add_one, NULL, 0, &size), MRT_OK);
  unsigned char *image = malloc(size);
  assert_non_null(image);
  assert_int_equal(mrt_model_write_to_memory(g_add_one, image, size, &size), MRT_OK);
  mrt_model *model = NULL;
  for (size_t length = 0; length < size; length += (length < 256 ? 1 : 37)) {
    const mrt_status status = mrt_model_load_from_memory(image, length, &model);
    if (status != MRT_CORRUPT_MODEL) fail_msg("%zu of %zu bytes: status %d", length, size, status);
    test_expect_contains(mrt_last_error_message(), "<memory>");
    assert_null(model);
  }
  for (size_t at = 0; at < size; at += 61) {
    image[at] ^= 0x10;
    const mrt_status status = mrt_model_load_from_memory(image, size, &model);
    image[at] ^= 0x10;
    if (status != MRT_CORRUPT_MODEL) fail_msg("bit flipped at byte %zu: status %d", at, status);
    assert_null(model);
  }
  assert_int_equal(mrt_model_load_from_memory(image, size, &model), MRT_OK);
  mrt_model_destroy(model);
  free(image);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(null_arguments),
      cmocka_unit_test(bad_anchors),
      cmocka_unit_test(bad_flow_options_and_data),
      cmocka_unit_test(bad_writes),
      cmocka_unit_test(corrupt_memory_images),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
