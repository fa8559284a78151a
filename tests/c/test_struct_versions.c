/* Sized structs across header versions (mrt_c.h, "Sized structs"): a caller
 * built against the first published header sends exactly
 * MRT_<STRUCT>_V1_SIZE bytes, here a heap block of that size, so that
 * ASan catches any byte the library would read or write beyond it; a caller
 * built against a newer header sends a larger struct_size whose extra
 * trailing field the library must neither reject nor touch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

/* A struct as a newer header would have it: today's fields plus one more. */
#define NEWER(type) struct { type current; uint64_t appended_field; }
static const uint64_t kCanary = 0xA5A5A5A5A5A5A5A5ull;

/* A heap block of exactly `size` bytes holding the first `size` bytes of
 * `full`, struct_size set to `size`. */
static void *older_copy(const void *full, size_t size) {
  void *block = malloc(size);
  assert_non_null(block);
  memcpy(block, full, size);
  memcpy(block, &size, sizeof size); /* struct_size comes first */
  return block;
}

static void info_structs_are_written_only_as_far_as_struct_size(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_RUNNER_MODELS", "add_one");

  mrt_model_info *older_info = malloc(MRT_MODEL_INFO_V1_SIZE);
  assert_non_null(older_info);
  older_info->struct_size = MRT_MODEL_INFO_V1_SIZE;
  assert_int_equal(mrt_model_get_info(model, older_info), MRT_OK);
  assert_true(older_info->num_anchors > 0);
  free(older_info);

  mrt_anchor_info *older_anchor = malloc(MRT_ANCHOR_INFO_V1_SIZE);
  assert_non_null(older_anchor);
  older_anchor->struct_size = MRT_ANCHOR_INFO_V1_SIZE;
  assert_int_equal(mrt_model_anchor(model, 0, older_anchor), MRT_OK);
  assert_non_null(older_anchor->name);
  free(older_anchor);

  NEWER(mrt_model_info) newer;
  memset(&newer, 0, sizeof newer);
  newer.current.struct_size = sizeof newer;
  newer.appended_field = kCanary;
  assert_int_equal(mrt_model_get_info(model, &newer.current), MRT_OK);
  assert_true(newer.current.num_anchors > 0);
  assert_true(newer.appended_field == kCanary); /* a field this library does not know */

  mrt_model_info too_small;
  too_small.struct_size = MRT_MODEL_INFO_V1_SIZE - 1;
  assert_int_equal(mrt_model_get_info(model, &too_small), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "struct_size");
  mrt_model_destroy(model);

  mrt_target *older_target = malloc(MRT_TARGET_V1_SIZE);
  assert_non_null(older_target);
  older_target->struct_size = MRT_TARGET_V1_SIZE;
  assert_int_equal(mrt_target_init("gc200", 1, older_target), MRT_OK);
  assert_int_equal(older_target->tiles_per_ipu, 1472);
  free(older_target);
}

static void config_structs_are_read_only_as_far_as_struct_size(void **state) {
  (void)state;
  mrt_device_wait_config wait;
  mrt_device_wait_config_init(&wait);
  mrt_device_wait_config *older_wait = older_copy(&wait, MRT_DEVICE_WAIT_CONFIG_V1_SIZE);
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.device_wait_config = older_wait;
  mrt_model_runner_config *older_config = older_copy(&config, MRT_MODEL_RUNNER_CONFIG_V1_SIZE);
  mrt_model_runner *runner = test_make_runner("add_one", older_config);
  mrt_model_runner_destroy(runner);

  NEWER(mrt_model_runner_config) newer;
  newer.current = config;
  newer.current.struct_size = sizeof newer;
  newer.appended_field = kCanary;
  runner = test_make_runner("add_one", &newer.current);
  mrt_model_runner_destroy(runner);

  mrt_model_runner *none = NULL;
  config.struct_size = MRT_MODEL_RUNNER_CONFIG_V1_SIZE - 1;
  const char *paths[] = {test_model_path("MRT_TEST_RUNNER_MODELS", "add_one")};
  assert_int_equal(mrt_model_runner_create_from_files(paths, 1, &config, &none), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "config->struct_size");
  assert_null(none);
  free(older_config);
  free(older_wait);

  mrt_model *model = test_load_model("MRT_TEST_RUNNER_MODELS", "add_one");
  mrt_session_config session_config;
  mrt_session_config_init(&session_config);
  mrt_session_config *older_session = older_copy(&session_config, MRT_SESSION_CONFIG_V1_SIZE);
  mrt_session *session = NULL;
  assert_int_equal(mrt_session_create(model, older_session, &session), MRT_OK);
  mrt_queue_manager_config queue_config;
  mrt_queue_manager_config_init(&queue_config);
  mrt_queue_manager_config *older_queues = older_copy(&queue_config, MRT_QUEUE_MANAGER_CONFIG_V1_SIZE);
  mrt_queue_manager *queues = NULL;
  assert_int_equal(mrt_session_create_queue_manager(session, older_queues, &queues), MRT_OK);
  mrt_queue_manager_destroy(queues);
  mrt_session_destroy(session);
  free(older_queues);
  free(older_session);
  mrt_model_destroy(model);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(info_structs_are_written_only_as_far_as_struct_size),
      cmocka_unit_test(config_structs_are_read_only_as_far_as_struct_size),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
