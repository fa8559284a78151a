/* The model part of the C API on the sample PopEF files written by the
 * popef_samples fixture (tests/cpp/popef/write_samples.cpp) into the
 * directory named by MRT_TEST_POPEF_DIR: every metadata field, anchors by
 * index, name and handle, the program flow, tensor and feed bytes, models
 * split over files and several models in one file, and bad input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

/* Reads a whole file into a malloc'ed buffer. */
static unsigned char *read_file(const char *name, size_t *out_size) {
  FILE *file = fopen(test_popef_sample_path(name), "rb");
  assert_non_null(file);
  fseek(file, 0, SEEK_END);
  const long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  unsigned char *bytes = malloc((size_t)size + 1);
  assert_non_null(bytes);
  assert_int_equal(fread(bytes, 1, (size_t)size, file), (size_t)size);
  fclose(file);
  *out_size = (size_t)size;
  return bytes;
}

static mrt_model *load_one(const char *name) {
  const char *paths[] = {test_popef_sample_path(name)};
  mrt_model *model = NULL;
  assert_int_equal(mrt_model_load(paths, 1, &model), MRT_OK);
  assert_non_null(model);
  return model;
}

static void expect_message_contains(const char *needle) {
  const char *message = mrt_last_error_message();
  if (strstr(message, needle) == NULL) fail_msg("'%s' does not contain '%s'", message, needle);
}

static void metadata_fields(void **state) {
  (void)state;
  mrt_model *model = load_one("sample.popef");
  mrt_model_info info;
  memset(&info, 0xab, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(mrt_model_get_info(model, &info), MRT_OK);
  assert_int_equal(info.struct_size, sizeof info);
  assert_string_equal(info.executable, "sample");
  assert_int_equal(info.replication_factor, 2);
  assert_int_equal(info.num_ipus, 2);
  assert_int_equal(info.ipu_version, 21);
  assert_false(info.is_inference);
  assert_string_equal(info.seed_handle, "seed");
  assert_string_equal(info.package_hash, "hwsim-0.1.0-sample");
  assert_int_equal(info.num_anchors, 7);
  assert_int_equal(info.num_programs, 4);
  assert_int_equal(info.num_engine_options, 2);
  assert_int_equal(info.num_device_options, 1);
  assert_int_equal(info.num_tensor_data, 2);
  assert_int_equal(info.num_feed_data, 1);
  mrt_model_destroy(model);
}

static void sized_structs_grow_and_shrink_safely(void **state) {
  (void)state;
  mrt_model *model = load_one("sample.popef");
  /* A caller built against a later, longer struct: the tail is untouched. */
  struct {
    mrt_anchor_info anchor;
    uint64_t future_field;
  } longer;
  memset(&longer, 0, sizeof longer);
  longer.future_field = 0x1234;
  longer.anchor.struct_size = sizeof longer;
  assert_int_equal(mrt_model_anchor(model, 0, &longer.anchor), MRT_OK);
  assert_int_equal(longer.anchor.struct_size, sizeof longer);
  assert_string_equal(longer.anchor.name, "x");
  assert_int_equal(longer.future_field, 0x1234);
  /* Smaller than the first published struct: refused, nothing written. */
  mrt_model_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = MRT_MODEL_INFO_V1_SIZE - 1;
  assert_int_equal(mrt_model_get_info(model, &info), MRT_INVALID_ARGUMENT);
  expect_message_contains("out_info->struct_size");
  assert_null(info.executable);
  mrt_model_destroy(model);
}

static void options_in_key_order(void **state) {
  (void)state;
  mrt_model *model = load_one("sample.popef");
  const char *key = NULL;
  const char *value = NULL;
  assert_int_equal(mrt_model_option(model, MRT_MODEL_ENGINE_OPTIONS, 0, &key, &value), MRT_OK);
  assert_string_equal(key, "debug.instrument");
  assert_string_equal(value, "true");
  assert_int_equal(mrt_model_option(model, MRT_MODEL_ENGINE_OPTIONS, 1, &key, &value), MRT_OK);
  assert_string_equal(key, "target.workerThreads");
  assert_string_equal(value, "4");
  assert_int_equal(mrt_model_option(model, MRT_MODEL_DEVICE_OPTIONS, 0, &key, &value), MRT_OK);
  assert_string_equal(key, "ipuLinkDomainSize");
  assert_string_equal(value, "4");
  assert_int_equal(mrt_model_option(model, MRT_MODEL_DEVICE_OPTIONS, 1, &key, &value),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("option index 1 is out of range (the model has 1)");
  assert_int_equal(mrt_model_option(model, 7, 0, &key, &value), MRT_INVALID_ARGUMENT);
  mrt_model_destroy(model);
}

static void anchors_by_index_name_and_handle(void **state) {
  (void)state;
  mrt_model *model = load_one("sample.popef");
  mrt_anchor_info anchor;
  anchor.struct_size = sizeof anchor;
  assert_int_equal(mrt_model_anchor(model, 0, &anchor), MRT_OK);
  assert_string_equal(anchor.name, "x");
  assert_string_equal(anchor.handle, "h2d_x");
  assert_int_equal(anchor.data_type, MRT_F32);
  assert_int_equal(anchor.rank, 2);
  assert_int_equal(anchor.shape[0], 2);
  assert_int_equal(anchor.shape[1], 16);
  assert_int_equal(anchor.size_in_bytes, 128);
  assert_int_equal(anchor.num_programs, 1);
  assert_int_equal(anchor.programs[0], 1);
  assert_true(anchor.is_per_replica);
  assert_int_equal(anchor.tensor_type, MRT_TENSOR_INPUT);
  assert_int_equal(anchor.data_source, MRT_DATA_SOURCE_NONE);
  assert_null(anchor.remote_buffer);
  assert_int_equal(anchor.remote_buffer_repeats, 0);

  assert_int_equal(mrt_model_anchor_by_name(model, "rb", &anchor), MRT_OK);
  assert_int_equal(anchor.data_type, MRT_U8);
  assert_int_equal(anchor.data_source, MRT_DATA_SOURCE_TENSOR_DATA);
  assert_string_equal(anchor.remote_buffer, "rb_buf");
  assert_int_equal(anchor.remote_buffer_repeats, 2);

  assert_int_equal(mrt_model_anchor_by_handle(model, "d2h_y", &anchor), MRT_OK);
  assert_string_equal(anchor.name, "y");
  assert_int_equal(anchor.tensor_type, MRT_TENSOR_OUTPUT);
  assert_int_equal(anchor.num_programs, 2);
  assert_int_equal(anchor.programs[1], 2);

  assert_int_equal(mrt_model_anchor_by_name(model, "feed", &anchor), MRT_OK);
  assert_int_equal(anchor.data_source, MRT_DATA_SOURCE_FEED_DATA);
  assert_int_equal(anchor.data_type, MRT_S32);

  assert_int_equal(mrt_model_anchor(model, 7, &anchor), MRT_INVALID_ARGUMENT);
  expect_message_contains("anchor index 7 is out of range (the model has 7)");
  assert_int_equal(mrt_model_anchor_by_name(model, "nope", &anchor), MRT_NOT_FOUND);
  expect_message_contains("model 'sample' has no anchor named 'nope'");
  assert_int_equal(mrt_model_anchor_by_handle(model, "x", &anchor), MRT_NOT_FOUND);
  mrt_model_destroy(model);
}

static void program_flow_and_programs_map(void **state) {
  (void)state;
  mrt_model *model = load_one("sample.popef");
  const uint64_t *programs = NULL;
  size_t count = 0;
  assert_int_equal(mrt_model_program_flow(model, MRT_PHASE_LOAD, &programs, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_int_equal(programs[0], 0);
  assert_int_equal(mrt_model_program_flow(model, MRT_PHASE_MAIN, &programs, &count), MRT_OK);
  assert_int_equal(count, 2);
  assert_int_equal(programs[0], 1);
  assert_int_equal(programs[1], 2);
  assert_int_equal(mrt_model_program_flow(model, MRT_PHASE_SAVE, &programs, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_int_equal(programs[0], 3);
  assert_int_equal(mrt_model_program_flow(model, 3, &programs, &count), MRT_INVALID_ARGUMENT);

  static const char *names[] = {"load", "main", "main_tail", "save"};
  for (size_t i = 0; i < 4; ++i) {
    uint64_t index = 99;
    const char *name = NULL;
    assert_int_equal(mrt_model_program(model, i, &index, &name), MRT_OK);
    assert_int_equal(index, i);
    assert_string_equal(name, names[i]);
  }
  uint64_t index = 0;
  const char *name = NULL;
  assert_int_equal(mrt_model_program(model, 4, &index, &name), MRT_INVALID_ARGUMENT);
  mrt_model_destroy(model);
}

static void tensor_feed_and_executable_bytes(void **state) {
  (void)state;
  mrt_model *model = load_one("sample.popef");
  size_t expected_size = 0;
  unsigned char *expected = read_file("w.bin", &expected_size);
  const void *data = NULL;
  uint64_t size = 0;
  assert_int_equal(mrt_model_tensor_data(model, "w", &data, &size), MRT_OK);
  assert_int_equal(size, expected_size);
  assert_int_equal((uintptr_t)data % 64, 0); /* read in place from the map */
  assert_memory_equal(data, expected, expected_size);
  free(expected);

  expected = read_file("feed.bin", &expected_size);
  uint64_t num_tensors = 0;
  assert_int_equal(mrt_model_feed_data(model, "feed", &data, &size, &num_tensors), MRT_OK);
  assert_int_equal(size, expected_size);
  assert_int_equal(num_tensors, 5);
  assert_memory_equal(data, expected, expected_size);
  assert_int_equal(mrt_model_feed_data(model, "feed", &data, &size, NULL), MRT_OK);
  free(expected);

  expected = read_file("executable.bin", &expected_size);
  assert_int_equal(mrt_model_executable(model, &data, &size), MRT_OK);
  assert_int_equal(size, expected_size);
  assert_memory_equal(data, expected, expected_size);
  free(expected);

  assert_int_equal(mrt_model_tensor_data(model, "x", &data, &size), MRT_NOT_FOUND);
  expect_message_contains("mrt_model_tensor_data: model 'sample' has no TensorData named 'x'");
  assert_int_equal(mrt_model_feed_data(model, "w", &data, &size, NULL), MRT_NOT_FOUND);
  mrt_model_destroy(model);
}

static void model_split_over_two_files(void **state) {
  (void)state;
  const char *paths[] = {test_popef_sample_path("weights.popef"), test_popef_sample_path("graph.popef")};
  mrt_model *model = NULL;
  assert_int_equal(mrt_model_load(paths, 2, &model), MRT_OK);
  const void *data = NULL;
  uint64_t size = 0;
  assert_int_equal(mrt_model_tensor_data(model, "rb", &data, &size), MRT_OK);
  assert_int_equal(size, 8);
  mrt_model_destroy(model);

  /* The graph alone lacks the anchors' tensor data. */
  model = NULL;
  assert_int_equal(mrt_model_load(paths + 1, 1, &model), MRT_CORRUPT_MODEL);
  assert_null(model);
  expect_message_contains("blob 0 (Metadata) at byte 0: anchor 'w' takes its data from TensorData 'w'");
}

static void several_models_in_one_file(void **state) {
  (void)state;
  const char *paths[] = {test_popef_sample_path("two.popef")};
  mrt_model *model = NULL;
  assert_int_equal(mrt_model_load(paths, 1, &model), MRT_INVALID_ARGUMENT);
  expect_message_contains("2 models ('alpha', 'beta'); pick one by executable name");
  assert_int_equal(mrt_model_load_named(paths, 1, "beta", &model), MRT_OK);
  mrt_model_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_model_get_info(model, &info), MRT_OK);
  assert_string_equal(info.executable, "beta");
  assert_string_equal(info.package_hash, "hwsim-0.1.0-beta");
  mrt_model_destroy(model);
  model = NULL;
  assert_int_equal(mrt_model_load_named(paths, 1, "gamma", &model), MRT_NOT_FOUND);
  expect_message_contains("no Metadata for executable 'gamma'");
  assert_int_equal(mrt_model_load_named(paths, 1, "", &model), MRT_INVALID_ARGUMENT);
  assert_null(model);
}

static void bad_files(void **state) {
  (void)state;
  mrt_model *model = NULL;
  const char *missing[] = {test_popef_sample_path("missing.popef")};
  assert_int_equal(mrt_model_load(missing, 1, &model), MRT_NOT_FOUND);
  expect_message_contains("no such PopEF file");

  const char *directory[] = {test_popef_samples_dir()};
  assert_int_equal(mrt_model_load(directory, 1, &model), MRT_INVALID_ARGUMENT);
  expect_message_contains("is a directory");

  /* A copy of the sample with one byte of the weights flipped. */
  size_t size = 0;
  unsigned char *bytes = read_file("sample.popef", &size);
  size_t w_size = 0;
  unsigned char *w = read_file("w.bin", &w_size);
  unsigned char *at = NULL;
  for (size_t i = 0; i + w_size <= size && at == NULL; ++i) {
    if (memcmp(bytes + i, w, w_size) == 0) at = bytes + i;
  }
  assert_non_null(at);
  at[5] ^= 0x40;
  char corrupt[2048];
  snprintf(corrupt, sizeof corrupt, "%s", test_popef_sample_path("corrupt-by-test.popef"));
  FILE *file = fopen(corrupt, "wb");
  assert_non_null(file);
  fwrite(bytes, 1, size, file);
  fclose(file);
  free(bytes);
  free(w);
  const char *paths[] = {corrupt};
  assert_int_equal(mrt_model_load(paths, 1, &model), MRT_CORRUPT_MODEL);
  expect_message_contains("blob 2 (TensorData) at byte");
  expect_message_contains("payload checksum mismatch");
  expect_message_contains("corrupt-by-test.popef");
  assert_null(model);
  remove(corrupt);
}

static void null_and_empty_arguments(void **state) {
  (void)state;
  mrt_model *model = NULL;
  const char *paths[] = {test_popef_sample_path("sample.popef")};
  const char *null_path[] = {NULL};
  assert_int_equal(mrt_model_load(NULL, 1, &model), MRT_INVALID_ARGUMENT);
  expect_message_contains("mrt_model_load: paths must not be NULL");
  assert_int_equal(mrt_model_load(paths, 0, &model), MRT_INVALID_ARGUMENT);
  expect_message_contains("num_paths must be at least 1");
  assert_int_equal(mrt_model_load(null_path, 1, &model), MRT_INVALID_ARGUMENT);
  expect_message_contains("paths[0] must not be NULL");
  assert_int_equal(mrt_model_load(paths, 1, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_load_named(paths, 1, NULL, &model), MRT_INVALID_ARGUMENT);
  assert_null(model);

  model = load_one("sample.popef");
  const void *data = NULL;
  uint64_t size = 0;
  mrt_model_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_model_tensor_data(NULL, "w", &data, &size), MRT_INVALID_ARGUMENT);
  expect_message_contains("model must not be NULL");
  assert_int_equal(mrt_model_tensor_data(model, NULL, &data, &size), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_tensor_data(model, "w", NULL, &size), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_tensor_data(model, "w", &data, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_get_info(model, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_get_info(NULL, &info), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_anchor(model, 0, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_model_program_flow(model, MRT_PHASE_MAIN, NULL, &size), MRT_INVALID_ARGUMENT);
  /* The model is still fine after all that. */
  assert_int_equal(mrt_model_tensor_data(model, "w", &data, &size), MRT_OK);
  mrt_model_destroy(model);
  mrt_model_destroy(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(metadata_fields),
      cmocka_unit_test(sized_structs_grow_and_shrink_safely),
      cmocka_unit_test(options_in_key_order),
      cmocka_unit_test(anchors_by_index_name_and_handle),
      cmocka_unit_test(program_flow_and_programs_map),
      cmocka_unit_test(tensor_feed_and_executable_bytes),
      cmocka_unit_test(model_split_over_two_files),
      cmocka_unit_test(several_models_in_one_file),
      cmocka_unit_test(bad_files),
      cmocka_unit_test(null_and_empty_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
