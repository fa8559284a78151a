/* Model fusion through the C API (mrt_model_fuse, docs/popef.md "Fused
 * models"): stateful, add_one and mlp fused into one PopEF, each model
 * loaded by name, three runners serving the three models on ONE device at
 * the same time, each from its own thread, every output checked. stateful's
 * accumulator proves that the models really stay on the device together: a
 * runner displaced by another would reload it from zeros. Then the errors:
 * too few models, duplicate names, a model already fused, models that do
 * not fit on the IPU's tiles together, unknown model names. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mlp_reference.h"
#include "mrt_c.h"
#include "test_support.h"

#define RUNNER_MODELS "MRT_TEST_RUNNER_MODELS"

static void expect_last_error(mrt_status got, mrt_status expected, const char *needle) {
  if (got != expected) {
    fail_msg("got %s, expected %s (%s)", mrt_status_string(got), mrt_status_string(expected),
             mrt_last_error_message());
  }
  test_expect_contains(mrt_last_error_message(), needle);
}

typedef struct temp_path {
  char text[512];
} temp_path;

/* A fresh path under $TMPDIR for this process. */
static temp_path temp_path_of(const char *name) {
  temp_path path;
  const char *dir = getenv("TMPDIR");
  snprintf(path.text, sizeof path.text, "%s/mrt_fusion_%d_%s.popef", dir != NULL ? dir : "/tmp", (int)getpid(), name);
  return path;
}

/* stateful, add_one and mlp fused into `path`. */
static void write_fused(const char *path) {
  mrt_model *models[3] = {test_load_model(RUNNER_MODELS, "stateful_b2"), test_load_model(RUNNER_MODELS, "add_one"),
                          test_load_model(RUNNER_MODELS, "mlp")};
  if (mrt_model_fuse((const mrt_model *const *)models, 3, path) != MRT_OK) {
    fail_msg("mrt_model_fuse: %s", mrt_last_error_message());
  }
  for (int i = 0; i < 3; ++i) mrt_model_destroy(models[i]);
}

static mrt_model *load_named(const char *path, const char *name) {
  mrt_model *model = NULL;
  if (mrt_model_load_named(&path, 1, name, &model) != MRT_OK) {
    fail_msg("mrt_model_load_named(%s): %s", name, mrt_last_error_message());
  }
  return model;
}

static void fused_file_holds_each_model_under_its_name(void **state) {
  (void)state;
  const temp_path file = temp_path_of("listed");
  const char *path = file.text;
  write_fused(path);
  mrt_model *model = NULL;
  expect_last_error(mrt_model_load(&path, 1, &model), MRT_INVALID_ARGUMENT, "'stateful', 'add_one', 'mlp'");

  const char *names[] = {"stateful", "add_one", "mlp"};
  for (int i = 0; i < 3; ++i) {
    model = load_named(path, names[i]);
    mrt_model_info info;
    info.struct_size = sizeof info;
    assert_int_equal(mrt_model_get_info(model, &info), MRT_OK);
    assert_string_equal(info.executable, names[i]);
    assert_string_equal(info.shared_executable, "stateful+add_one+mlp");
    mrt_model_destroy(model);
  }
  /* Anchor names stay the model's; handles (streams) are the model's own. */
  model = load_named(path, "add_one");
  mrt_anchor_info anchor;
  anchor.struct_size = sizeof anchor;
  assert_int_equal(mrt_model_anchor_by_name(model, "x", &anchor), MRT_OK);
  assert_string_equal(anchor.handle, "add_one/x");
  mrt_model_destroy(model);
  /* Models not fused say so too. */
  model = test_load_model(RUNNER_MODELS, "add_one");
  mrt_model_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_model_get_info(model, &info), MRT_OK);
  assert_string_equal(info.shared_executable, "");
  mrt_model_destroy(model);
  unlink(path);
}

/* ---- three runners, one device, three threads ---- */

enum { STATEFUL_REQUESTS = 150, ADD_ONE_REQUESTS = 400, MLP_REQUESTS = 40, ADD_ONE_N = 16 };

typedef struct client {
  mrt_model_runner *runner;
  const mlp_weights *weights; /* mlp only */
  void (*serve)(struct client *c);
  int failures;
  char first[512];
} client;

static void record_failure(client *c, const char *format, ...) {
  if (c->failures++ > 0) return;
  va_list args;
  va_start(args, format);
  vsnprintf(c->first, sizeof c->first, format, args);
  va_end(args);
}

/* acc_out after each request is the sum of every x so far: the state has
 * stayed on the device since the first request. */
static void serve_stateful(client *c) {
  double sums[4] = {0, 0, 0, 0};
  unsigned seed = 3;
  for (int i = 0; i < STATEFUL_REQUESTS; ++i) {
    float x[8], acc[4];
    test_fill_random(x, 8, &seed, -1, 1);
    for (int k = 0; k < 4; ++k) sums[k] += (double)x[k] + x[4 + k];
    mrt_tensor_view in = {"x", x, sizeof x}, out = {"acc_out", acc, sizeof acc};
    if (mrt_model_runner_execute(c->runner, &in, 1, &out, 1, 0) != MRT_OK) {
      record_failure(c, "stateful request %d: %s", i, mrt_last_error_message());
      return;
    }
    for (int k = 0; k < 4; ++k) {
      if (acc[k] < sums[k] - 1e-3 || acc[k] > sums[k] + 1e-3) {
        record_failure(c, "stateful request %d: acc[%d] = %g, expected %g", i, k, acc[k], sums[k]);
      }
    }
  }
}

static void serve_add_one(client *c) {
  unsigned seed = 5;
  for (int i = 0; i < ADD_ONE_REQUESTS; ++i) {
    float x[ADD_ONE_N], y[ADD_ONE_N];
    test_fill_random(x, ADD_ONE_N, &seed, -100, 100);
    x[0] = (float)i;
    mrt_tensor_view in = {"x", x, sizeof x}, out = {"y", y, sizeof y};
    if (mrt_model_runner_execute(c->runner, &in, 1, &out, 1, 0) != MRT_OK) {
      record_failure(c, "add_one request %d: %s", i, mrt_last_error_message());
      return;
    }
    for (int k = 0; k < ADD_ONE_N; ++k) {
      if (y[k] != x[k] + 1.0f) record_failure(c, "add_one request %d: y[%d] = %g for x %g", i, k, y[k], x[k]);
    }
  }
}

static void serve_mlp(client *c) {
  unsigned seed = 7;
  for (int i = 0; i < MLP_REQUESTS; ++i) {
    float image[MLP_IMAGE], probs[MLP_CLASSES];
    double expected[MLP_CLASSES];
    test_fill_random(image, MLP_IMAGE, &seed, 0, 1);
    mlp_reference(c->weights, image, expected);
    mrt_tensor_view in = {"image", image, sizeof image}, out = {"probs", probs, sizeof probs};
    if (mrt_model_runner_execute(c->runner, &in, 1, &out, 1, 0) != MRT_OK) {
      record_failure(c, "mlp request %d: %s", i, mrt_last_error_message());
      return;
    }
    for (int k = 0; k < MLP_CLASSES; ++k) {
      if (probs[k] < expected[k] - 1e-4 || probs[k] > expected[k] + 1e-4) {
        record_failure(c, "mlp request %d: probs[%d] = %g, expected %g", i, k, probs[k], expected[k]);
      }
    }
  }
}

static void *client_thread(void *arg) {
  client *c = arg;
  c->serve(c);
  return NULL;
}

static mrt_model_runner *fused_runner(const char *path, const char *name, mrt_device *device) {
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.model_name = name;
  config.replica_devices = &device;
  config.num_replica_devices = 1;
  mrt_model_runner *runner = NULL;
  if (mrt_model_runner_create_from_files(&path, 1, &config, &runner) != MRT_OK) {
    fail_msg("runner of fused model '%s': %s", name, mrt_last_error_message());
  }
  return runner;
}

static void fused_models_are_served_at_once_on_one_device(void **state) {
  (void)state;
  const temp_path file = temp_path_of("served");
  const char *path = file.text;
  write_fused(path);
  mrt_device_manager *manager = NULL;
  assert_int_equal(mrt_device_manager_create(&manager), MRT_OK);
  mrt_device *device = NULL;
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, NULL, false, &device), MRT_OK);
  mrt_device_manager_destroy(manager);

  mrt_model *mlp = load_named(path, "mlp");
  const mlp_weights weights = mlp_weights_of(mlp);
  client clients[3] = {
      {fused_runner(path, "stateful", device), NULL, serve_stateful, 0, ""},
      {fused_runner(path, "add_one", device), NULL, serve_add_one, 0, ""},
      {fused_runner(path, "mlp", device), &weights, serve_mlp, 0, ""},
  };
  mrt_device_destroy(device); /* the runners keep it */
  pthread_t threads[3];
  for (int i = 0; i < 3; ++i) assert_int_equal(pthread_create(&threads[i], NULL, client_thread, &clients[i]), 0);
  for (int i = 0; i < 3; ++i) assert_int_equal(pthread_join(threads[i], NULL), 0);
  for (int i = 0; i < 3; ++i) {
    if (clients[i].failures != 0) fail_msg("%d failure(s), first: %s", clients[i].failures, clients[i].first);
    mrt_model_runner_destroy(clients[i].runner);
  }
  mrt_model_destroy(mlp);
  unlink(path);
}

/* A session loads one model of the fused file by name too. */
static void a_session_loads_a_fused_model_by_name(void **state) {
  (void)state;
  const temp_path file = temp_path_of("session");
  const char *path = file.text;
  write_fused(path);
  mrt_session_config config;
  mrt_session_config_init(&config);
  config.model_name = "add_one";
  mrt_session *session = NULL;
  assert_int_equal(mrt_session_create_from_files(&path, 1, &config, &session), MRT_OK);
  mrt_session_destroy(session);
  config.model_name = "resnet";
  expect_last_error(mrt_session_create_from_files(&path, 1, &config, &session), MRT_NOT_FOUND,
                    "'resnet' in");
  test_expect_contains(mrt_last_error_message(), "(models: 'stateful', 'add_one', 'mlp')");
  unlink(path);
}

/* ---- errors ---- */

static void bad_fusions_name_the_problem_and_write_nothing(void **state) {
  (void)state;
  const temp_path file = temp_path_of("refused");
  const char *path = file.text;
  mrt_model *add_one = test_load_model(RUNNER_MODELS, "add_one");
  mrt_model *mlp = test_load_model(RUNNER_MODELS, "mlp");

  const mrt_model *one[] = {add_one};
  expect_last_error(mrt_model_fuse(one, 1, path), MRT_INVALID_ARGUMENT, "two or more");
  const mrt_model *twice[] = {add_one, add_one};
  expect_last_error(mrt_model_fuse(twice, 2, path), MRT_INVALID_ARGUMENT, "two models are named 'add_one'");
  const mrt_model *with_null[] = {add_one, NULL};
  expect_last_error(mrt_model_fuse(with_null, 2, path), MRT_INVALID_ARGUMENT, "models[1]");
  const mrt_model *pair[] = {add_one, mlp};
  expect_last_error(mrt_model_fuse(pair, 2, NULL), MRT_INVALID_ARGUMENT, "path");
  assert_int_equal(access(path, F_OK), -1);

  /* A fused model cannot be fused again. */
  assert_int_equal(mrt_model_fuse(pair, 2, path), MRT_OK);
  mrt_model *fused_mlp = load_named(path, "mlp");
  const mrt_model *again[] = {fused_mlp, test_load_model(RUNNER_MODELS, "stateful_b2")};
  expect_last_error(mrt_model_fuse(again, 2, temp_path_of("again").text), MRT_INVALID_ARGUMENT, "already fused");
  mrt_model_destroy((mrt_model *)again[1]);

  /* Unknown and mismatched model names. */
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.model_name = "resnet";
  mrt_model_runner *runner = NULL;
  expect_last_error(mrt_model_runner_create_from_files(&path, 1, &config, &runner), MRT_NOT_FOUND,
                    "(models: 'add_one', 'mlp')");
  config.model_name = "add_one";
  expect_last_error(mrt_model_runner_create(fused_mlp, &config, &runner), MRT_INVALID_ARGUMENT,
                    "the config asks for model 'add_one', the model given is 'mlp'");
  mrt_model_destroy(fused_mlp);
  unlink(path);

  /* Models that use every tile of a 4-tile IPU cannot share it. */
  mrt_model *add_one_t4 = test_load_model(RUNNER_MODELS, "add_one_t4");
  mrt_model *mlp_t4 = test_load_model(RUNNER_MODELS, "mlp_t4");
  const mrt_model *crowded[] = {add_one_t4, mlp_t4};
  expect_last_error(mrt_model_fuse(crowded, 2, path), MRT_INVALID_ARGUMENT, "tiles together ('add_one' 4 tile(s) (0..3), 'mlp' ");
  test_expect_contains(mrt_last_error_message(), "the IPU has 4");
  assert_int_equal(access(path, F_OK), -1);
  /* Nor models compiled for different targets. */
  const mrt_model *mixed[] = {add_one_t4, mlp};
  expect_last_error(mrt_model_fuse(mixed, 2, path), MRT_INVALID_ARGUMENT, "fused models share one target");

  mrt_model_destroy(add_one_t4);
  mrt_model_destroy(mlp_t4);
  mrt_model_destroy(add_one);
  mrt_model_destroy(mlp);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fused_file_holds_each_model_under_its_name),
      cmocka_unit_test(fused_models_are_served_at_once_on_one_device),
      cmocka_unit_test(a_session_loads_a_fused_model_by_name),
      cmocka_unit_test(bad_fusions_name_the_problem_and_write_nothing),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
