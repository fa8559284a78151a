/* The session part of the C API on the example models written by mrt-gen
 * (MRT_TEST_SESSION_MODELS): mlp with weights from PopEF and image/probs
 * through anchor callbacks, checked against a reference computed here from
 * the model's TensorData; stateful Load/Main x3/Save; conditional both ways;
 * remote_buffer; two sessions alternating on one device; stop() from another
 * thread and reload(); simulated device errors with their recovery
 * actions; predicates; wrong-state and wrong-name calls; and,
 * across processes (fork), waiting for a device another process holds. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlp_reference.h"
#include "mrt_c.h"
#include "test_support.h"

#define MS 1000000LL /* nanoseconds */

/* A deferred session of `name`, bound to its own small IPU Model device. */
static mrt_session *bound_session(const char *name, const mrt_session_config *config) {
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", name);
  mrt_session *session = test_bound_session(model, config);
  mrt_model_destroy(model); /* the session keeps it */
  return session;
}

static void expect_message_contains(const char *needle) {
  const char *message = mrt_last_error_message();
  if (strstr(message, needle) == NULL) fail_msg("'%s' does not contain '%s'", message, needle);
}

/* ---- callbacks over caller buffers ---- */

typedef struct buffer {
  void *data;
  uint64_t size;
  int calls;
} buffer;

static void copy_in(void *device_buffer, uint64_t size, void *user_data) {
  buffer *b = user_data;
  assert_int_equal(size, b->size);
  memcpy(device_buffer, b->data, size);
  ++b->calls;
}

static void copy_out(void *device_buffer, uint64_t size, void *user_data) {
  buffer *b = user_data;
  assert_int_equal(size, b->size);
  memcpy(b->data, device_buffer, size);
  ++b->calls;
}

static int g_freed;
static void count_free(void *user_data) {
  (void)user_data;
  ++g_freed;
}

/* ---- mlp ---- */

typedef struct mlp_io {
  buffer image, probs;
} mlp_io;

static bool mlp_input_factory(const mrt_anchor_info *anchor, mrt_anchor_callback *out, void *user_data) {
  mlp_io *io = user_data;
  if (strcmp(anchor->name, "image") != 0) return false; /* weights keep their PopEF data */
  out->fn = copy_in;
  out->user_data = &io->image;
  out->user_data_free = count_free;
  return true;
}

static bool mlp_output_factory(const mrt_anchor_info *anchor, mrt_anchor_callback *out, void *user_data) {
  mlp_io *io = user_data;
  assert_string_equal(anchor->name, "probs");
  assert_int_equal(anchor->size_in_bytes, 40);
  out->fn = copy_out;
  out->user_data = &io->probs;
  return true;
}

static const float *tensor(const mrt_model *model, const char *name, uint64_t expected_size) {
  const void *data = NULL;
  uint64_t size = 0;
  assert_int_equal(mrt_model_tensor_data(model, name, &data, &size), MRT_OK);
  assert_int_equal(size, expected_size);
  return data;
}

static void test_mlp_through_anchor_callbacks(void **state) {
  (void)state;
  mrt_session *session = bound_session("mlp", NULL);
  size_t count = 0;
  assert_int_equal(mrt_session_anchor_count(session, MRT_SESSION_USER_INPUT_ANCHORS, &count), MRT_OK);
  assert_int_equal(count, 1);
  mrt_anchor_info info = {.struct_size = sizeof info};
  assert_int_equal(mrt_session_anchor(session, MRT_SESSION_USER_INPUT_ANCHORS, 0, &info), MRT_OK);
  assert_string_equal(info.name, "image");
  assert_int_equal(mrt_session_anchor_count(session, MRT_SESSION_INPUT_ANCHORS, &count), MRT_OK);
  assert_int_equal(count, 5);

  float image[784], probs[10];
  mlp_io io = {{image, sizeof image, 0}, {probs, sizeof probs, 0}};
  g_freed = 0;
  assert_int_equal(mrt_session_set_user_input_handler(session, mlp_input_factory, &io, NULL, NULL, false), MRT_OK);
  assert_int_equal(mrt_session_set_user_output_handler(session, mlp_output_factory, &io, NULL, NULL, true), MRT_OK);
  mrt_model *model = NULL;
  assert_int_equal(mrt_session_model(session, &model), MRT_OK);
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 784; ++i) image[i] = (float)((i * 37 + round * 11) % 101) / 100.0f;
    assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
    double expected[MLP_CLASSES];
    const mlp_weights weights = mlp_weights_of(model);
    mlp_reference(&weights, image, expected);
    for (int k = 0; k < 10; ++k) assert_float_equal(probs[k], expected[k], 1e-5);
  }
  assert_int_equal(io.image.calls, 2);
  assert_int_equal(io.probs.calls, 2);
  mrt_model_destroy(model);
  assert_int_equal(g_freed, 0);
  mrt_session_destroy(session);
  assert_int_equal(g_freed, 1); /* the image callback's user data, once */
}

/* ---- stateful, conditional, remote_buffer ---- */

static void test_stateful_load_main_save(void **state) {
  (void)state;
  mrt_session *session = bound_session("stateful", NULL);
  float x[4], acc_out[4], acc_save[4] = {-1, -1, -1, -1};
  buffer bx = {x, sizeof x, 0}, bout = {acc_out, sizeof acc_out, 0}, bsave = {acc_save, sizeof acc_save, 0};
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "x", copy_in, &bx, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "acc_out", copy_out, &bout, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "acc_save", copy_out, &bsave, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_load_programs(session), MRT_OK);
  float expected[4] = {0, 0, 0, 0};
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < 4; ++i) expected[i] += (x[i] = (float)(round * 10 + i));
    assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
    assert_memory_equal(acc_out, expected, sizeof expected);
  }
  assert_int_equal(mrt_session_run_save_programs(session), MRT_OK);
  assert_memory_equal(acc_save, expected, sizeof expected);
  mrt_session_destroy(session);
}

static void test_conditional_both_ways(void **state) {
  (void)state;
  mrt_session *session = bound_session("conditional", NULL);
  float x[8], y[8];
  int32_t flag = 1;
  for (int i = 0; i < 8; ++i) x[i] = (float)i - 2.5f;
  buffer bx = {x, sizeof x, 0}, by = {y, sizeof y, 0}, bflag = {&flag, sizeof flag, 0};
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "x", copy_in, &bx, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "flag", copy_in, &bflag, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "y", copy_out, &by, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int i = 0; i < 8; ++i) assert_float_equal(y[i], 2 * x[i], 0);
  flag = 0;
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int i = 0; i < 8; ++i) assert_float_equal(y[i], x[i] - 1, 0);
  mrt_session_destroy(session);
}

static void test_remote_buffer(void **state) {
  (void)state;
  mrt_session *session = bound_session("remote_buffer", NULL);
  mrt_model *model = NULL;
  assert_int_equal(mrt_session_model(session, &model), MRT_OK);
  const float *w = tensor(model, "w", 32);
  float x[8], y[8];
  for (int i = 0; i < 8; ++i) x[i] = (float)i * 0.5f;
  buffer bx = {x, sizeof x, 0}, by = {y, sizeof y, 0};
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "x", copy_in, &bx, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "y", copy_out, &by, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int i = 0; i < 8; ++i) assert_float_equal(y[i], x[i] + w[i], 0);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "w", copy_in, &bx, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("remote buffer");

  /* The user's bytes replace the TensorData, at once and after a reload. */
  float mine[8];
  for (int i = 0; i < 8; ++i) mine[i] = -100.0f - (float)i;
  assert_int_equal(mrt_session_set_remote_buffer_data(session, "w", mine, sizeof mine), MRT_OK);
  memset(mine + 1, 0, sizeof mine - sizeof mine[0]); /* copied: ours may change */
  for (int reload = 0; reload < 2; ++reload) {
    if (reload) assert_int_equal(mrt_session_reload(session), MRT_OK);
    assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
    for (int i = 0; i < 8; ++i) assert_float_equal(y[i], x[i] - 100.0f - (float)i, 0);
  }
  assert_int_equal(mrt_session_set_remote_buffer_data(session, "w", mine, 12), MRT_INVALID_ARGUMENT);
  expect_message_contains("remote buffer 'w' of anchor 'w' takes 32 bytes (F32[8]), got 12");
  assert_int_equal(mrt_session_set_remote_buffer_data(session, "x", mine, sizeof mine), MRT_INVALID_ARGUMENT);
  expect_message_contains("anchor 'x' does not live in a remote buffer");
  assert_int_equal(mrt_session_set_remote_buffer_data(session, "v", mine, sizeof mine), MRT_NOT_FOUND);
  assert_int_equal(mrt_session_set_remote_buffer_data(session, "w", NULL, 32), MRT_INVALID_ARGUMENT);
  expect_message_contains("data");
  mrt_model_destroy(model);
  mrt_session_destroy(session);
}

/* ---- two sessions sharing one device ---- */

typedef struct stateful_io {
  float x[4], acc[4], acc_out[4];
  buffer bx, bacc_in, bacc_save, bout;
} stateful_io;

static void wire(mrt_session *session, stateful_io *io) {
  io->bx = (buffer){io->x, sizeof io->x, 0};
  io->bacc_in = (buffer){io->acc, sizeof io->acc, 0};
  io->bacc_save = (buffer){io->acc, sizeof io->acc, 0};
  io->bout = (buffer){io->acc_out, sizeof io->acc_out, 0};
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "x", copy_in, &io->bx, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "acc", copy_in, &io->bacc_in, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "acc_save", copy_out, &io->bacc_save, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "acc_out", copy_out, &io->bout, NULL), MRT_OK);
}

static void test_two_sessions_share_a_device(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "stateful");
  /* acc comes from the user (the last saved value), not from TensorData. */
  mrt_anchor_predicate *user_load = NULL;
  assert_int_equal(mrt_anchor_predicate_create(MRT_PREDICATE_POPEF_DATA_USAGE, MRT_PRED_PROGRAM_FLOW_LOAD, model,
                                               NULL, 0, MRT_USE_USER_DATA, MRT_USE_POPEF_DATA_IF_ANY, &user_load),
                   MRT_OK);
  mrt_session_config config;
  mrt_session_config_init(&config);
  config.pred_tensor_data = user_load;
  mrt_session *a = NULL, *b = NULL;
  assert_int_equal(mrt_session_create(model, &config, &a), MRT_OK);
  assert_int_equal(mrt_session_create(model, &config, &b), MRT_OK);
  mrt_anchor_predicate_destroy(user_load);
  stateful_io ia, ib;
  memset(&ia, 0, sizeof ia);
  memset(&ib, 0, sizeof ib);
  wire(a, &ia);
  wire(b, &ib);
  mrt_device *device = test_small_device_for_model(model);
  assert_int_equal(mrt_session_bind_to_device(a, device), MRT_OK);
  assert_int_equal(mrt_session_bind_to_device(b, device), MRT_OK);
  float sum_a = 0, sum_b = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) ia.x[i] = (float)(round + 1);
    for (int i = 0; i < 4; ++i) ib.x[i] = 100.0f;
    assert_int_equal(mrt_session_run_main_programs(a), MRT_OK);
    sum_a += (float)(round + 1);
    sum_b += 100.0f;
    assert_int_equal(mrt_session_run_main_programs(b), MRT_OK);
    for (int i = 0; i < 4; ++i) {
      assert_float_equal(ia.acc_out[i], sum_a, 0);
      assert_float_equal(ib.acc_out[i], sum_b, 0);
    }
  }
  assert_int_equal(ia.bacc_in.calls, 3);   /* Load after every switch */
  assert_int_equal(ia.bacc_save.calls, 3); /* Save when displaced */
  assert_int_equal(ib.bacc_save.calls, 2);
  assert_int_equal(mrt_session_unload_from_device(b), MRT_OK);
  assert_int_equal(ib.bacc_save.calls, 3);
  assert_float_equal(ib.acc[0], sum_b, 0);
  mrt_device_destroy(device);
  mrt_session_destroy(a);
  mrt_session_destroy(b);
  mrt_model_destroy(model);
}

/* ---- stop from another thread ---- */

typedef struct waiting_input {
  mrt_session *session;
  volatile int waiting; /* accessed through __atomic builtins */
  int have_input;
  float x[16];
} waiting_input;

static void wait_for_input(void *device_buffer, uint64_t size, void *user_data) {
  waiting_input *w = user_data;
  __atomic_store_n(&w->waiting, 1, __ATOMIC_SEQ_CST);
  bool stopped = false;
  while (!__atomic_load_n(&w->have_input, __ATOMIC_SEQ_CST) && !stopped) {
    assert_int_equal(mrt_session_is_stopped(w->session, &stopped), MRT_OK);
    sched_yield();
  }
  memcpy(device_buffer, w->x, size);
}

static void *stopper(void *arg) {
  waiting_input *w = arg;
  while (!__atomic_load_n(&w->waiting, __ATOMIC_SEQ_CST)) sched_yield();
  assert_int_equal(mrt_session_stop(w->session), MRT_OK);
  return NULL;
}

static void test_stop_from_another_thread_then_reload(void **state) {
  (void)state;
  mrt_session *session = bound_session("add_one", NULL);
  waiting_input w = {session, 0, 0, {0}};
  for (int i = 0; i < 16; ++i) w.x[i] = (float)i;
  float y[16];
  buffer by = {y, sizeof y, 0};
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "x", wait_for_input, &w, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "y", copy_out, &by, NULL), MRT_OK);
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, stopper, &w), 0);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_CANCELLED);
  assert_int_equal(pthread_join(thread, NULL), 0);
  bool stopped = false;
  assert_int_equal(mrt_session_is_stopped(session, &stopped), MRT_OK);
  assert_true(stopped);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_FAILED_PRECONDITION);
  expect_message_contains("reload()");
  assert_int_equal(mrt_session_reload(session), MRT_OK);
  __atomic_store_n(&w.have_input, 1, __ATOMIC_SEQ_CST);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int i = 0; i < 16; ++i) assert_float_equal(y[i], (float)i + 1, 0);
  mrt_session_destroy(session);
}

/* ---- simulated device errors ---- */

/* The first Execute step of the session's model. */
static uint32_t first_execute_step(const mrt_session *session) {
  mrt_model *model = NULL;
  assert_int_equal(mrt_session_model(session, &model), MRT_OK);
  mrt_executable *exe = NULL;
  assert_int_equal(mrt_model_get_executable(model, &exe), MRT_OK);
  mrt_executable_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_executable_get_info(exe, &info), MRT_OK);
  uint32_t found = UINT32_MAX;
  for (size_t i = 0; i < info.num_steps && found == UINT32_MAX; ++i) {
    mrt_step_info step;
    step.struct_size = sizeof step;
    assert_int_equal(mrt_executable_step(exe, i, &step), MRT_OK);
    if (strcmp(step.kind, "Execute") == 0) found = (uint32_t)i;
  }
  mrt_executable_destroy(exe);
  mrt_model_destroy(model);
  assert_true(found != UINT32_MAX);
  return found;
}

static void test_simulated_errors_and_their_recovery_actions(void **state) {
  (void)state;
  mrt_session *session = bound_session("add_one", NULL);
  float x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = (float)i;
  buffer bx = {x, sizeof x, 0}, by = {y, sizeof y, 0};
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "x", copy_in, &bx, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "y", copy_out, &by, NULL), MRT_OK);
  const uint32_t step = first_execute_step(session);

  assert_int_equal(mrt_session_insert_simulated_error(session, 7, step, 0), MRT_INVALID_ARGUMENT);
  expect_message_contains("error 7 is not an mrt_simulated_error");
  assert_int_equal(mrt_last_error_recovery_action(), MRT_RECOVERY_NONE);
  assert_int_equal(mrt_session_insert_simulated_error(session, MRT_SIMULATED_TILE_EXCEPTION, 100000, 0),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("step 100000");
  assert_int_equal(mrt_session_insert_simulated_error(NULL, MRT_SIMULATED_TILE_EXCEPTION, step, 0),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("session must not be NULL");
  assert_int_equal(mrt_session_erase_simulated_error(session, step, 0), MRT_NOT_FOUND);
  expect_message_contains("no simulated error at step");
  assert_int_equal(mrt_session_clear_simulated_errors(NULL), MRT_INVALID_ARGUMENT);

  const struct {
    int32_t error;
    int32_t action;
    const char *text;
  } kFaults[] = {
      {MRT_SIMULATED_TILE_EXCEPTION, MRT_RECOVERY_IPU_RESET, "TILE_EXCEPTION"},
      {MRT_SIMULATED_MEMORY_PARITY, MRT_RECOVERY_IPU_RESET, "MEMORY_PARITY"},
      {MRT_SIMULATED_EXCHANGE_ERROR, MRT_RECOVERY_PARTITION_RESET, "PARTITION_RESET"},
      {MRT_SIMULATED_HOST_LINK_ERROR, MRT_RECOVERY_FULL_RESET, "FULL_RESET"},
  };
  for (size_t i = 0; i < sizeof kFaults / sizeof kFaults[0]; ++i) {
    assert_int_equal(mrt_session_insert_simulated_error(session, kFaults[i].error, step, 0), MRT_OK);
    assert_int_equal(mrt_session_insert_simulated_error(session, kFaults[i].error, step, 0), MRT_INVALID_ARGUMENT);
    expect_message_contains("already");
    assert_int_equal(mrt_session_run_main_programs(session), MRT_DEVICE_ERROR);
    expect_message_contains(kFaults[i].text);
    assert_int_equal(mrt_last_error_recovery_action(), kFaults[i].action);
    /* A failure that is not a device error has no recovery action. */
    assert_int_equal(mrt_session_run_main_programs(session), MRT_FAILED_PRECONDITION);
    expect_message_contains("reload()");
    assert_int_equal(mrt_last_error_recovery_action(), MRT_RECOVERY_NONE);
    /* The fault stays until erased or cleared, as on the seed's Engine. */
    assert_int_equal(mrt_session_reload(session), MRT_OK);
    assert_int_equal(mrt_session_run_main_programs(session), MRT_DEVICE_ERROR);
    assert_int_equal(mrt_last_error_recovery_action(), kFaults[i].action);
    if (i % 2 == 0) {
      assert_int_equal(mrt_session_erase_simulated_error(session, step, 0), MRT_OK);
    } else {
      assert_int_equal(mrt_session_clear_simulated_errors(session), MRT_OK);
    }
    assert_int_equal(mrt_session_reload(session), MRT_OK);
    memset(y, 0, sizeof y);
    assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
    for (int j = 0; j < 16; ++j) assert_float_equal(y[j], x[j] + 1, 0);
  }
  mrt_session_destroy(session);
}

/* ---- predicates ---- */

static int32_t only_x(const mrt_anchor_info *anchor, void *user_data) {
  (void)user_data;
  return strcmp(anchor->handle, "x") == 0 ? MRT_BIND_USER_CB : MRT_SKIP_CB;
}

static void test_predicates(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "stateful");
  mrt_anchor_predicate *main = NULL, *save = NULL, *user = NULL, *either = NULL, *both = NULL, *groups = NULL,
                       *anchors = NULL;
  assert_int_equal(mrt_anchor_predicate_create(MRT_PREDICATE_ANCHOR_CALLBACK, MRT_PRED_PROGRAM_FLOW_MAIN, model, NULL,
                                               0, MRT_BIND_USER_CB, MRT_BIND_EMPTY_CB, &main),
                   MRT_OK);
  assert_int_equal(mrt_anchor_predicate_create(MRT_PREDICATE_ANCHOR_CALLBACK, MRT_PRED_PROGRAM_FLOW_SAVE, model, NULL,
                                               0, MRT_BIND_USER_CB, MRT_BIND_EMPTY_CB, &save),
                   MRT_OK);
  g_freed = 0;
  assert_int_equal(mrt_anchor_predicate_create_user(MRT_PREDICATE_ANCHOR_CALLBACK, only_x, NULL, count_free, &user),
                   MRT_OK);
  const mrt_anchor_predicate *pair[] = {main, save};
  assert_int_equal(mrt_anchor_predicate_or(MRT_PREDICATE_ANCHOR_CALLBACK, MRT_BIND_USER_CB, MRT_SKIP_CB, pair, 2, &either),
                   MRT_OK);
  const mrt_anchor_predicate *main_and_user[] = {main, user};
  assert_int_equal(mrt_anchor_predicate_and(MRT_PREDICATE_ANCHOR_CALLBACK, MRT_BIND_USER_CB, MRT_SKIP_CB,
                                            main_and_user, 2, &both),
                   MRT_OK);
  const uint64_t save_program[] = {2};
  const mrt_programs_with_policy group[] = {{save_program, 1, MRT_BIND_EMPTY_CB}};
  assert_int_equal(mrt_anchor_predicate_create_program_policies(MRT_PREDICATE_ANCHOR_CALLBACK, group, 1, MRT_SKIP_CB,
                                                                &groups),
                   MRT_OK);
  const mrt_anchor_with_policy entry[] = {{"acc", MRT_BIND_USER_CB}};
  assert_int_equal(mrt_anchor_predicate_create_anchor_policies(MRT_PREDICATE_ANCHOR_CALLBACK, entry, 1,
                                                               MRT_BIND_EMPTY_CB, &anchors),
                   MRT_OK);
  struct {
    const mrt_anchor_predicate *predicate;
    const char *handle;
    int32_t expected;
  } cases[] = {{main, "x", MRT_BIND_USER_CB},       {main, "acc", MRT_BIND_EMPTY_CB},
               {either, "acc_save", MRT_BIND_USER_CB}, {either, "acc", MRT_SKIP_CB},
               {both, "x", MRT_BIND_USER_CB},       {both, "acc_out", MRT_SKIP_CB},
               {groups, "acc_save", MRT_BIND_EMPTY_CB}, {groups, "x", MRT_SKIP_CB},
               {anchors, "acc", MRT_BIND_USER_CB},  {anchors, "x", MRT_BIND_EMPTY_CB}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    int32_t policy = -1;
    assert_int_equal(mrt_anchor_predicate_evaluate(cases[i].predicate, model, cases[i].handle, &policy), MRT_OK);
    if (policy != cases[i].expected) fail_msg("case %zu (%s): %d, expected %d", i, cases[i].handle, policy, cases[i].expected);
  }
  int32_t policy = -1;
  assert_int_equal(mrt_anchor_predicate_evaluate(main, model, "nope", &policy), MRT_NOT_FOUND);
  expect_message_contains("'nope'");
  assert_int_equal(mrt_anchor_predicate_create(MRT_PREDICATE_POPEF_DATA_USAGE, MRT_PRED_NON_SCALAR_TYPE, NULL, NULL, 0,
                                               0, 1, &groups),
                   MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_anchor_predicate_create(MRT_PREDICATE_ANCHOR_CALLBACK, MRT_PRED_PROGRAM_FLOW_LOAD, NULL, NULL, 0,
                                               0, 7, &groups),
                   MRT_INVALID_ARGUMENT);

  /* A data-usage predicate where an anchor callback one is expected. */
  mrt_session *session = bound_session("stateful", NULL);
  mrt_anchor_predicate *data = NULL;
  assert_int_equal(mrt_anchor_predicate_create(MRT_PREDICATE_POPEF_DATA_USAGE, MRT_PRED_PROGRAM_NOT_ASSIGNED, NULL,
                                               NULL, 0, MRT_USE_USER_DATA, MRT_USE_POPEF_DATA_IF_ANY, &data),
                   MRT_OK);
  assert_int_equal(mrt_session_set_user_output_handler(session, mlp_output_factory, NULL, NULL, data, false),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("MRT_PREDICATE_ANCHOR_CALLBACK");
  mrt_session_destroy(session);
  mrt_anchor_predicate_destroy(data);

  mrt_anchor_predicate_destroy(main);
  mrt_anchor_predicate_destroy(save);
  mrt_anchor_predicate_destroy(user);
  assert_int_equal(g_freed, 0); /* `both` still holds the user predicate */
  mrt_anchor_predicate_destroy(both);
  assert_int_equal(g_freed, 1);
  mrt_anchor_predicate_destroy(either);
  mrt_anchor_predicate_destroy(groups);
  mrt_anchor_predicate_destroy(anchors);
  mrt_model_destroy(model);
}

/* ---- wrong state, wrong names ---- */

/* replicated (add_one compiled with replication factor 2): each replica's
 * anchors bound on their own, both replicas run by one Main call, each
 * adding one to its own data; the replica out of range is named. */
static void test_replicated_model_per_replica_callbacks(void **state) {
  (void)state;
  mrt_session *session = bound_session("replicated", NULL);
  float x[2][16], y[2][16];
  buffer bx[2], by[2];
  for (uint32_t r = 0; r < 2; ++r) {
    for (int i = 0; i < 16; ++i) {
      x[r][i] = (float)(100 * r + i);
      y[r][i] = -1.0f;
    }
    bx[r] = (buffer){x[r], sizeof x[r], 0};
    by[r] = (buffer){y[r], sizeof y[r], 0};
    assert_int_equal(mrt_session_set_replica_callback_for_anchor(session, "x", r, copy_in, &bx[r], NULL), MRT_OK);
    assert_int_equal(mrt_session_set_replica_callback_for_anchor(session, "y", r, copy_out, &by[r], NULL), MRT_OK);
  }
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (uint32_t r = 0; r < 2; ++r) {
    assert_int_equal(bx[r].calls, 1);
    assert_int_equal(by[r].calls, 1);
    for (int i = 0; i < 16; ++i) assert_true(y[r][i] == x[r][i] + 1.0f);
  }
  g_freed = 0;
  assert_int_equal(mrt_session_set_replica_callback_for_anchor(session, "x", 2, copy_in, NULL, count_free),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("replica 2 out of range: the model has 2 replicas");
  assert_int_equal(g_freed, 1);
  assert_int_equal(mrt_session_set_replica_callback_for_anchor(session, "nope", 0, copy_in, NULL, NULL),
                   MRT_NOT_FOUND);
  expect_message_contains("'nope'");
  mrt_session_destroy(session);
}

static void test_wrong_state_and_names(void **state) {
  (void)state;
  mrt_model *model = test_load_model("MRT_TEST_SESSION_MODELS", "add_one");
  mrt_session *session = NULL;
  assert_int_equal(mrt_session_create(model, NULL, &session), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_FAILED_PRECONDITION);
  expect_message_contains("not bound to a device");
  assert_int_equal(mrt_session_unload_from_device(session), MRT_FAILED_PRECONDITION);
  assert_int_equal(mrt_session_reload(session), MRT_FAILED_PRECONDITION);
  expect_message_contains("bindToDevice()");
  g_freed = 0;
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "nope", copy_in, NULL, count_free), MRT_NOT_FOUND);
  expect_message_contains("'nope'");
  assert_int_equal(g_freed, 1); /* freed also when registration fails */
  const uint64_t bad_program[] = {42};
  assert_int_equal(mrt_session_run_programs(session, bad_program, 1), MRT_NOT_FOUND);
  expect_message_contains("program 42");
  assert_int_equal(mrt_session_anchor_count(session, 9, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_session_run_main_programs(NULL), MRT_INVALID_ARGUMENT);
  mrt_session_config config;
  mrt_session_config_init(&config);
  config.struct_size = 4;
  mrt_session *other = NULL;
  assert_int_equal(mrt_session_create(model, &config, &other), MRT_INVALID_ARGUMENT);
  expect_message_contains("struct_size");
  mrt_session_config_init(&config);
  config.max_look_ahead = "later";
  assert_int_equal(mrt_session_create(model, &config, &other), MRT_INVALID_ARGUMENT);
  expect_message_contains("'later'");
  config.max_look_ahead = "2";
  config.max_look_ahead_syncs = 2;
  assert_int_equal(mrt_session_create(model, &config, &other), MRT_INVALID_ARGUMENT);
  expect_message_contains("both set");
  config.max_look_ahead = NULL;
  assert_int_equal(mrt_session_create(model, &config, &other), MRT_OK);
  mrt_session_destroy(other);
  other = NULL;

  /* Still usable: bind, find the missing anchor, connect it, run. */
  mrt_device *device = test_small_device_for_model(model);
  assert_int_equal(mrt_session_bind_to_device(session, device), MRT_OK);
  float x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = (float)(i * i);
  buffer bx = {x, sizeof x, 0}, by = {y, sizeof y, 0};
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "x", copy_in, &bx, NULL), MRT_OK);
  const uint64_t main_program[] = {0};
  size_t unbound = 0;
  assert_int_equal(mrt_session_anchors_not_connected(session, main_program, 1, NULL, NULL, &unbound), MRT_OK);
  assert_int_equal(unbound, 1);
  assert_int_equal(mrt_session_error_if_anchors_not_connected(session, main_program, 1), MRT_FAILED_PRECONDITION);
  expect_message_contains("'y'");
  assert_int_equal(mrt_session_run_main_programs(session), MRT_FAILED_PRECONDITION);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "y", copy_out, &by, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int i = 0; i < 16; ++i) assert_float_equal(y[i], x[i] + 1, 0);
  mrt_device_destroy(device);
  mrt_session_destroy(session);
  mrt_model_destroy(model);
}

/* ---- across processes ---- */

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Child: waits for a byte on `go`, attaches the system's only IPU, reports
 * on `held`, then holds it until a byte arrives on `release` (or forever). */
static void holder(int go, int held, int release) {
  char c;
  if (read(go, &c, 1) != 1) _exit(2);
  mrt_device_manager *manager = NULL;
  mrt_device *device = NULL;
  if (mrt_device_manager_create(&manager) != MRT_OK) _exit(3);
  if (mrt_device_manager_get_device(manager, 1, NULL, NULL, false, &device) != MRT_OK) _exit(4);
  if (write(held, "h", 1) != 1) _exit(5);
  if (read(release, &c, 1) != 1) pause();
  mrt_device_destroy(device);
  mrt_device_manager_destroy(manager);
  _exit(0);
}

static pid_t spawn_holder(int pipes[3][2]) {
  for (int i = 0; i < 3; ++i) assert_int_equal(pipe(pipes[i]), 0);
  const pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) holder(pipes[0][0], pipes[1][1], pipes[2][0]);
  return pid;
}

static mrt_status immediate_session(int64_t timeout_ns, mrt_session **out) {
  const char *paths[] = {test_model_path("MRT_TEST_SESSION_MODELS", "add_one_pool")};
  mrt_device_wait_config wait;
  mrt_device_wait_config_init(&wait);
  wait.strategy = MRT_DEVICE_WAIT_WITH_TIMEOUT;
  wait.timeout_ns = timeout_ns;
  wait.sleep_time_ns = 10 * MS;
  mrt_session_config config;
  mrt_session_config_init(&config);
  config.policy = MRT_LAUNCH_IMMEDIATE;
  config.wait_config = &wait;
  return mrt_session_create_from_files(paths, 1, &config, out);
}

/* Runs first, before this process has any thread of the library. */
static void test_processes_waiting_for_a_device(void **state) {
  (void)state;
  test_use_private_system("mrt_test_session", "1");
  int first[3][2], second[3][2];
  const pid_t released = spawn_holder(first);
  const pid_t killed = spawn_holder(second);
  char c;
  assert_int_equal(write(first[0][1], "g", 1), 1);
  assert_int_equal(read(first[1][0], &c, 1), 1);

  mrt_session *session = NULL;
  double start = now_seconds();
  assert_int_equal(immediate_session(300 * MS, &session), MRT_UNAVAILABLE);
  double waited = now_seconds() - start;
  assert_true(waited >= 0.29 && waited < 3.0);
  assert_null(session);

  assert_int_equal(write(first[2][1], "r", 1), 1); /* the holder releases and exits */
  assert_int_equal(immediate_session(10000 * MS, &session), MRT_OK);
  float x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = (float)i;
  buffer bx = {x, sizeof x, 0}, by = {y, sizeof y, 0};
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "x", copy_in, &bx, NULL), MRT_OK);
  assert_int_equal(mrt_session_set_callback_for_anchor(session, "y", copy_out, &by, NULL), MRT_OK);
  assert_int_equal(mrt_session_run_main_programs(session), MRT_OK);
  for (int i = 0; i < 16; ++i) assert_float_equal(y[i], x[i] + 1, 0);
  mrt_session_destroy(session); /* detaches: the device is free again */
  int status = 0;
  assert_int_equal(waitpid(released, &status, 0), released);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  /* The second holder takes the device and is killed: the OS releases it. */
  assert_int_equal(write(second[0][1], "g", 1), 1);
  assert_int_equal(read(second[1][0], &c, 1), 1);
  assert_int_equal(immediate_session(0, &session), MRT_UNAVAILABLE);
  assert_int_equal(kill(killed, SIGKILL), 0);
  assert_int_equal(waitpid(killed, &status, 0), killed);
  assert_int_equal(immediate_session(5000 * MS, &session), MRT_OK);
  mrt_session_destroy(session);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 2; ++j) {
      close(first[i][j]);
      close(second[i][j]);
    }
  }
  test_remove_private_system();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_processes_waiting_for_a_device),
      cmocka_unit_test(test_mlp_through_anchor_callbacks),
      cmocka_unit_test(test_stateful_load_main_save),
      cmocka_unit_test(test_conditional_both_ways),
      cmocka_unit_test(test_remote_buffer),
      cmocka_unit_test(test_two_sessions_share_a_device),
      cmocka_unit_test(test_stop_from_another_thread_then_reload),
      cmocka_unit_test(test_simulated_errors_and_their_recovery_actions),
      cmocka_unit_test(test_predicates),
      cmocka_unit_test(test_wrong_state_and_names),
      cmocka_unit_test(test_replicated_model_per_replica_callbacks),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
