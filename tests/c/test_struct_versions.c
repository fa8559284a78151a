/* Sized structs across header versions (mrt_c.h, "Sized structs"): a caller
 * built against the first published header sends exactly
 * MRT_<STRUCT>_V1_SIZE bytes, here a heap block of that size, so that
 * ASan catches any byte the library would read or write beyond it; a caller
 * built against a newer header sends a larger struct_size whose extra
 * trailing field the library must neither reject nor touch. mrt_X_init
 * writes only as far as the caller's struct reaches: the exported V1
 * symbol V1 bytes, mrt_X_init_sized (behind the header's mrt_X_init macro)
 * `size` bytes, checked with guard bytes after the struct. */
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

/* A zeroed heap block of `size` bytes, struct_size set to `size`: the
 * struct of a program built against an older header. Its fields are read
 * with OLDER_FIELD: the current type is larger than the block, and access
 * through it is undefined (clang's UBSan object-size check says so). */
static void *older_block(size_t size) {
  void *block = calloc(1, size);
  assert_non_null(block);
  memcpy(block, &size, sizeof size); /* struct_size comes first */
  return block;
}
#define OLDER_FIELD(block, type, field, out) \
  memcpy(&(out), (const char *)(block) + offsetof(type, field), sizeof(out))

/* An older block holding the first `size` bytes of `full` after struct_size. */
static void *older_copy(const void *full, size_t size) {
  void *block = older_block(size);
  memcpy((char *)block + sizeof size, (const char *)full + sizeof size, size - sizeof size);
  return block;
}

static void info_structs_are_written_only_as_far_as_struct_size(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_RUNNER_MODELS", "add_one");

  void *older_info = older_block(MRT_MODEL_INFO_V1_SIZE);
  assert_int_equal(mrt_model_get_info(model, older_info), MRT_OK);
  size_t num_anchors = 0;
  OLDER_FIELD(older_info, mrt_model_info, num_anchors, num_anchors);
  assert_true(num_anchors > 0);
  free(older_info);

  void *older_anchor = older_block(MRT_ANCHOR_INFO_V1_SIZE);
  assert_int_equal(mrt_model_anchor(model, 0, older_anchor), MRT_OK);
  const char *anchor_name = NULL;
  OLDER_FIELD(older_anchor, mrt_anchor_info, name, anchor_name);
  assert_non_null(anchor_name);
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

  void *older_target = older_block(MRT_TARGET_V1_SIZE);
  assert_int_equal(mrt_target_init_sized("gc200", 1, older_target, MRT_TARGET_V1_SIZE), MRT_OK);
  uint32_t tiles_per_ipu = 0;
  OLDER_FIELD(older_target, mrt_target, tiles_per_ipu, tiles_per_ipu);
  assert_int_equal(tiles_per_ipu, 1472);
  free(older_target);
}

/* A newer header may put an appended field in a struct's tail padding,
 * leaving sizeof unchanged: the library writes only up to its own last
 * field, never the padding after it. mrt_tensor_info ends with two bools,
 * so it has such padding on every ABI this runs on. */
static void info_structs_leave_their_tail_padding_alone(void **state) {
  (void)state;
  const size_t known = MRT_STRUCT_SIZE(mrt_tensor_info, is_constant);
  assert_true(known < sizeof(mrt_tensor_info));
  mrt_graph *graph = NULL;
  assert_int_equal(mrt_graph_create(NULL, 1, &graph), MRT_OK);
  const uint64_t shape[2] = {2, 3};
  mrt_tensor tensor = 0;
  assert_int_equal(mrt_graph_add_variable(graph, MRT_F32, shape, 2, "t", &tensor), MRT_OK);
  unsigned char block[sizeof(mrt_tensor_info)];
  memset(block, 0xAB, sizeof block);
  mrt_tensor_info *info = (mrt_tensor_info *)(void *)block;
  info->struct_size = sizeof block;
  assert_int_equal(mrt_graph_tensor_info(graph, tensor, info), MRT_OK);
  assert_int_equal(info->num_elements, 6);
  for (size_t i = known; i < sizeof block; ++i) assert_int_equal(block[i], 0xAB);
  mrt_graph_destroy(graph);
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

/* Each config struct's init functions behind one signature, for the table
 * below. The V1 entry is the exported mrt_X_init symbol that programs built
 * before mrt_X_init_sized call: the parentheses bypass the header's macro. */
#define INIT_FUNCTIONS(type)                                                                         \
  static mrt_status type##_sized(void *p, size_t size) { return type##_init_sized(p, size); } \
  static void type##_v1(void *p) { (type##_init)(p); }
INIT_FUNCTIONS(mrt_device_wait_config)
INIT_FUNCTIONS(mrt_session_config)
INIT_FUNCTIONS(mrt_queue_manager_config)
INIT_FUNCTIONS(mrt_queue_info)
INIT_FUNCTIONS(mrt_model_runner_config)
INIT_FUNCTIONS(mrt_anchor_config)
INIT_FUNCTIONS(mrt_onnx_options)
static mrt_status mrt_target_sized(void *p, size_t size) { return mrt_target_init_sized("gc200", 1, p, size); }
static void mrt_target_v1(void *p) { assert_int_equal((mrt_target_init)("gc200", 1, p), MRT_OK); }

typedef struct {
  const char *name;
  mrt_status (*init_sized)(void *p, size_t size);
  void (*init_v1)(void *p);
  size_t v1_size;
  size_t known_size; /* MRT_STRUCT_SIZE of the last field this library has */
  size_t full_size;  /* sizeof */
} init_case;

#define INIT_CASE(type, V1, last_field) \
  {#type, type##_sized, type##_v1, V1, MRT_STRUCT_SIZE(type, last_field), sizeof(type)}
static const init_case kInitCases[] = {
    INIT_CASE(mrt_device_wait_config, MRT_DEVICE_WAIT_CONFIG_V1_SIZE, sleep_time_ns),
    INIT_CASE(mrt_session_config, MRT_SESSION_CONFIG_V1_SIZE, model_name),
    INIT_CASE(mrt_queue_manager_config, MRT_QUEUE_MANAGER_CONFIG_V1_SIZE, num_ring_size_overrides),
    INIT_CASE(mrt_queue_info, MRT_QUEUE_INFO_V1_SIZE, connected),
    INIT_CASE(mrt_model_runner_config, MRT_MODEL_RUNNER_CONFIG_V1_SIZE, model_name),
    INIT_CASE(mrt_anchor_config, MRT_ANCHOR_CONFIG_V1_SIZE, data_source),
    INIT_CASE(mrt_onnx_options, MRT_ONNX_OPTIONS_V1_SIZE, num_io_tiles),
    INIT_CASE(mrt_target, MRT_TARGET_V1_SIZE, host_sync_cycles),
};

enum { kGuardBytes = 16 };
static const unsigned char kGuard = 0xA5;

/* A block of `size` + kGuardBytes bytes, all kGuard. */
static unsigned char *guarded_block(size_t size) {
  unsigned char *block = malloc(size + kGuardBytes);
  assert_non_null(block);
  memset(block, kGuard, size + kGuardBytes);
  return block;
}

static void assert_untouched(const unsigned char *block, size_t from, size_t to, const char *what) {
  for (size_t i = from; i < to; ++i) {
    if (block[i] != kGuard) fail_msg("%s: byte %zu written (0x%02x)", what, i, block[i]);
  }
}

static size_t struct_size_of(const void *block) {
  size_t size;
  memcpy(&size, block, sizeof size);
  return size;
}

static void init_writes_only_as_far_as_the_callers_struct(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof kInitCases / sizeof kInitCases[0]; ++i) {
    const init_case *c = &kInitCases[i];
    /* A program built against the first header: the exported symbol and
     * init_sized with that size write V1 bytes and nothing after them. */
    unsigned char *older = guarded_block(c->v1_size);
    c->init_v1(older);
    assert_int_equal(struct_size_of(older), c->v1_size);
    assert_untouched(older, c->v1_size, c->v1_size + kGuardBytes, c->name);
    memset(older, kGuard, c->v1_size + kGuardBytes);
    assert_int_equal(c->init_sized(older, c->v1_size), MRT_OK);
    assert_int_equal(struct_size_of(older), c->v1_size);
    assert_untouched(older, c->v1_size, c->v1_size + kGuardBytes, c->name);

    /* Below the first published size: refused, nothing written. */
    memset(older, kGuard, c->v1_size + kGuardBytes);
    assert_int_equal(c->init_sized(older, c->v1_size - 1), MRT_INVALID_ARGUMENT);
    test_expect_contains(mrt_last_error_message(), "expected at least");
    assert_untouched(older, 0, c->v1_size + kGuardBytes, c->name);
    assert_int_equal(c->init_sized(NULL, c->full_size), MRT_INVALID_ARGUMENT);
    free(older);

    /* A program built against a newer header with a field appended (also
     * into this struct's tail padding): struct_size is its size, the bytes
     * this library does not know stay untouched. */
    const size_t newer_size = c->full_size + sizeof(uint64_t);
    unsigned char *newer = guarded_block(newer_size);
    assert_int_equal(c->init_sized(newer, newer_size), MRT_OK);
    assert_int_equal(struct_size_of(newer), newer_size);
    assert_untouched(newer, c->known_size, newer_size + kGuardBytes, c->name);
    free(newer);
  }
}

static void init_of_a_newer_struct_gives_the_defaults_this_library_knows(void **state) {
  (void)state;
  NEWER(mrt_model_runner_config) runner;
  memset(&runner, 0, sizeof runner);
  runner.appended_field = kCanary;
  assert_int_equal(mrt_model_runner_config_init_sized(&runner.current, sizeof runner), MRT_OK);
  assert_int_equal(runner.current.struct_size, sizeof runner);
  assert_int_equal(runner.current.replication_factor, 1);
  assert_int_equal(runner.current.batching_dim, MRT_BATCHING_DISABLED);
  assert_int_equal(runner.current.batch_size_timeout_ns, -1);
  assert_true(runner.appended_field == kCanary);

  NEWER(mrt_session_config) session;
  memset(&session, 0, sizeof session);
  session.appended_field = kCanary;
  assert_int_equal(mrt_session_config_init_sized(&session.current, sizeof session), MRT_OK);
  assert_int_equal(session.current.policy, MRT_LAUNCH_DEFERRED);
  assert_int_equal(session.current.max_look_ahead_syncs, -1);
  assert_true(session.current.check_package_hash);
  assert_true(session.appended_field == kCanary);

  /* The header's macro passes this header's sizeof. */
  mrt_device_wait_config wait;
  assert_int_equal(mrt_device_wait_config_init(&wait), MRT_OK);
  assert_int_equal(wait.struct_size, sizeof wait);
  assert_int_equal(wait.sleep_time_ns, 15000000000ll);
  mrt_target target;
  assert_int_equal(mrt_target_init("bow", 2, &target), MRT_OK);
  assert_int_equal(target.struct_size, sizeof target);
  assert_int_equal(target.num_ipus, 2);
  assert_int_equal(mrt_target_init("nope", 1, &target), MRT_NOT_FOUND);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(info_structs_are_written_only_as_far_as_struct_size),
      cmocka_unit_test(info_structs_leave_their_tail_padding_alone),
      cmocka_unit_test(config_structs_are_read_only_as_far_as_struct_size),
      cmocka_unit_test(init_writes_only_as_far_as_the_callers_struct),
      cmocka_unit_test(init_of_a_newer_struct_gives_the_defaults_this_library_knows),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
