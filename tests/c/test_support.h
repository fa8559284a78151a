/* Helpers shared by the C tests: a private simulated system per test
 * process (so parallel tests never compete for devices), the paths of the
 * models a CTest fixture wrote, and message checks. */
#ifndef MRT_TEST_SUPPORT_H
#define MRT_TEST_SUPPORT_H

#include <stddef.h>

#include "mrt_c.h"

/* Makes a fresh lock directory under $TMPDIR (or /tmp) named after
 * `prefix` and points MRT_HWSIM_LOCK_DIR at it, with MRT_HWSIM_IPUS = ipus. */
void test_use_private_system(const char *prefix, const char *ipus);
/* Removes that directory and the lock files in it. */
void test_remove_private_system(void);

/* Removes the files in `dir`, then `dir` (which holds no subdirectories). */
void test_remove_directory(const char *dir);

/* cmocka group setup / teardown: a private system of 4 IPUs for the
 * process ("mrt_c_test" lock directory), removed at the end. */
int test_private_system_setup(void **state);
int test_private_system_teardown(void **state);

/* "$<dir_variable>/<name>.popef"; static storage, valid until the next call. */
const char *test_model_path(const char *dir_variable, const char *name);

/* $MRT_TEST_POPEF_DIR, where the popef_samples fixture writes the sample
 * PopEF files (tests/cpp/popef/write_samples.cpp); fails the test if it is
 * not set. */
const char *test_popef_samples_dir(void);
/* "<test_popef_samples_dir()>/<file>"; static storage, valid for the next
 * three calls too, so that one array can list several files. */
const char *test_popef_sample_path(const char *file);

/* The model at test_model_path(dir_variable, name); fails the test with the
 * library's message if it cannot be loaded. The caller destroys it. */
mrt_model *test_load_model(const char *dir_variable, const char *name);

/* A small IPU Model device that fits `model` (its own device manager, already
 * released). The caller destroys it. */
mrt_device *test_small_device_for_model(const mrt_model *model);

/* A deferred session of `model` (config NULL for the defaults) bound to
 * its own small IPU Model device; fails the test with the library's message
 * if it cannot be made. The session keeps the model and the device alive. */
mrt_session *test_bound_session(const mrt_model *model, const mrt_session_config *config);

/* A runner of `model` (default config) on its own small IPU Model device;
 * fails the test with the library's message if it cannot be created. */
mrt_model_runner *test_small_runner_for_model(const mrt_model *model);

/* A runner of test_model_path("MRT_TEST_RUNNER_MODELS", model); fails the
 * test with the library's message if it cannot be created. */
mrt_model_runner *test_make_runner(const char *model, const mrt_model_runner_config *config);

/* Fails the test unless text contains needle. */
void test_expect_contains(const char *text, const char *needle);

/* n floats drawn uniformly from [low, high) with rand_r(seed). */
void test_fill_random(float *values, size_t n, unsigned *seed, float low, float high);

#endif
