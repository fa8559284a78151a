/* mrt_popef_listing (what mrt-info shows) on the sample PopEF files of the
 * popef_samples fixture (MRT_TEST_POPEF_DIR): every blob of a sound file
 * with its descriptor, models loaded from one or several files, and what is
 * left of damaged, truncated, missing and incomplete files, with the first
 * problem and where it is; then every bad argument. Also
 * mrt_model_batching_dim and mrt_blob_type_name. */
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

/* A copy of sample.popef, `keep` bytes long (all of it if 0), with byte
 * `flip` (if not SIZE_MAX) changed, written to `name`; its path in `out`. */
static void write_variant(const char *name, size_t keep, size_t flip, char *out, size_t out_size) {
  FILE *in = fopen(test_popef_sample_path("sample.popef"), "rb");
  assert_non_null(in);
  unsigned char bytes[8192];
  size_t size = fread(bytes, 1, sizeof bytes, in);
  fclose(in);
  assert_true(size > 0 && size < sizeof bytes);
  if (keep != 0) size = keep;
  if (flip != SIZE_MAX) bytes[flip] ^= 0x40;
  snprintf(out, out_size, "%s", test_popef_sample_path(name));
  FILE *file = fopen(out, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(bytes, 1, size, file), size);
  fclose(file);
}

static mrt_popef_listing *list(const char *const *paths, size_t num_paths, const char *model_name) {
  mrt_popef_listing *listing = NULL;
  assert_int_equal(mrt_popef_listing_create(paths, num_paths, model_name, &listing), MRT_OK);
  assert_non_null(listing);
  return listing;
}

static mrt_blob_info blob_of(const mrt_popef_listing *listing, size_t file, size_t index) {
  mrt_blob_info info;
  memset(&info, 0xab, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(mrt_popef_listing_blob(listing, file, index, &info), MRT_OK);
  assert_int_equal(info.struct_size, sizeof info);
  return info;
}

static void expect_error(const mrt_popef_listing *listing, mrt_status status, const char *needle) {
  mrt_status actual = -1;
  const char *message = NULL;
  assert_int_equal(mrt_popef_listing_error(listing, &actual, &message), MRT_OK);
  assert_int_equal(actual, status);
  if (status == MRT_OK) {
    assert_string_equal(message, "");
  } else {
    test_expect_contains(message, needle);
    assert_null(strchr(message, '\n')); /* one line */
  }
}

static size_t num_models(const mrt_popef_listing *listing) {
  size_t count = 99;
  assert_int_equal(mrt_popef_listing_num_models(listing, &count), MRT_OK);
  return count;
}

static void expect_model(const mrt_popef_listing *listing, size_t index, const char *executable) {
  mrt_model *model = NULL;
  assert_int_equal(mrt_popef_listing_model(listing, index, &model), MRT_OK);
  mrt_model_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_model_get_info(model, &info), MRT_OK);
  assert_string_equal(info.executable, executable);
  mrt_model_destroy(model);
}

static void sound_file_lists_every_blob_and_its_model(void **state) {
  (void)state;
  const char *paths[] = {test_popef_sample_path("sample.popef")};
  mrt_popef_listing *listing = list(paths, 1, NULL);
  expect_error(listing, MRT_OK, "");
  const char *path = NULL;
  uint64_t size = 0;
  size_t blobs = 0;
  assert_int_equal(mrt_popef_listing_file(listing, 0, &path, &size, &blobs), MRT_OK);
  assert_string_equal(path, paths[0]);
  assert_int_equal(size, 3648);
  assert_int_equal(blobs, 6);
  assert_int_equal(mrt_popef_listing_file(listing, 0, NULL, NULL, NULL), MRT_OK);

  static const struct {
    int32_t type;
    const char *name;
    uint64_t offset;
    int32_t data_type;
    size_t rank;
    uint64_t num_tensors;
    uint64_t data_size;
  } expected[] = {
      {MRT_BLOB_METADATA, "", 0, -1, 0, 0, 0},
      {MRT_BLOB_EXECUTABLE, "sample", 1408, -1, 0, 0, 1000},
      {MRT_BLOB_TENSOR_DATA, "w", 2560, MRT_F16, 2, 1, 128},
      {MRT_BLOB_TENSOR_DATA, "rb", 2880, MRT_U8, 1, 1, 8},
      {MRT_BLOB_FEED_DATA, "feed", 3136, MRT_S32, 1, 5, 60},
      {MRT_BLOB_OPAQUE, "framework", 3392, -1, 0, 0, sizeof "framework description of sample" - 1},
  };
  for (size_t i = 0; i < 6; ++i) {
    const mrt_blob_info blob = blob_of(listing, 0, i);
    assert_int_equal(blob.file, 0);
    assert_int_equal(blob.index, i);
    assert_int_equal(blob.type, expected[i].type);
    assert_string_equal(blob.executable, "sample");
    assert_string_equal(blob.name, expected[i].name);
    assert_int_equal(blob.offset, expected[i].offset);
    assert_true(blob.payload_size > expected[i].data_size);
    assert_int_equal(blob.stored_checksum, blob.computed_checksum);
    assert_string_equal(blob.problem, "");
    assert_int_equal(blob.data_type, expected[i].data_type);
    assert_int_equal(blob.rank, expected[i].rank);
    if (expected[i].rank == 0) assert_null(blob.shape);
    assert_int_equal(blob.num_tensors, expected[i].num_tensors);
    assert_int_equal(blob.data_size, expected[i].data_size);
  }
  const mrt_blob_info w = blob_of(listing, 0, 2);
  assert_int_equal(w.shape[0], 16);
  assert_int_equal(w.shape[1], 4);

  assert_int_equal(num_models(listing), 1);
  mrt_model *model = NULL;
  assert_int_equal(mrt_popef_listing_model(listing, 0, &model), MRT_OK);
  mrt_popef_listing_destroy(listing); /* the model outlives its listing */
  const void *data = NULL;
  uint64_t data_size = 0;
  assert_int_equal(mrt_model_tensor_data(model, "w", &data, &data_size), MRT_OK);
  assert_int_equal(data_size, 128);
  uint32_t dim = 0;
  assert_int_equal(mrt_model_batching_dim(model, &dim), MRT_OK);
  assert_int_equal(dim, MRT_BATCHING_DISABLED);
  mrt_model_destroy(model);
}

static void every_model_or_the_one_named(void **state) {
  (void)state;
  const char *paths[] = {test_popef_sample_path("two.popef")};
  mrt_popef_listing *listing = list(paths, 1, NULL);
  expect_error(listing, MRT_OK, "");
  assert_int_equal(num_models(listing), 2);
  expect_model(listing, 0, "alpha");
  expect_model(listing, 1, "beta");
  mrt_popef_listing_destroy(listing);

  listing = list(paths, 1, "beta");
  assert_int_equal(num_models(listing), 1);
  expect_model(listing, 0, "beta");
  mrt_popef_listing_destroy(listing);

  /* A model the files do not hold: every blob is still listed. */
  listing = list(paths, 1, "gamma");
  expect_error(listing, MRT_NOT_FOUND, "no Metadata for executable 'gamma'");
  assert_int_equal(num_models(listing), 0);
  size_t blobs = 0;
  assert_int_equal(mrt_popef_listing_file(listing, 0, NULL, NULL, &blobs), MRT_OK);
  assert_int_equal(blobs, 12);
  assert_string_equal(blob_of(listing, 0, 6).executable, "beta");
  mrt_popef_listing_destroy(listing);
}

static void model_split_over_files_and_an_incomplete_part(void **state) {
  (void)state;
  const char *paths[] = {test_popef_sample_path("graph.popef"), test_popef_sample_path("weights.popef")};
  mrt_popef_listing *listing = list(paths, 2, NULL);
  expect_error(listing, MRT_OK, "");
  assert_int_equal(num_models(listing), 1);
  const mrt_blob_info w = blob_of(listing, 1, 0);
  assert_int_equal(w.file, 1);
  assert_int_equal(w.index, 0);
  assert_int_equal(w.type, MRT_BLOB_TENSOR_DATA);
  assert_string_equal(w.name, "w");
  mrt_popef_listing_destroy(listing);

  /* The graph alone: its framing is sound, its model lacks the weights. */
  listing = list(paths, 1, NULL);
  expect_error(listing, MRT_CORRUPT_MODEL,
               "blob 0 (Metadata) at byte 0: anchor 'w' takes its data from TensorData 'w', which model "
               "'sample' does not have");
  assert_int_equal(num_models(listing), 0);
  size_t blobs = 0;
  assert_int_equal(mrt_popef_listing_file(listing, 0, NULL, NULL, &blobs), MRT_OK);
  assert_int_equal(blobs, 2);
  mrt_popef_listing_destroy(listing);
}

static void damaged_payload_is_listed_with_both_checksums(void **state) {
  (void)state;
  char damaged[2048];
  write_variant("listing-damaged.popef", 0, 2560 + 64 + 200, damaged, sizeof damaged); /* w's data */
  const char *paths[] = {damaged};
  mrt_popef_listing *listing = list(paths, 1, NULL);
  expect_error(listing, MRT_CORRUPT_MODEL, "blob 2 (TensorData) at byte 2560: payload checksum mismatch");
  assert_int_equal(num_models(listing), 0);
  const mrt_blob_info w = blob_of(listing, 0, 2);
  assert_int_not_equal(w.stored_checksum, w.computed_checksum);
  assert_string_equal(w.name, "w");
  const mrt_blob_info rb = blob_of(listing, 0, 3);
  assert_int_equal(rb.stored_checksum, rb.computed_checksum);
  mrt_popef_listing_destroy(listing);
  remove(damaged);
}

static void damaged_descriptor_says_why_it_is_unreadable(void **state) {
  (void)state;
  char damaged[2048];
  /* The prefix of w's payload, just after its header. */
  write_variant("listing-descriptor.popef", 0, 2560 + 64, damaged, sizeof damaged);
  const char *paths[] = {damaged};
  mrt_popef_listing *listing = list(paths, 1, NULL);
  mrt_status status = MRT_OK;
  assert_int_equal(mrt_popef_listing_error(listing, &status, NULL), MRT_OK);
  assert_int_equal(status, MRT_CORRUPT_MODEL);
  const mrt_blob_info w = blob_of(listing, 0, 2);
  test_expect_contains(w.problem, "blob 2 (TensorData) at byte 2560");
  assert_string_equal(w.executable, "");
  assert_string_equal(w.name, "");
  assert_int_equal(w.data_type, -1);
  assert_int_equal(w.data_size, 0);
  mrt_popef_listing_destroy(listing);
  remove(damaged);
}

static void truncated_file_lists_the_blobs_before_the_cut(void **state) {
  (void)state;
  char truncated[2048];
  write_variant("listing-truncated.popef", 2954, SIZE_MAX, truncated, sizeof truncated); /* in rb */
  const char *paths[] = {test_popef_sample_path("sample.popef"), truncated};
  mrt_popef_listing *listing = list(paths, 2, NULL);
  expect_error(listing, MRT_CORRUPT_MODEL, "blob 3 (TensorData) at byte 2880");
  expect_error(listing, MRT_CORRUPT_MODEL, "truncated?");
  assert_int_equal(num_models(listing), 0);
  uint64_t size = 0;
  size_t blobs = 0;
  assert_int_equal(mrt_popef_listing_file(listing, 0, NULL, NULL, &blobs), MRT_OK);
  assert_int_equal(blobs, 6);
  assert_int_equal(mrt_popef_listing_file(listing, 1, NULL, &size, &blobs), MRT_OK);
  assert_int_equal(size, 2954);
  assert_int_equal(blobs, 3);
  assert_string_equal(blob_of(listing, 1, 2).name, "w");
  mrt_popef_listing_destroy(listing);
  remove(truncated);
}

static void missing_files_and_directories(void **state) {
  (void)state;
  const char *paths[] = {test_popef_sample_path("missing.popef"), test_popef_sample_path("sample.popef")};
  mrt_popef_listing *listing = list(paths, 2, NULL);
  expect_error(listing, MRT_NOT_FOUND, "missing.popef': no such PopEF file");
  uint64_t size = 99;
  size_t blobs = 99;
  assert_int_equal(mrt_popef_listing_file(listing, 0, NULL, &size, &blobs), MRT_OK);
  assert_int_equal(size, 0);
  assert_int_equal(blobs, 0);
  assert_int_equal(mrt_popef_listing_file(listing, 1, NULL, NULL, &blobs), MRT_OK);
  assert_int_equal(blobs, 6); /* the other file is listed all the same */
  mrt_popef_listing_destroy(listing);

  const char *directory[] = {test_popef_samples_dir()};
  listing = list(directory, 1, NULL);
  expect_error(listing, MRT_INVALID_ARGUMENT, "is a directory, not a PopEF file");
  mrt_popef_listing_destroy(listing);
}

static void bad_arguments_name_the_value_and_leave_the_listing_usable(void **state) {
  (void)state;
  const char *paths[] = {test_popef_sample_path("sample.popef")};
  const char *null_path[] = {NULL};
  mrt_popef_listing *listing = NULL;
  assert_int_equal(mrt_popef_listing_create(NULL, 1, NULL, &listing), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "mrt_popef_listing_create: paths must not be NULL");
  assert_int_equal(mrt_popef_listing_create(paths, 0, NULL, &listing), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "num_paths must be at least 1");
  assert_int_equal(mrt_popef_listing_create(null_path, 1, NULL, &listing), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "paths[0] must not be NULL");
  assert_int_equal(mrt_popef_listing_create(paths, 1, "", &listing), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "model_name must not be empty");
  assert_int_equal(mrt_popef_listing_create(paths, 1, NULL, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out must not be NULL");
  assert_null(listing);

  listing = list(paths, 1, NULL);
  mrt_status status = MRT_OK;
  size_t count = 0;
  mrt_model *model = NULL;
  mrt_blob_info blob;
  blob.struct_size = sizeof blob;
  assert_int_equal(mrt_popef_listing_error(NULL, &status, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "mrt_popef_listing_error: listing must not be NULL");
  assert_int_equal(mrt_popef_listing_file(NULL, 0, NULL, NULL, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_popef_listing_file(listing, 1, NULL, NULL, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "file 1 is out of range (the listing has 1 files)");
  assert_int_equal(mrt_popef_listing_blob(listing, 2, 0, &blob), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "file 2 is out of range");
  assert_int_equal(mrt_popef_listing_blob(listing, 0, 6, &blob), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "blob index 6 is out of range (file 0 has 6 listed blobs)");
  assert_int_equal(mrt_popef_listing_blob(listing, 0, 0, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_blob must not be NULL");
  blob.struct_size = MRT_BLOB_INFO_V1_SIZE - 1;
  assert_int_equal(mrt_popef_listing_blob(listing, 0, 0, &blob), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_blob->struct_size is");
  assert_int_equal(mrt_popef_listing_blob(NULL, 0, 0, &blob), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_popef_listing_num_models(listing, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_count must not be NULL");
  assert_int_equal(mrt_popef_listing_num_models(NULL, &count), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_popef_listing_model(listing, 1, &model), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "model index 1 is out of range (the listing has 1 models)");
  assert_int_equal(mrt_popef_listing_model(listing, 0, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_popef_listing_model(NULL, 0, &model), MRT_INVALID_ARGUMENT);
  assert_null(model);

  /* Still usable, and its own error untouched by the calls that failed. */
  expect_error(listing, MRT_OK, "");
  assert_int_equal(blob_of(listing, 0, 5).type, MRT_BLOB_OPAQUE);
  expect_model(listing, 0, "sample");
  mrt_popef_listing_destroy(listing);
  mrt_popef_listing_destroy(NULL);

  uint32_t dim = 0;
  model = NULL;
  assert_int_equal(mrt_model_batching_dim(NULL, &dim), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "mrt_model_batching_dim: model must not be NULL");
  assert_int_equal(mrt_model_load(paths, 1, &model), MRT_OK);
  assert_int_equal(mrt_model_batching_dim(model, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_dim must not be NULL");
  mrt_model_destroy(model);
}

/* A model compiled with a batching dimension records it. */
static void batching_dim_of_a_compiled_model(void **state) {
  (void)state;
  const char *onnx = getenv("MRT_TEST_ONNX_MODEL");
  if (onnx == NULL) fail_msg("MRT_TEST_ONNX_MODEL is not set");
  mrt_onnx_options options;
  mrt_onnx_options_init(&options);
  options.batching_dim = 0;
  mrt_model *model = NULL;
  assert_int_equal(mrt_onnx_compile_file(onnx, &options, &model), MRT_OK);
  uint32_t dim = MRT_BATCHING_DISABLED;
  assert_int_equal(mrt_model_batching_dim(model, &dim), MRT_OK);
  assert_int_equal(dim, 0);
  mrt_model_destroy(model);
}

/* Each blob type by its PopEF name, and any other value as "Unknown". */
static void blob_type_names(void **state) {
  (void)state;
  assert_string_equal(mrt_blob_type_name(MRT_BLOB_METADATA), "Metadata");
  assert_string_equal(mrt_blob_type_name(MRT_BLOB_EXECUTABLE), "Executable");
  assert_string_equal(mrt_blob_type_name(MRT_BLOB_TENSOR_DATA), "TensorData");
  assert_string_equal(mrt_blob_type_name(MRT_BLOB_FEED_DATA), "FeedData");
  assert_string_equal(mrt_blob_type_name(MRT_BLOB_OPAQUE), "Opaque");
  const int32_t unknown[] = {0, 6, -1, INT32_MIN, INT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; ++i) {
    assert_string_equal(mrt_blob_type_name(unknown[i]), "Unknown");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sound_file_lists_every_blob_and_its_model),
      cmocka_unit_test(every_model_or_the_one_named),
      cmocka_unit_test(model_split_over_files_and_an_incomplete_part),
      cmocka_unit_test(damaged_payload_is_listed_with_both_checksums),
      cmocka_unit_test(damaged_descriptor_says_why_it_is_unreadable),
      cmocka_unit_test(truncated_file_lists_the_blobs_before_the_cut),
      cmocka_unit_test(missing_files_and_directories),
      cmocka_unit_test(bad_arguments_name_the_value_and_leave_the_listing_usable),
      cmocka_unit_test(batching_dim_of_a_compiled_model),
      cmocka_unit_test(blob_type_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
