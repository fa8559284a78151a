/* Model files whose blobs all pass their checksums but whose metadata
 * disagrees with their executable (tests/data/repro/, from the reproducers of
 * issue 18). Each loads (the container is sound) and is then refused by
 * mrt_model_runner_create and mrt_session_create with MRT_CORRUPT_MODEL and a
 * message naming what disagrees, before any buffer is sized from it; after
 * each, a good model is still served. Runs under ASan in CI, where any
 * out-of-bounds access the checks miss would abort. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

typedef struct {
  const char *file; /* in $MRT_TEST_REPRO_DIR, without .popef */
  const char *needles[3];
} bad_model;

static const bad_model kBadModels[] = {
    {"input_shape_129x_add_one",
     {"anchor 'x' is F32[129,16] (2064 elements, 8256 bytes) in the metadata",
      "its stream 'x' is F32 x 16 elements (64 bytes) in the executable", "blob 1 (Executable)"}},
    {"output_shape_129x_add_one", {"anchor 'y' is F32[129,16]", "stream 'y' is F32 x 16 elements", NULL}},
    {"hbo_add_one", {"anchor 'y' is F32[", "stream 'y' is F32 x 16 elements (64 bytes)", NULL}},
    {"handle_swap_add_one", {"anchor 'x' is INPUT in the metadata but its stream 'y' goes device to host", NULL}},
    {"handle_swap_time_major", {"is INPUT in the metadata but its stream", "goes device to host", NULL}},
    {"prog_index_u64", {"program 18446744073709551615", "which has", NULL}},
    {"prog_index_2p33", {"program 8589934592", "which has", NULL}},
    {"tensordata_shrunk_mlp", {"anchor 'w1' is F32[1]", "stream 'w1' is F32 x 100352 elements", NULL}},
    {"mlp_m1155", {"2147483658", "in the executable", NULL}},
    {"cond_m1651", {"anchor 'x' is F32[1,2147483656]", "stream 'x' is F32 x 8 elements", NULL}},
    {"exe_hang_add_one", {"but that program never moves it", NULL}},
};
enum { NUM_BAD_MODELS = sizeof kBadModels / sizeof kBadModels[0] };

static const char *repro_path(const char *name) { return test_model_path("MRT_TEST_REPRO_DIR", name); }

static void expect_refused(mrt_status status, const bad_model *bad, const char *call) {
  if (status != MRT_CORRUPT_MODEL) {
    fail_msg("%s(%s) gave %s: %s", call, bad->file, mrt_status_string(status), mrt_last_error_message());
  }
  for (int i = 0; i < 3 && bad->needles[i] != NULL; ++i) {
    test_expect_contains(mrt_last_error_message(), bad->needles[i]);
  }
}

/* add_one still serves the right answers. */
static void expect_good_model_served(void) {
  mrt_model_runner *runner = test_make_runner("add_one", NULL);
  float x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = (float)i;
  const mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
  assert_int_equal(mrt_model_runner_execute(runner, &in, 1, &out, 1, 0), MRT_OK);
  for (int i = 0; i < 16; ++i) assert_float_equal(y[i], x[i] + 1.0f, 0);
  mrt_model_runner_destroy(runner);
}

static void runner_creation_refuses_each(void **state) {
  (void)state;
  for (int m = 0; m < NUM_BAD_MODELS; ++m) {
    const bad_model *bad = &kBadModels[m];
    const char *paths[] = {repro_path(bad->file)};
    mrt_model *model = NULL;
    if (mrt_model_load(paths, 1, &model) != MRT_OK) {
      fail_msg("mrt_model_load(%s): %s", bad->file, mrt_last_error_message());
    }
    mrt_model_runner *runner = NULL;
    expect_refused(mrt_model_runner_create(model, NULL, &runner), bad, "mrt_model_runner_create");
    assert_null(runner);
    expect_refused(mrt_model_runner_create_from_files(paths, 1, NULL, &runner), bad,
                   "mrt_model_runner_create_from_files");
    mrt_model_destroy(model);
    expect_good_model_served();
  }
}

static void session_creation_refuses_each(void **state) {
  (void)state;
  for (int m = 0; m < NUM_BAD_MODELS; ++m) {
    const bad_model *bad = &kBadModels[m];
    const char *paths[] = {repro_path(bad->file)};
    mrt_session *session = NULL;
    expect_refused(mrt_session_create_from_files(paths, 1, NULL, &session), bad, "mrt_session_create_from_files");
    assert_null(session);
  }
  expect_good_model_served();
}

/* A model whose simulated device would not fit in the host memory limit is
 * refused before anything is allocated, and serves again once it fits. */
static void host_memory_limit_refuses_then_admits(void **state) {
  (void)state;
  const uint64_t before = mrt_host_memory_limit();
  assert_true(before > 0);
  assert_int_equal(mrt_host_memory_reserved(), 0);
  mrt_set_host_memory_limit(1024);
  assert_int_equal(mrt_host_memory_limit(), 1024);
  const char *paths[] = {test_model_path("MRT_TEST_RUNNER_MODELS", "mlp")};
  mrt_model_runner *runner = NULL;
  assert_int_equal(mrt_model_runner_create_from_files(paths, 1, NULL, &runner), MRT_RESOURCE_EXHAUSTED);
  test_expect_contains(mrt_last_error_message(), "session of model 'mlp' needs ");
  test_expect_contains(mrt_last_error_message(), "of the limit of 1024 bytes");
  assert_null(runner);
  assert_int_equal(mrt_host_memory_reserved(), 0);

  mrt_set_host_memory_limit(0); /* the default again */
  assert_int_equal(mrt_host_memory_limit(), before);
  runner = test_make_runner("mlp", NULL);
  assert_true(mrt_host_memory_reserved() > 0);
  mrt_model_runner_destroy(runner);
  assert_int_equal(mrt_host_memory_reserved(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(runner_creation_refuses_each),
      cmocka_unit_test(session_creation_refuses_each),
      cmocka_unit_test(host_memory_limit_refuses_then_admits),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
