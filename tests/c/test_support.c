#include "test_support.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mrt_c.h"

static char g_lock_dir[1024];

void test_use_private_system(const char *prefix, const char *ipus) {
  const char *tmp = getenv("TMPDIR");
  snprintf(g_lock_dir, sizeof g_lock_dir, "%s/%s_XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp", prefix);
  assert_non_null(mkdtemp(g_lock_dir));
  assert_int_equal(setenv("MRT_HWSIM_LOCK_DIR", g_lock_dir, 1), 0);
  assert_int_equal(setenv("MRT_HWSIM_IPUS", ipus, 1), 0);
}

void test_remove_directory(const char *path) {
  DIR *dir = opendir(path);
  if (dir == NULL) return;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL) {
    if (strcmp(entry->d_name, ".") == 0 || strcmp(entry->d_name, "..") == 0) continue;
    char file[4096];
    snprintf(file, sizeof file, "%s/%s", path, entry->d_name);
    unlink(file);
  }
  closedir(dir);
  rmdir(path);
}

void test_remove_private_system(void) { test_remove_directory(g_lock_dir); }

int test_private_system_setup(void **state) {
  (void)state;
  test_use_private_system("mrt_c_test", "4");
  return 0;
}

int test_private_system_teardown(void **state) {
  (void)state;
  test_remove_private_system();
  return 0;
}

const char *test_model_path(const char *dir_variable, const char *name) {
  static char path[2048];
  const char *dir = getenv(dir_variable);
  if (dir == NULL) fail_msg("%s is not set", dir_variable);
  snprintf(path, sizeof path, "%s/%s.popef", dir, name);
  return path;
}

const char *test_popef_samples_dir(void) {
  const char *dir = getenv("MRT_TEST_POPEF_DIR");
  if (dir == NULL) fail_msg("MRT_TEST_POPEF_DIR is not set (the popef_samples fixture writes it)");
  return dir;
}

const char *test_popef_sample_path(const char *file) {
  static char paths[4][2048];
  static unsigned next;
  char *path = paths[next++ % 4];
  snprintf(path, sizeof paths[0], "%s/%s", test_popef_samples_dir(), file);
  return path;
}

mrt_model *test_load_model(const char *dir_variable, const char *name) {
  const char *paths[] = {test_model_path(dir_variable, name)};
  mrt_model *model = NULL;
  if (mrt_model_load(paths, 1, &model) != MRT_OK) fail_msg("mrt_model_load(%s): %s", name, mrt_last_error_message());
  return model;
}

mrt_device *test_small_device_for_model(const mrt_model *model) {
  mrt_device_manager *manager = NULL;
  assert_int_equal(mrt_device_manager_create(&manager), MRT_OK);
  mrt_device *device = NULL;
  assert_int_equal(mrt_device_manager_create_small_ipu_model_device_for_model(manager, model, &device), MRT_OK);
  mrt_device_manager_destroy(manager);
  return device;
}

mrt_session *test_bound_session(const mrt_model *model, const mrt_session_config *config) {
  mrt_session *session = NULL;
  if (mrt_session_create(model, config, &session) != MRT_OK) fail_msg("mrt_session_create: %s", mrt_last_error_message());
  mrt_device *device = test_small_device_for_model(model);
  if (mrt_session_bind_to_device(session, device) != MRT_OK) {
    fail_msg("mrt_session_bind_to_device: %s", mrt_last_error_message());
  }
  mrt_device_destroy(device); /* the session keeps it */
  return session;
}

mrt_model_runner *test_small_runner_for_model(const mrt_model *model) {
  mrt_device *device = test_small_device_for_model(model);
  mrt_model_runner_config config;
  mrt_model_runner_config_init(&config);
  config.replica_devices = &device;
  config.num_replica_devices = 1;
  mrt_model_runner *runner = NULL;
  if (mrt_model_runner_create(model, &config, &runner) != MRT_OK) {
    fail_msg("mrt_model_runner_create: %s", mrt_last_error_message());
  }
  mrt_device_destroy(device); /* the runner keeps it */
  return runner;
}

mrt_model_runner *test_make_runner(const char *model, const mrt_model_runner_config *config) {
  const char *paths[] = {test_model_path("MRT_TEST_RUNNER_MODELS", model)};
  mrt_model_runner *runner = NULL;
  if (mrt_model_runner_create_from_files(paths, 1, config, &runner) != MRT_OK) {
    fail_msg("mrt_model_runner_create_from_files(%s): %s", model, mrt_last_error_message());
  }
  return runner;
}

void test_expect_contains(const char *text, const char *needle) {
  if (strstr(text, needle) == NULL) fail_msg("'%s' does not contain '%s'", text, needle);
}

void test_fill_random(float *values, size_t n, unsigned *seed, float low, float high) {
  for (size_t i = 0; i < n; ++i) values[i] = low + (float)rand_r(seed) / (float)RAND_MAX * (high - low);
}
