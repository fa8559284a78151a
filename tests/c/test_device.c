/* The device part of the C API on the simulated IPU system: listing, devices
 * by count, by id and for a model (the sample PopEF files of the
 * popef_samples fixture, in MRT_TEST_POPEF_DIR: "sample" needs 2 IPUs of
 * version 21 and uses a remote buffer), busy devices, waiting with a timeout
 * and forever, IPU Model devices, and bad arguments leaving everything usable.
 * Every test runs in its own simulated system: a fresh lock directory in
 * MRT_HWSIM_LOCK_DIR and its own MRT_HWSIM_IPUS, read when a manager is
 * created, so no test sees another's (or another process's) devices. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

#define MS 1000000LL /* nanoseconds */

static char g_lock_dirs[32][1024];
static size_t g_num_lock_dirs;

/* A manager of a fresh system of `ipus` ("4", "4x21", "0", ...). */
static mrt_device_manager *system_of(const char *ipus) {
  assert_true(g_num_lock_dirs < sizeof g_lock_dirs / sizeof g_lock_dirs[0]);
  char *dir = g_lock_dirs[g_num_lock_dirs];
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof g_lock_dirs[0], "%s/mrt_test_device_XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(dir));
  ++g_num_lock_dirs;
  assert_int_equal(setenv("MRT_HWSIM_LOCK_DIR", dir, 1), 0);
  assert_int_equal(setenv("MRT_HWSIM_IPUS", ipus, 1), 0);
  mrt_device_manager *manager = NULL;
  assert_int_equal(mrt_device_manager_create(&manager), MRT_OK);
  assert_non_null(manager);
  return manager;
}

static void remove_lock_dirs(void) {
  for (size_t i = 0; i < g_num_lock_dirs; ++i) test_remove_directory(g_lock_dirs[i]);
}

static mrt_model *load_sample(void) {
  const char *paths[] = {test_popef_sample_path("sample.popef")};
  mrt_model *model = NULL;
  assert_int_equal(mrt_model_load(paths, 1, &model), MRT_OK);
  return model;
}

static void expect_message_contains(const char *needle) {
  const char *message = mrt_last_error_message();
  if (strstr(message, needle) == NULL) fail_msg("'%s' does not contain '%s'", message, needle);
}

static int64_t id_of(const mrt_device *device) {
  int64_t id = -2;
  assert_int_equal(mrt_device_id(device, &id), MRT_OK);
  return id;
}

static int64_t num_ipus_of(const mrt_device *device) {
  int64_t num_ipus = -2;
  assert_int_equal(mrt_device_num_ipus(device, &num_ipus), MRT_OK);
  return num_ipus;
}

static int64_t ipu_version_of(const mrt_device *device) {
  int64_t version = -2;
  assert_int_equal(mrt_device_ipu_version(device, &version), MRT_OK);
  return version;
}

static mrt_device *get_one(const mrt_device_manager *manager, int64_t num_ipus) {
  mrt_device *device = NULL;
  assert_int_equal(mrt_device_manager_get_device(manager, num_ipus, NULL, NULL, false, &device), MRT_OK);
  assert_non_null(device);
  return device;
}

static bool is_free(const mrt_device_manager *manager, size_t id) {
  mrt_device_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(mrt_device_manager_device_info(manager, id, &info), MRT_OK);
  return info.is_free;
}

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static mrt_device_wait_config wait_config(int32_t strategy, int64_t timeout_ns, int64_t sleep_time_ns) {
  mrt_device_wait_config config;
  mrt_device_wait_config_init(&config);
  config.strategy = strategy;
  config.timeout_ns = timeout_ns;
  config.sleep_time_ns = sleep_time_ns;
  return config;
}

static void wait_config_defaults(void **state) {
  (void)state;
  mrt_device_wait_config config;
  memset(&config, 0xab, sizeof config);
  mrt_device_wait_config_init(&config);
  assert_int_equal(config.struct_size, sizeof config);
  assert_int_equal(config.strategy, MRT_DEVICE_NO_WAIT);
  assert_int_equal(config.timeout_ns, 0);
  assert_int_equal(config.sleep_time_ns, 15000 * MS);
  (mrt_device_wait_config_init)(NULL); /* the exported V1 function ignores NULL */
}

static void lists_the_system(void **state) {
  (void)state;
  mrt_device_manager *manager = system_of("4");
  int64_t version = -1;
  assert_int_equal(mrt_device_manager_ipu_hardware_version(manager, &version), MRT_OK);
  assert_int_equal(version, 2);
  size_t count = 0;
  assert_int_equal(mrt_device_manager_device_count(manager, &count), MRT_OK);
  assert_int_equal(count, 7);
  static const int64_t sizes[] = {1, 1, 1, 1, 2, 2, 4};
  for (size_t i = 0; i < count; ++i) {
    mrt_device_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    assert_int_equal(mrt_device_manager_device_info(manager, i, &info), MRT_OK);
    assert_int_equal(info.id, (int64_t)i);
    assert_int_equal(info.num_ipus, sizes[i]);
    assert_int_equal(info.ipu_version, 2);
    assert_int_equal(info.tiles_per_ipu, 1472);
    assert_true(info.is_free);
    assert_string_equal(info.target_name, "GC200");
  }
  mrt_device_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(mrt_device_manager_device_info(manager, 7, &info), MRT_INVALID_ARGUMENT);
  expect_message_contains("device index 7 is out of range (the system has 7 devices)");
  info.struct_size = offsetof(mrt_device_info, target_name);
  assert_int_equal(mrt_device_manager_device_info(manager, 0, &info), MRT_INVALID_ARGUMENT);
  expect_message_contains("out_info->struct_size");
  assert_null(info.target_name);
  mrt_device_manager_destroy(manager);

  manager = system_of("2x21");
  assert_int_equal(mrt_device_manager_ipu_hardware_version(manager, &version), MRT_OK);
  assert_int_equal(version, 21);
  assert_int_equal(mrt_device_manager_device_count(manager, &count), MRT_OK);
  assert_int_equal(count, 3);
  info.struct_size = sizeof info;
  assert_int_equal(mrt_device_manager_device_info(manager, 2, &info), MRT_OK);
  assert_int_equal(info.num_ipus, 2);
  assert_string_equal(info.target_name, "C600");
  mrt_device_manager_destroy(manager);

  manager = system_of("0");
  assert_int_equal(mrt_device_manager_ipu_hardware_version(manager, &version), MRT_OK);
  assert_int_equal(version, 0);
  assert_int_equal(mrt_device_manager_device_count(manager, &count), MRT_OK);
  assert_int_equal(count, 0);
  mrt_device *device = NULL;
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, NULL, false, &device), MRT_UNAVAILABLE);
  expect_message_contains("the system has no IPUs");
  mrt_device_manager_destroy(manager);

  /* A malformed system description: the manager is refused, naming the variable. */
  assert_int_equal(setenv("MRT_HWSIM_IPUS", "many", 1), 0);
  mrt_device_manager *bad = NULL;
  assert_int_equal(mrt_device_manager_create(&bad), MRT_INVALID_ARGUMENT);
  expect_message_contains("MRT_HWSIM_IPUS 'many'");
  assert_null(bad);
}

static void devices_by_count(void **state) {
  (void)state;
  mrt_device_manager *manager = system_of("4");
  mrt_device *singles[4];
  for (int i = 0; i < 4; ++i) {
    singles[i] = get_one(manager, 1);
    assert_int_equal(id_of(singles[i]), i);
    assert_int_equal(num_ipus_of(singles[i]), 1);
    assert_int_equal(ipu_version_of(singles[i]), 2);
    assert_false(is_free(manager, (size_t)i));
  }
  assert_false(is_free(manager, 6));

  mrt_device *device = (mrt_device *)singles;
  assert_int_equal(mrt_device_manager_try_get_device(manager, 1, NULL, NULL, false, &device), MRT_OK);
  assert_null(device);
  device = (mrt_device *)singles;
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, NULL, false, &device), MRT_UNAVAILABLE);
  assert_ptr_equal(device, (mrt_device *)singles); /* not written on failure */
  expect_message_contains("cannot attach a device of 1 IPU: candidates 0 (IPU 0) busy, 1 (IPU 1) busy");
  expect_message_contains("did not wait (NO_WAIT)");
  expect_message_contains("busy: 0, 1, 2, 3, 4, 5, 6");
  assert_int_equal(mrt_device_manager_get_device(manager, 8, NULL, NULL, false, &device), MRT_UNAVAILABLE);
  expect_message_contains("the system has no device of 8 IPUs");

  /* Releasing IPUs 2 and 3 frees the second pair. */
  mrt_device_destroy(singles[2]);
  mrt_device_destroy(singles[3]);
  device = get_one(manager, 2);
  assert_int_equal(id_of(device), 5);
  assert_int_equal(num_ipus_of(device), 2);
  mrt_device_destroy(device);
  mrt_device_destroy(singles[0]);
  mrt_device_destroy(singles[1]);
  for (size_t id = 0; id < 7; ++id) assert_true(is_free(manager, id));
  mrt_device_manager_destroy(manager);
}

static void devices_by_id(void **state) {
  (void)state;
  mrt_device_manager *manager = system_of("4");
  mrt_device *three = NULL;
  assert_int_equal(mrt_device_manager_get_specific_device(manager, 3, NULL, NULL, &three), MRT_OK);
  assert_int_equal(id_of(three), 3);
  mrt_device *device = NULL;
  assert_int_equal(mrt_device_manager_get_specific_device(manager, 3, NULL, NULL, &device), MRT_UNAVAILABLE);
  expect_message_contains("cannot attach device 3 (IPU 3): candidates 3 (IPU 3) busy");
  assert_int_equal(mrt_device_manager_try_get_specific_device(manager, 5, NULL, NULL, &device), MRT_OK);
  assert_null(device);
  assert_int_equal(mrt_device_manager_get_specific_device(manager, 7, NULL, NULL, &device), MRT_NOT_FOUND);
  expect_message_contains("no device 7: system: 4 IPUs of version 2 (GC200)");
  assert_int_equal(mrt_device_manager_try_get_specific_device(manager, -1, NULL, NULL, &device),
                   MRT_NOT_FOUND);
  expect_message_contains("no device -1");
  assert_int_equal(mrt_device_manager_get_specific_device(manager, 4, NULL, NULL, &device), MRT_OK);
  assert_int_equal(id_of(device), 4);
  mrt_device_destroy(device);
  mrt_device_destroy(three);
  mrt_device_manager_destroy(manager);
}

static void wait_with_timeout_waits_about_the_timeout(void **state) {
  (void)state;
  mrt_device_manager *manager = system_of("1");
  mrt_device *held = get_one(manager, 1);
  const mrt_device_wait_config wait = wait_config(MRT_DEVICE_WAIT_WITH_TIMEOUT, 50 * MS, 5 * MS);
  mrt_device *device = NULL;
  const int64_t start = now_ns();
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, &wait, false, &device), MRT_UNAVAILABLE);
  assert_true(now_ns() - start >= 50 * MS);
  expect_message_contains("candidates 0 (IPU 0) busy");
  expect_message_contains("(WAIT_WITH_TIMEOUT, timeout 50 ms, retry every 5 ms)");
  expect_message_contains("waited ");
  mrt_device_destroy(held);
  assert_int_equal(mrt_device_manager_try_get_device(manager, 1, NULL, &wait, false, &device), MRT_OK);
  assert_non_null(device);
  mrt_device_destroy(device);
  mrt_device_manager_destroy(manager);
}

struct release_later {
  mrt_device *device;
  long after_ms;
};

static void *release_after(void *arg) {
  struct release_later *job = arg;
  sleep_ms(job->after_ms);
  mrt_device_destroy(job->device);
  return NULL;
}

static void wait_forever_succeeds_when_another_thread_releases(void **state) {
  (void)state;
  /* WAIT_FOREVER, and WAIT_WITH_TIMEOUT with no limit, which is the same. */
  const mrt_device_wait_config waits[] = {wait_config(MRT_DEVICE_WAIT_FOREVER, 0, 2 * MS),
                                          wait_config(MRT_DEVICE_WAIT_WITH_TIMEOUT, MRT_FOREVER, 2 * MS)};
  for (size_t i = 0; i < 2; ++i) {
    mrt_device_manager *manager = system_of("2");
    mrt_device *pair = get_one(manager, 2);
    struct release_later job = {pair, 30};
    const mrt_device_wait_config wait = waits[i];
    mrt_device *device = NULL;
    const int64_t start = now_ns();
    pthread_t thread;
    assert_int_equal(pthread_create(&thread, NULL, release_after, &job), 0);
    assert_int_equal(mrt_device_manager_get_specific_device(manager, 1, NULL, &wait, &device), MRT_OK);
    assert_true(now_ns() - start >= 30 * MS); /* it could only succeed after the release */
    assert_int_equal(pthread_join(thread, NULL), 0);
    assert_int_equal(id_of(device), 1);
    mrt_device_destroy(device);
    mrt_device_manager_destroy(manager);
  }
}

static void devices_for_a_model(void **state) {
  (void)state;
  mrt_model *model = load_sample(); /* 2 IPUs of version 21, a remote buffer */
  mrt_device_manager *c600 = system_of("4x21");
  mrt_device *device = NULL;
  assert_int_equal(mrt_device_manager_get_device_for_model(c600, model, NULL, &device), MRT_OK);
  assert_int_equal(num_ipus_of(device), 2);
  assert_int_equal(ipu_version_of(device), 21);
  assert_int_equal(id_of(device), 4);
  mrt_device *other = NULL;
  assert_int_equal(mrt_device_manager_get_specific_device_for_model(c600, 0, model, NULL, &other),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("model 'sample': needs 2 IPUs, but device 0 has 1 IPU");
  assert_int_equal(mrt_device_manager_try_get_specific_device_for_model(c600, 4, model, NULL, &other),
                   MRT_OK);
  assert_null(other);
  assert_int_equal(mrt_device_manager_get_specific_device_for_model(c600, 5, model, NULL, &other), MRT_OK);
  assert_int_equal(id_of(other), 5);
  mrt_device *third = (mrt_device *)model;
  assert_int_equal(mrt_device_manager_try_get_device_for_model(c600, model, NULL, &third), MRT_OK);
  assert_null(third); /* both pairs are held */
  mrt_device_destroy(other);
  mrt_device_destroy(device);

  mrt_device_manager *mk2 = system_of("4");
  const mrt_device_wait_config forever = wait_config(MRT_DEVICE_WAIT_FOREVER, 0, MS);
  assert_int_equal(mrt_device_manager_get_device_for_model(mk2, model, &forever, &other), MRT_UNAVAILABLE);
  expect_message_contains("the model needs IPU version 21, but the system's IPUs are version 2");
  assert_int_equal(mrt_device_manager_try_get_device_for_model(mk2, model, NULL, &other), MRT_OK);
  assert_null(other);

  assert_int_equal(mrt_device_manager_create_ipu_model_device_for_model(mk2, model, 0, &other), MRT_OK);
  assert_int_equal(id_of(other), -1);
  assert_int_equal(num_ipus_of(other), 2);
  assert_int_equal(ipu_version_of(other), 21);
  mrt_device_destroy(other);
  assert_int_equal(mrt_device_manager_create_small_ipu_model_device_for_model(mk2, model, &other), MRT_OK);
  assert_int_equal(num_ipus_of(other), 2);
  mrt_device_destroy(other);
  mrt_model_destroy(model); /* devices do not need the model */
  mrt_device_manager_destroy(mk2);
  mrt_device_manager_destroy(c600);
}

static void ipu_model_devices(void **state) {
  (void)state;
  mrt_device_manager *manager = system_of("1");
  mrt_device *a = NULL;
  mrt_device *b = NULL;
  assert_int_equal(mrt_device_manager_create_ipu_model_device(manager, 2, 21, 8, &a), MRT_OK);
  assert_int_equal(mrt_device_manager_create_ipu_model_device(manager, 2, 21, 8, &b),
                   MRT_OK); /* never busy */
  assert_int_equal(id_of(a), -1);
  assert_int_equal(num_ipus_of(a), 2);
  assert_int_equal(ipu_version_of(a), 21);
  assert_true(is_free(manager, 0)); /* outside the pool */
  mrt_device_destroy(a);
  mrt_device_destroy(b);
  assert_int_equal(mrt_device_manager_create_small_ipu_model_device(manager, 1, 2, &a), MRT_OK);
  assert_int_equal(ipu_version_of(a), 2);
  mrt_device_destroy(a);

  a = NULL;
  assert_int_equal(mrt_device_manager_create_ipu_model_device(manager, 0, 2, 0, &a), MRT_INVALID_ARGUMENT);
  expect_message_contains("num_ipus must be between 1 and 256 (got 0)");
  assert_int_equal(mrt_device_manager_create_small_ipu_model_device(manager, 1, 3, &a), MRT_INVALID_ARGUMENT);
  expect_message_contains("ipu_version 3 is not 2 (Mk2) or 21 (C600)");
  assert_int_equal(mrt_device_manager_create_ipu_model_device(manager, 1, 2, 2000, &a), MRT_INVALID_ARGUMENT);
  expect_message_contains("tiles_per_ipu 2000 is out of range");
  assert_null(a);
  mrt_device_manager_destroy(manager);
}

static void device_options(void **state) {
  (void)state;
  mrt_device_manager *manager = system_of("4");
  static const char *const good[] = {"ipuLinkDomainSize", "4", "ipuLinkTopology", "torus", NULL};
  mrt_device *device = NULL;
  assert_int_equal(mrt_device_manager_get_device(manager, 2, good, NULL, true, &device), MRT_OK);
  assert_int_equal(id_of(device), 4);
  mrt_device_destroy(device);
  device = NULL;
  static const char *const unknown[] = {"ipuLinkDomainSize", "4", "bogus", "1", NULL};
  assert_int_equal(mrt_device_manager_get_device(manager, 1, unknown, NULL, false, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("unknown device option 'bogus'");
  static const char *const bad_value[] = {"ipuLinkConfiguration", "zigzag", NULL};
  assert_int_equal(mrt_device_manager_get_specific_device(manager, 0, bad_value, NULL, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains(
      "device option 'ipuLinkConfiguration': 'zigzag' is not one of default, slidingWindow");
  static const char *const no_value[] = {"ipuLinkTopology", NULL};
  assert_int_equal(mrt_device_manager_try_get_device(manager, 1, no_value, NULL, false, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("device_options[0] 'ipuLinkTopology' has no value");
  static const char *const twice[] = {"ipuLinkTopology", "mesh", "ipuLinkTopology", "torus", NULL};
  assert_int_equal(mrt_device_manager_get_device(manager, 1, twice, NULL, false, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("device option 'ipuLinkTopology' is given twice");
  assert_null(device);
  mrt_device_manager_destroy(manager);
}

static void bad_arguments_leave_everything_usable(void **state) {
  (void)state;
  mrt_device_manager *manager = system_of("4");
  mrt_model *model = load_sample();
  mrt_device *held = get_one(manager, 1);
  mrt_device *device = NULL;
  int64_t value = 0;
  size_t count = 0;

  assert_int_equal(mrt_device_manager_create(NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("out must not be NULL");
  assert_int_equal(mrt_device_manager_get_device(NULL, 1, NULL, NULL, false, &device), MRT_INVALID_ARGUMENT);
  expect_message_contains("mrt_device_manager_get_device: manager must not be NULL");
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, NULL, false, NULL), MRT_INVALID_ARGUMENT);
  expect_message_contains("out must not be NULL");
  assert_int_equal(mrt_device_manager_get_device_for_model(manager, NULL, NULL, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("model must not be NULL");
  assert_int_equal(mrt_device_manager_ipu_hardware_version(manager, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_device_manager_device_count(NULL, &count), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_device_manager_device_info(manager, 0, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_device_id(NULL, &value), MRT_INVALID_ARGUMENT);
  expect_message_contains("device must not be NULL");
  assert_int_equal(mrt_device_num_ipus(held, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_device_ipu_version(NULL, &value), MRT_INVALID_ARGUMENT);

  assert_int_equal(mrt_device_manager_get_device(manager, 0, NULL, NULL, false, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("num_ipus must be at least 1 (got 0)");
  assert_int_equal(mrt_device_manager_try_get_device(manager, 3, NULL, NULL, false, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("num_ipus 3 is not a power of two");

  mrt_device_wait_config wait = wait_config(MRT_DEVICE_WAIT_WITH_TIMEOUT, MS, MS);
  wait.struct_size = sizeof wait - 1;
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, &wait, false, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("wait_config->struct_size is");
  wait.struct_size = 0;
  assert_int_equal(mrt_device_manager_get_specific_device(manager, 1, NULL, &wait, &device),
                   MRT_INVALID_ARGUMENT);
  wait = wait_config(7, 0, MS);
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, &wait, false, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("wait_config->strategy 7 is not an mrt_device_wait_strategy value");
  wait = wait_config(MRT_DEVICE_WAIT_FOREVER, 0, -5);
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, &wait, false, &device),
                   MRT_INVALID_ARGUMENT);
  expect_message_contains("wait_config->sleep_time_ns must not be negative (got -5)");
  assert_null(device);

  /* A longer struct from a later version is fine. */
  struct {
    mrt_device_wait_config config;
    uint64_t future_field;
  } longer;
  longer.config = wait_config(MRT_DEVICE_WAIT_WITH_TIMEOUT, MS, MS);
  longer.config.struct_size = sizeof longer;
  longer.future_field = 0;
  assert_int_equal(mrt_device_manager_get_device(manager, 1, NULL, &longer.config, false, &device), MRT_OK);
  assert_int_equal(id_of(device), 1);
  mrt_device_destroy(device);

  /* Everything still works. */
  assert_int_equal(id_of(held), 0);
  assert_int_equal(mrt_device_manager_device_count(manager, &count), MRT_OK);
  assert_int_equal(count, 7);
  device = get_one(manager, 2);
  assert_int_equal(id_of(device), 5);
  mrt_device_destroy(device);
  mrt_device_destroy(held);
  mrt_device_destroy(NULL);
  mrt_device_manager_destroy(NULL);
  mrt_model_destroy(model);
  mrt_device_manager_destroy(manager);
}

static void a_device_outlives_its_manager(void **state) {
  (void)state;
  mrt_device_manager *manager = system_of("2");
  mrt_device *device = get_one(manager, 1);
  mrt_device_manager_destroy(manager);
  assert_int_equal(id_of(device), 0);
  mrt_device_manager *again = NULL;
  assert_int_equal(mrt_device_manager_create(&again), MRT_OK); /* same system and lock directory */
  assert_false(is_free(again, 0));
  mrt_device_destroy(device);
  assert_true(is_free(again, 0));
  mrt_device_manager_destroy(again);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(wait_config_defaults),
      cmocka_unit_test(lists_the_system),
      cmocka_unit_test(devices_by_count),
      cmocka_unit_test(devices_by_id),
      cmocka_unit_test(wait_with_timeout_waits_about_the_timeout),
      cmocka_unit_test(wait_forever_succeeds_when_another_thread_releases),
      cmocka_unit_test(devices_for_a_model),
      cmocka_unit_test(ipu_model_devices),
      cmocka_unit_test(device_options),
      cmocka_unit_test(bad_arguments_leave_everything_usable),
      cmocka_unit_test(a_device_outlives_its_manager),
  };
  const int failed = cmocka_run_group_tests(tests, NULL, NULL);
  remove_lock_dirs();
  return failed;
}
