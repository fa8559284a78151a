/* test_libffi_consumer LIBMRT_SO MODELS_DIR
 *
 * libmrt used the way a dynamic language uses it: the library is dlopen'ed
 * and every call goes through libffi (dynamic_binding.c) - ffi_prep_cif and
 * ffi_call, structs laid out by libffi and passed by pointer, enums as
 * int32_t, callbacks as ffi_closure_alloc closures (the log callback, future
 * on_ready callbacks and their user_data_free). This program is not linked
 * against libmrt; mrt_c.h is included only to check that the layouts libffi
 * computes match the compiler's.
 *
 * It runs the mlp and add_one example models (MODELS_DIR/<name>.popef, from
 * mrt-gen) synchronously and asynchronously, compares the outputs with
 * reference math, checks error paths and their messages, and fails unless
 * at least MIN_FUNCTIONS distinct C functions were called. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dynamic_binding.h"
#include "mrt_c.h"

enum { MIN_FUNCTIONS = 25 };
enum { IMAGE = 784, HIDDEN = 128, CLASSES = 10, ADD_ONE_N = 16 };

/* Status codes, as a binding without the header would define them. */
enum {
  OK = 0, INVALID_ARGUMENT = 1, NOT_FOUND = 2, DEVICE_ERROR = 8, VERSION_MISMATCH = 10,
  LOG_WARN = 2, LOG_INFO = 3, SIMULATED_TILE_EXCEPTION = 0
};

static const char *models_dir;

/* The spine of the API (DESIGN.md 2.1): every one must have been called. */
static const char *const spine[] = {
    "mrt_status_string", "mrt_last_error_message", "mrt_version_string", "mrt_check_version",
    "mrt_model_load", "mrt_model_destroy", "mrt_model_tensor_data", "mrt_model_runner_config_init_sized",
    "mrt_model_runner_create", "mrt_model_runner_destroy", "mrt_model_runner_execute_inputs",
    "mrt_model_runner_execute_outputs", "mrt_model_runner_execute", "mrt_model_runner_execute_async",
    "mrt_future_is_ready", "mrt_future_wait", "mrt_future_error_message", "mrt_future_on_ready",
    "mrt_future_destroy"};

#define CHECK(condition, ...)                                                              \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      fprintf(stderr, "%s:%d: check failed: %s\n  ", __FILE__, __LINE__, #condition);      \
      fprintf(stderr, __VA_ARGS__);                                                        \
      fputc('\n', stderr);                                                                 \
      exit(EXIT_FAILURE);                                                                  \
    }                                                                                      \
  } while (0)

static const char *last_error(void) { return dyn_call("mrt_last_error_message").p; }

/* Calls a function returning mrt_status; it must succeed. */
#define CALL_OK(name, ...)                                                                 \
  do {                                                                                     \
    const int32_t status_ = dyn_call(name, __VA_ARGS__).i;                                 \
    CHECK(status_ == OK, "%s returned %d: %s", name, status_, last_error());              \
  } while (0)

/* A failed call's status and its message, which must contain `fragment`. */
static void expect_error(int32_t status, int32_t expected, const char *fragment) {
  const char *message = last_error();
  CHECK(status == expected, "status %d, expected %d (%s)", status, expected, message);
  CHECK(strstr(message, fragment) != NULL, "message '%s' lacks '%s'", message, fragment);
}

static char *model_path(const char *name) {
  static char paths[2][1024];
  static int next;
  char *path = paths[next++ % 2];
  snprintf(path, sizeof paths[0], "%s/%s.popef", models_dir, name);
  return path;
}

/* ---- struct layouts (libffi's, checked against the compiler's) ---- */

static dyn_struct tensor_view = {"mrt_tensor_view", "ppL", {0}, {0}, {0}, 0};
static dyn_struct data_desc = {"mrt_data_desc", "plpzib", {0}, {0}, {0}, 0};
static dyn_struct model_info = {"mrt_model_info", "zpLLubppzzzzzzp", {0}, {0}, {0}, 0};
static dyn_struct anchor_info = {"mrt_anchor_info", "zppipzlpzbiiplu", {0}, {0}, {0}, 0};
static dyn_struct runner_config = {"mrt_model_runner_config", "zubbpzpzpzpblbublubllbzppppp",
                                   {0}, {0}, {0}, 0};
static dyn_struct request_times = {"mrt_request_times", "zdddd", {0}, {0}, {0}, 0};

/* Field indices used below. */
enum { VIEW_NAME, VIEW_DATA, VIEW_SIZE };
enum { DESC_NAME, DESC_SIZE, DESC_SHAPE, DESC_RANK, DESC_TYPE, DESC_HAS_DATA };
enum { INFO_SIZE, INFO_EXECUTABLE, INFO_NUM_ANCHORS = 8, INFO_NUM_TENSOR_DATA = 12 };
enum { ANCHOR_SIZE, ANCHOR_NAME, ANCHOR_HANDLE, ANCHOR_TYPE, ANCHOR_SHAPE, ANCHOR_RANK,
       ANCHOR_BYTES, ANCHOR_TENSOR_TYPE = 10 };
enum { CONFIG_SIZE, CONFIG_REPLICATION, CONFIG_THREAD_SAFE = 3, CONFIG_CHECK_HASH = 11,
       CONFIG_TIMEOUT = 12, CONFIG_BATCHING_DIM = 14 };
enum { TIMES_SIZE, TIMES_REQUEST };

static void check_layout(const dyn_struct *layout, size_t c_size, const size_t *c_offsets,
                         size_t c_count) {
  CHECK(layout->count == c_count, "%s: %zu fields described, the header has %zu", layout->name,
        layout->count, c_count);
  CHECK(layout->type.size == c_size, "%s: libffi size %zu, C sizeof %zu", layout->name,
        layout->type.size, c_size);
  for (size_t k = 0; k < c_count; ++k)
    CHECK(layout->offsets[k] == c_offsets[k], "%s field %zu: libffi offset %zu, C offset %zu",
          layout->name, k, layout->offsets[k], c_offsets[k]);
}

#define LAYOUT(layout, type, ...)                                                          \
  do {                                                                                     \
    const size_t offsets_[] = {__VA_ARGS__};                                               \
    dyn_struct_layout(&layout);                                                            \
    check_layout(&layout, sizeof(type), offsets_, sizeof offsets_ / sizeof offsets_[0]);   \
  } while (0)
#define OFF(type, field) offsetof(type, field)

static void compute_layouts(void) {
  LAYOUT(tensor_view, mrt_tensor_view, OFF(mrt_tensor_view, name), OFF(mrt_tensor_view, data),
         OFF(mrt_tensor_view, size_bytes));
  LAYOUT(data_desc, mrt_data_desc, OFF(mrt_data_desc, name), OFF(mrt_data_desc, size_in_bytes),
         OFF(mrt_data_desc, shape), OFF(mrt_data_desc, rank), OFF(mrt_data_desc, data_type),
         OFF(mrt_data_desc, popef_contains_tensor_data));
  LAYOUT(model_info, mrt_model_info, OFF(mrt_model_info, struct_size), OFF(mrt_model_info, executable),
         OFF(mrt_model_info, replication_factor), OFF(mrt_model_info, num_ipus),
         OFF(mrt_model_info, ipu_version), OFF(mrt_model_info, is_inference),
         OFF(mrt_model_info, seed_handle), OFF(mrt_model_info, package_hash),
         OFF(mrt_model_info, num_anchors), OFF(mrt_model_info, num_programs),
         OFF(mrt_model_info, num_engine_options), OFF(mrt_model_info, num_device_options),
         OFF(mrt_model_info, num_tensor_data), OFF(mrt_model_info, num_feed_data),
         OFF(mrt_model_info, shared_executable));
  LAYOUT(anchor_info, mrt_anchor_info, OFF(mrt_anchor_info, struct_size), OFF(mrt_anchor_info, name),
         OFF(mrt_anchor_info, handle), OFF(mrt_anchor_info, data_type), OFF(mrt_anchor_info, shape),
         OFF(mrt_anchor_info, rank), OFF(mrt_anchor_info, size_in_bytes),
         OFF(mrt_anchor_info, programs), OFF(mrt_anchor_info, num_programs),
         OFF(mrt_anchor_info, is_per_replica), OFF(mrt_anchor_info, tensor_type),
         OFF(mrt_anchor_info, data_source), OFF(mrt_anchor_info, remote_buffer),
         OFF(mrt_anchor_info, remote_buffer_repeats), OFF(mrt_anchor_info, replica));
  LAYOUT(runner_config, mrt_model_runner_config, OFF(mrt_model_runner_config, struct_size),
         OFF(mrt_model_runner_config, replication_factor), OFF(mrt_model_runner_config, run_save_programs),
         OFF(mrt_model_runner_config, thread_safe), OFF(mrt_model_runner_config, frozen_inputs),
         OFF(mrt_model_runner_config, num_frozen_inputs), OFF(mrt_model_runner_config, save_programs_outputs),
         OFF(mrt_model_runner_config, num_save_programs_outputs), OFF(mrt_model_runner_config, replica_devices),
         OFF(mrt_model_runner_config, num_replica_devices), OFF(mrt_model_runner_config, device_wait_config),
         OFF(mrt_model_runner_config, check_package_hash), OFF(mrt_model_runner_config, timeout_ns),
         OFF(mrt_model_runner_config, validate_io_params), OFF(mrt_model_runner_config, batching_dim),
         OFF(mrt_model_runner_config, auto_reset), OFF(mrt_model_runner_config, max_look_ahead),
         OFF(mrt_model_runner_config, ring_buffer_size_multiplier),
         OFF(mrt_model_runner_config, flush_on_waiting_outputs),
         OFF(mrt_model_runner_config, batch_size_timeout_ns),
         OFF(mrt_model_runner_config, data_parallel_timeout_ns),
         OFF(mrt_model_runner_config, is_batch_size_timeout_enabled),
         OFF(mrt_model_runner_config, request_tracepoints_buffer_size),
         OFF(mrt_model_runner_config, flush_callback), OFF(mrt_model_runner_config, flush_user_data),
         OFF(mrt_model_runner_config, flush_user_data_free),
         OFF(mrt_model_runner_config, flush_select_callback), OFF(mrt_model_runner_config, model_name));
  LAYOUT(request_times, mrt_request_times, OFF(mrt_request_times, struct_size),
         OFF(mrt_request_times, request_us), OFF(mrt_request_times, read_preparation_us),
         OFF(mrt_request_times, read_queue_us), OFF(mrt_request_times, computation_us));
}

/* ---- callbacks (closures) and what they record ---- */

/* Every user_data the test hands to libmrt starts with this, so one
 * user_data_free closure serves them all. */
typedef struct tracked {
  pthread_mutex_t mutex;
  int frees;
} tracked;

typedef struct log_record {
  tracked base;
  int marker_calls;
  int32_t marker_level;
} log_record;

typedef struct ready_record {
  tracked base;
  int calls;
  int32_t last_status;
  pthread_t last_thread;
} ready_record;

static dyn_closure log_closure, ready_closure, free_closure;

/* void (*)(mrt_log_level level, const char *message, void *user_data) */
static void on_log(ffi_cif *cif, void *ret, void **args, void *context) {
  (void)cif, (void)ret, (void)context;
  const int32_t level = *(const int32_t *)args[0];
  const char *message = *(const char *const *)args[1];
  log_record *record = *(void **)args[2];
  if (strstr(message, "libffi consumer marker") == NULL) return;
  pthread_mutex_lock(&record->base.mutex);
  record->marker_calls++;
  record->marker_level = level;
  pthread_mutex_unlock(&record->base.mutex);
}

/* void (*)(mrt_status status, void *user_data), on a library thread or ours. */
static void on_ready(ffi_cif *cif, void *ret, void **args, void *context) {
  (void)cif, (void)ret, (void)context;
  ready_record *record = *(void **)args[1];
  pthread_mutex_lock(&record->base.mutex);
  record->calls++;
  record->last_status = *(const int32_t *)args[0];
  record->last_thread = pthread_self();
  pthread_mutex_unlock(&record->base.mutex);
}

/* void (*)(void *user_data) */
static void on_free(ffi_cif *cif, void *ret, void **args, void *context) {
  (void)cif, (void)ret, (void)context;
  tracked *record = *(void **)args[0];
  pthread_mutex_lock(&record->mutex);
  record->frees++;
  pthread_mutex_unlock(&record->mutex);
}

static int read_int(tracked *record, const int *field) {
  pthread_mutex_lock(&record->mutex);
  const int value = *field;
  pthread_mutex_unlock(&record->mutex);
  return value;
}

/* ---- tensors as libffi-laid-out mrt_tensor_view arrays ---- */

typedef struct views {
  unsigned char bytes[4 * 64];
  size_t count;
} views;

static void view_set(views *v, size_t index, const char *name, void *data, uint64_t size) {
  void *at = v->bytes + index * tensor_view.type.size;
  dyn_set_ptr(&tensor_view, at, VIEW_NAME, name);
  dyn_set_ptr(&tensor_view, at, VIEW_DATA, data);
  dyn_set_u64(&tensor_view, at, VIEW_SIZE, size);
  if (index + 1 > v->count) v->count = index + 1;
}

static views one_view(const char *name, void *data, uint64_t size) {
  views v;
  memset(&v, 0, sizeof v);
  view_set(&v, 0, name, data, size);
  return v;
}

/* ---- reference math ---- */

static void deterministic_image(float *image, unsigned pattern) {
  for (unsigned i = 0; i < IMAGE; ++i) image[i] = (float)((i * 37u + 11u + pattern) % 256u) / 256.0f;
}

typedef struct mlp_weights {
  const float *w1, *b1, *w2, *b2;
} mlp_weights;

static void mlp_reference(const mlp_weights *w, const float *image, double *probs) {
  double hidden[HIDDEN], top = -INFINITY, total = 0;
  for (int j = 0; j < HIDDEN; ++j) {
    double sum = w->b1[j];
    for (int i = 0; i < IMAGE; ++i) sum += (double)image[i] * w->w1[i * HIDDEN + j];
    hidden[j] = sum > 0 ? sum : 0;
  }
  for (int k = 0; k < CLASSES; ++k) {
    double sum = w->b2[k];
    for (int j = 0; j < HIDDEN; ++j) sum += hidden[j] * w->w2[j * CLASSES + k];
    probs[k] = sum;
    if (sum > top) top = sum;
  }
  for (int k = 0; k < CLASSES; ++k) total += (probs[k] = exp(probs[k] - top));
  for (int k = 0; k < CLASSES; ++k) probs[k] /= total;
}

static int argmax_f(const float *v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) if (v[i] > v[best]) best = i;
  return best;
}

static int argmax_d(const double *v, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) if (v[i] > v[best]) best = i;
  return best;
}

static void expect_probs(const char *what, const float *probs, const double *expected) {
  CHECK(argmax_f(probs, CLASSES) == argmax_d(expected, CLASSES), "%s: argmax %d, expected %d", what,
        argmax_f(probs, CLASSES), argmax_d(expected, CLASSES));
  for (int k = 0; k < CLASSES; ++k)
    CHECK(fabs(probs[k] - expected[k]) <= 1e-5 * expected[k] + 1e-7, "%s: p[%d] = %.8f, expected %.8f",
          what, k, probs[k], expected[k]);
}

/* ---- the scenarios ---- */

static void versions_and_status_strings(void) {
  const char *version = dyn_call("mrt_version_string").p;
  int major = -1, minor = -1, patch = -1;
  dyn_call("mrt_version", &major, &minor, &patch);
  char expected[64];
  snprintf(expected, sizeof expected, "%d.%d.%d", major, minor, patch);
  CHECK(strcmp(version, expected) == 0, "version string %s, mrt_version %s", version, expected);
  CHECK(major == MRT_VERSION_MAJOR, "major %d", major);
  CALL_OK("mrt_check_version", MRT_VERSION_MAJOR, MRT_VERSION_MINOR);
  expect_error(dyn_call("mrt_check_version", major + 1, 0).i, VERSION_MISMATCH, version);
  CHECK(strcmp(dyn_call("mrt_status_string", NOT_FOUND).p, "MRT_NOT_FOUND: not found") == 0, "%s",
        (const char *)dyn_call("mrt_status_string", NOT_FOUND).p);

  /* The copying variant truncates and reports the full length. */
  const char *message = last_error();
  char full[512], small[8];
  snprintf(full, sizeof full, "%s", message);
  size_t length = 0;
  CALL_OK("mrt_last_error_message_copy", small, sizeof small, &length);
  CHECK(length == strlen(full), "length %zu, message '%s'", length, full);
  CHECK(strncmp(small, full, sizeof small - 1) == 0 && small[sizeof small - 1] == '\0', "'%s'", small);
  printf("libmrt %s through libffi; version mismatch reads: %s\n", version, full);
}

static log_record log_state = {{PTHREAD_MUTEX_INITIALIZER, 0}, 0, -1};

static void log_callback_closure(void) {
  const int saved_level = dyn_call("mrt_get_log_level").I;
  CALL_OK("mrt_set_log_level", LOG_INFO);
  CHECK(dyn_call("mrt_get_log_level").I == LOG_INFO, "log level not set");
  expect_error(dyn_call("mrt_set_log_level", 99).i, INVALID_ARGUMENT, "99");
  CALL_OK("mrt_set_log_callback", log_closure.code, &log_state, free_closure.code);
  CALL_OK("mrt_log_message", LOG_WARN, "libffi consumer marker");
  CALL_OK("mrt_log_message", LOG_INFO, "libffi consumer marker at info");
  CHECK(read_int(&log_state.base, &log_state.marker_calls) == 2, "log closure called %d times",
        log_state.marker_calls);
  CHECK(log_state.marker_level == LOG_INFO, "last level %d", log_state.marker_level);
  CALL_OK("mrt_set_log_level", saved_level);
}

static void *tensor_data(void *model, const char *name, uint64_t expected_size) {
  const void *data = NULL;
  uint64_t size = 0;
  CALL_OK("mrt_model_tensor_data", model, name, &data, &size);
  CHECK(size == expected_size, "%s: %llu bytes", name, (unsigned long long)size);
  return (void *)data;
}

/* The description array the runner lends: element `index`. */
static const void *desc_at(const void *descs, size_t index) {
  return (const unsigned char *)descs + index * data_desc.type.size;
}

static void mlp_end_to_end(void) {
  char *path = model_path("mlp");
  void *model = NULL;
  CALL_OK("mrt_model_load", &path, (size_t)1, &model);

  unsigned char info[256] = {0};
  dyn_set_size(&model_info, info, INFO_SIZE, model_info.type.size);
  CALL_OK("mrt_model_get_info", model, info);
  CHECK(strcmp(dyn_get_ptr(&model_info, info, INFO_EXECUTABLE), "mlp") == 0, "executable name");
  CHECK(dyn_get_u64(&model_info, info, INFO_NUM_ANCHORS) == 6, "anchors");
  CHECK(dyn_get_u64(&model_info, info, INFO_NUM_TENSOR_DATA) == 4, "TensorData blobs");

  unsigned char anchor[256] = {0};
  dyn_set_size(&anchor_info, anchor, ANCHOR_SIZE, anchor_info.type.size);
  CALL_OK("mrt_model_anchor_by_name", model, "image", anchor);
  const int64_t *shape = dyn_get_ptr(&anchor_info, anchor, ANCHOR_SHAPE);
  CHECK(dyn_get_u64(&anchor_info, anchor, ANCHOR_RANK) == 2 && shape[0] == 1 && shape[1] == IMAGE,
        "image shape");
  CHECK(dyn_get_i32(&anchor_info, anchor, ANCHOR_TYPE) == MRT_F32, "image type");
  CHECK(dyn_get_i64(&anchor_info, anchor, ANCHOR_BYTES) == IMAGE * 4, "image bytes");
  expect_error(dyn_call("mrt_model_anchor_by_name", model, "nope", anchor).i, NOT_FOUND, "'nope'");

  const mlp_weights weights = {
      tensor_data(model, "w1", IMAGE * HIDDEN * 4), tensor_data(model, "b1", HIDDEN * 4),
      tensor_data(model, "w2", HIDDEN * CLASSES * 4), tensor_data(model, "b2", CLASSES * 4)};
  const void *unused = NULL;
  uint64_t unused_size = 0;
  expect_error(dyn_call("mrt_model_tensor_data", model, "w3", &unused, &unused_size).i, NOT_FOUND, "'w3'");

  static float images[2][IMAGE];
  double expected[2][CLASSES];
  for (unsigned k = 0; k < 2; ++k) {
    deterministic_image(images[k], 101 * k);
    mlp_reference(&weights, images[k], expected[k]);
  }

  /* A config struct filled by the library, read and changed by offsets. The
   * buffer has room to spare in case the library's struct is longer. */
  _Alignas(16) unsigned char config[1024] = {0};
  /* A binding passes the size of the struct it knows, as mrt_X_init() does. */
  CHECK(dyn_call("mrt_model_runner_config_init_sized", config, runner_config.type.size).i == OK,
        "config_init_sized: %s", last_error());
  CHECK(dyn_get_u64(&runner_config, config, CONFIG_SIZE) == runner_config.type.size,
        "config_init wrote struct_size %llu, libffi's layout has %zu",
        (unsigned long long)dyn_get_u64(&runner_config, config, CONFIG_SIZE), runner_config.type.size);
  uint32_t replicas = 0, batching_dim = 0;
  dyn_get(&runner_config, config, CONFIG_REPLICATION, &replicas, sizeof replicas);
  dyn_get(&runner_config, config, CONFIG_BATCHING_DIM, &batching_dim, sizeof batching_dim);
  CHECK(replicas == 1 && batching_dim == UINT32_MAX, "defaults: %u replicas, batching dim %u", replicas,
        batching_dim);
  CHECK(dyn_get_i64(&runner_config, config, CONFIG_TIMEOUT) == 5000000000LL, "default timeout");
  CHECK(dyn_get_bool(&runner_config, config, CONFIG_CHECK_HASH), "default check_package_hash");
  const uint8_t yes = 1;
  dyn_set(&runner_config, config, CONFIG_THREAD_SAFE, &yes, 1);

  void *runner = NULL;
  CALL_OK("mrt_model_runner_create", model, config, &runner);
  dyn_call("mrt_model_destroy", model); /* the runner keeps what it needs */

  const void *descs = NULL;
  size_t count = 0;
  CALL_OK("mrt_model_runner_execute_inputs", runner, &descs, &count);
  CHECK(count == 1 && strcmp(dyn_get_ptr(&data_desc, desc_at(descs, 0), DESC_NAME), "image") == 0,
        "execute inputs");
  CHECK(dyn_get_i64(&data_desc, desc_at(descs, 0), DESC_SIZE) == IMAGE * 4, "image size");
  CHECK(dyn_get_i32(&data_desc, desc_at(descs, 0), DESC_TYPE) == MRT_F32, "image type");
  CHECK(!dyn_get_bool(&data_desc, desc_at(descs, 0), DESC_HAS_DATA), "image has no PopEF data");
  CALL_OK("mrt_model_runner_execute_outputs", runner, &descs, &count);
  CHECK(count == 1 && strcmp(dyn_get_ptr(&data_desc, desc_at(descs, 0), DESC_NAME), "probs") == 0,
        "execute outputs");
  const int64_t *probs_shape = dyn_get_ptr(&data_desc, desc_at(descs, 0), DESC_SHAPE);
  CHECK(dyn_get_u64(&data_desc, desc_at(descs, 0), DESC_RANK) == 2 && probs_shape[1] == CLASSES,
        "probs shape");
  CALL_OK("mrt_model_runner_model_inputs", runner, &descs, &count);
  CHECK(count == 5, "model inputs: %zu", count);
  size_t with_data = 0;
  for (size_t i = 0; i < count; ++i) with_data += dyn_get_bool(&data_desc, desc_at(descs, i), DESC_HAS_DATA);
  CHECK(with_data == 4, "inputs with PopEF data: %zu", with_data);
  CALL_OK("mrt_model_runner_model_outputs", runner, &descs, &count);
  CHECK(count == 1, "model outputs: %zu", count);

  /* Synchronous. */
  float probs[CLASSES];
  views in = one_view("image", images[0], sizeof images[0]);
  views out = one_view("probs", probs, sizeof probs);
  CALL_OK("mrt_model_runner_execute", runner, in.bytes, in.count, out.bytes, out.count, 0u);
  expect_probs("sync", probs, expected[0]);

  /* Asynchronous, with an on_ready closure. */
  static float async_probs[CLASSES];
  ready_record ready = {{PTHREAD_MUTEX_INITIALIZER, 0}, 0, -1, pthread_self()};
  views async_in = one_view("image", images[1], sizeof images[1]);
  views async_out = one_view("probs", async_probs, sizeof async_probs);
  void *future = NULL;
  CALL_OK("mrt_model_runner_execute_async", runner, async_in.bytes, async_in.count, async_out.bytes,
          async_out.count, 0u, &future);
  CALL_OK("mrt_future_on_ready", future, ready_closure.code, &ready, free_closure.code);
  CHECK(dyn_call("mrt_future_wait", future, (int64_t)-1).i == OK, "async request failed: %s",
        (const char *)dyn_call("mrt_future_error_message", future).p);
  CHECK(dyn_call("mrt_future_is_ready", future).b, "future not ready after wait");
  int32_t request_status = -1;
  CALL_OK("mrt_future_status", future, &request_status);
  CHECK(request_status == OK, "request status %d", request_status);
  CHECK(strcmp(dyn_call("mrt_future_error_message", future).p, "") == 0, "message of a success");
  expect_probs("async", async_probs, expected[1]);

  /* on_ready on a finished future runs at once, on this thread. */
  ready_record inline_ready = {{PTHREAD_MUTEX_INITIALIZER, 0}, 0, -1, pthread_self()};
  CALL_OK("mrt_future_on_ready", future, ready_closure.code, &inline_ready, free_closure.code);
  CHECK(read_int(&inline_ready.base, &inline_ready.calls) == 1, "inline on_ready not called");
  CHECK(pthread_equal(inline_ready.last_thread, pthread_self()), "inline on_ready on another thread");
  CHECK(read_int(&inline_ready.base, &inline_ready.base.frees) == 1, "inline user_data not freed");
  dyn_call("mrt_future_destroy", future);

  /* Library-allocated outputs. */
  void *memory = NULL;
  CALL_OK("mrt_model_runner_execute_alloc", runner, in.bytes, in.count, 0u, &memory);
  size_t outputs = 0;
  CALL_OK("mrt_tensor_memory_count", memory, &outputs);
  CHECK(outputs == 1, "%zu outputs", outputs);
  unsigned char view[64];
  CALL_OK("mrt_tensor_memory_find", memory, "probs", view);
  CHECK(dyn_get_u64(&tensor_view, view, VIEW_SIZE) == sizeof probs, "output size");
  const float *allocated = dyn_get_ptr(&tensor_view, view, VIEW_DATA);
  CHECK((uintptr_t)allocated % 64 == 0, "output not 64-byte aligned");
  expect_probs("library-allocated", allocated, expected[0]);
  CALL_OK("mrt_tensor_memory_get", memory, (size_t)0, view);
  CHECK(strcmp(dyn_get_ptr(&tensor_view, view, VIEW_NAME), "probs") == 0, "output name");
  expect_error(dyn_call("mrt_tensor_memory_find", memory, "nope", view).i, NOT_FOUND, "'nope'");
  dyn_call("mrt_tensor_memory_destroy", memory);

  /* Bad requests: errors name the bad value; the runner keeps serving. */
  views unknown;
  memset(&unknown, 0, sizeof unknown);
  view_set(&unknown, 0, "image", images[0], sizeof images[0]);
  view_set(&unknown, 1, "imagee", images[0], sizeof images[0]);
  expect_error(dyn_call("mrt_model_runner_execute", runner, unknown.bytes, unknown.count, out.bytes,
                        out.count, 0u).i,
               NOT_FOUND, "'imagee'");
  views short_in = one_view("image", images[0], sizeof images[0] - 4);
  expect_error(dyn_call("mrt_model_runner_execute", runner, short_in.bytes, short_in.count, out.bytes,
                        out.count, 0u).i,
               INVALID_ARGUMENT, "3136");
  void *no_future = NULL;
  expect_error(dyn_call("mrt_model_runner_execute_async", runner, short_in.bytes, short_in.count,
                        out.bytes, out.count, 0u, &no_future).i,
               INVALID_ARGUMENT, "'image'");
  CHECK(no_future == NULL, "a failed call wrote its output");
  expect_error(dyn_call("mrt_model_runner_execute", runner, in.bytes, in.count, out.bytes, out.count, 2u).i,
               INVALID_ARGUMENT, "replica_id 2");
  memset(probs, 0, sizeof probs);
  CALL_OK("mrt_model_runner_execute", runner, in.bytes, in.count, out.bytes, out.count, 0u);
  expect_probs("after bad requests", probs, expected[0]);

  unsigned char times[64] = {0};
  dyn_set_size(&request_times, times, TIMES_SIZE, request_times.type.size);
  CALL_OK("mrt_model_runner_statistics_count", runner, 0u, times);
  CHECK(dyn_get_f64(&request_times, times, TIMES_REQUEST) >= 4.0, "requests counted: %f",
        dyn_get_f64(&request_times, times, TIMES_REQUEST));

  dyn_call("mrt_model_runner_destroy", runner); /* joins the device thread */
  CHECK(ready.calls == 1 && ready.last_status == OK, "on_ready: %d calls, status %d", ready.calls,
        ready.last_status);
  CHECK(ready.base.frees == 1, "on_ready user_data freed %d times", ready.base.frees);
  printf("mlp: argmax %d p=%.4f (sync, async and library-allocated match the reference)\n",
         argmax_f(probs, CLASSES), probs[argmax_f(probs, CLASSES)]);
}

static unsigned next_random(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

static void add_one_with_futures_and_device_errors(void) {
  char *paths[] = {model_path("add_one")};
  void *runner = NULL;
  CALL_OK("mrt_model_runner_create_from_files", paths, (size_t)1, (void *)NULL, &runner);
  enum { IN_FLIGHT = 4 };
  static float x[IN_FLIGHT][ADD_ONE_N], y[IN_FLIGHT][ADD_ONE_N];
  unsigned seed = 7;
  ready_record ready = {{PTHREAD_MUTEX_INITIALIZER, 0}, 0, -1, pthread_self()};
  for (int round = 0; round < 5; ++round) {
    void *futures[IN_FLIGHT];
    for (int k = 0; k < IN_FLIGHT; ++k) {
      for (int i = 0; i < ADD_ONE_N; ++i) x[k][i] = (float)(next_random(&seed) % 2000) / 250.0f - 4.0f;
      views in = one_view("x", x[k], sizeof x[k]), out = one_view("y", y[k], sizeof y[k]);
      if (k == 0) {
        CALL_OK("mrt_model_runner_execute", runner, in.bytes, in.count, out.bytes, out.count, 0u);
        futures[k] = NULL;
      } else {
        CALL_OK("mrt_model_runner_execute_async", runner, in.bytes, in.count, out.bytes, out.count, 0u,
                &futures[k]);
        CALL_OK("mrt_future_on_ready", futures[k], ready_closure.code, &ready, free_closure.code);
      }
    }
    for (int k = 1; k < IN_FLIGHT; ++k) {
      CHECK(dyn_call("mrt_future_wait", futures[k], (int64_t)-1).i == OK, "add_one request failed");
      dyn_call("mrt_future_destroy", futures[k]);
    }
    for (int k = 0; k < IN_FLIGHT; ++k)
      for (int i = 0; i < ADD_ONE_N; ++i)
        CHECK(y[k][i] == x[k][i] + 1.0f, "add_one: y[%d] = %f for x = %f", i, y[k][i], x[k][i]);
  }

  /* A simulated device fault reaches the future with its message. The
   * fault hits the next Main run, which may be the one after the run
   * already waiting for input. */
  expect_error(dyn_call("mrt_model_runner_insert_simulated_error", runner, SIMULATED_TILE_EXCEPTION, "nope",
                        0u).i,
               NOT_FOUND, "'nope'");
  CALL_OK("mrt_model_runner_insert_simulated_error", runner, SIMULATED_TILE_EXCEPTION, "Add", 0u);
  ready_record failed = {{PTHREAD_MUTEX_INITIALIZER, 0}, 0, -1, pthread_self()};
  int32_t status = OK;
  for (int attempt = 0; attempt < 3 && status == OK; ++attempt) {
    views in = one_view("x", x[0], sizeof x[0]), out = one_view("y", y[0], sizeof y[0]);
    void *future = NULL;
    CALL_OK("mrt_model_runner_execute_async", runner, in.bytes, in.count, out.bytes, out.count, 0u, &future);
    CALL_OK("mrt_future_on_ready", future, ready_closure.code, &failed, free_closure.code);
    status = dyn_call("mrt_future_wait", future, (int64_t)-1).i;
    if (status != OK) {
      const char *message = dyn_call("mrt_future_error_message", future).p;
      CHECK(status == DEVICE_ERROR, "status %d: %s", status, message);
      CHECK(strstr(message, "TILE_EXCEPTION") != NULL, "future message '%s'", message);
      printf("add_one: a simulated fault reaches the future: %s\n", message);
    }
    dyn_call("mrt_future_destroy", future); /* its on_ready may still be pending */
  }
  CHECK(status == DEVICE_ERROR, "no request failed after the simulated fault");

  dyn_call("mrt_model_runner_destroy", runner);
  CHECK(ready.calls == 3 * 5 && ready.last_status == OK && ready.base.frees == 3 * 5,
        "add_one on_ready: %d calls, %d frees", ready.calls, ready.base.frees);
  CHECK(failed.calls >= 1 && failed.calls == failed.base.frees && failed.last_status == DEVICE_ERROR,
        "failed on_ready: %d calls, %d frees, last status %d", failed.calls, failed.base.frees,
        failed.last_status);
  printf("add_one: y = x + 1 for %d requests, sync and async\n", 5 * IN_FLIGHT);
}

static void error_paths(void) {
  const char *missing = "/nonexistent/ffi-model.popef";
  void *model = NULL;
  expect_error(dyn_call("mrt_model_load", &missing, (size_t)1, &model).i, NOT_FOUND, missing);
  CHECK(model == NULL, "a failed load wrote its output");
  expect_error(dyn_call("mrt_model_load", &missing, (size_t)0, &model).i, INVALID_ARGUMENT, "");
  void *runner = NULL;
  expect_error(dyn_call("mrt_model_runner_create_from_files", &missing, (size_t)1, (void *)NULL, &runner).i,
               NOT_FOUND, missing);
  CHECK(dyn_call("mrt_future_wait", (void *)NULL, (int64_t)0).i == INVALID_ARGUMENT, "wait(NULL)");
  CHECK(!dyn_call("mrt_future_is_ready", (void *)NULL).b, "is_ready(NULL)");
  CHECK(strcmp(dyn_call("mrt_future_error_message", (void *)NULL).p, "") == 0, "error_message(NULL)");
  dyn_call("mrt_future_destroy", (void *)NULL);
  dyn_call("mrt_model_runner_destroy", (void *)NULL);
  dyn_call("mrt_model_destroy", (void *)NULL);
  dyn_call("mrt_tensor_memory_destroy", (void *)NULL);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_libffi_consumer LIBMRT_SO MODELS_DIR\n");
    return EXIT_FAILURE;
  }
  models_dir = argv[2];
  compute_layouts();
  dyn_open(argv[1]);
  dyn_closure_create(&log_closure, "v:ipp", on_log, NULL);
  dyn_closure_create(&ready_closure, "v:ip", on_ready, NULL);
  dyn_closure_create(&free_closure, "v:p", on_free, NULL);

  versions_and_status_strings();
  log_callback_closure();
  mlp_end_to_end();
  add_one_with_futures_and_device_errors();
  error_paths();

  /* Taking the log callback back frees its user_data, once. */
  CALL_OK("mrt_set_log_callback", (void *)NULL, (void *)NULL, (void *)NULL);
  CHECK(read_int(&log_state.base, &log_state.base.frees) == 1, "log user_data freed %d times",
        log_state.base.frees);

  dyn_print_coverage();
  const int distinct = dyn_distinct_functions_called();
  dyn_close();
  dyn_closure_destroy(&log_closure);
  dyn_closure_destroy(&ready_closure);
  dyn_closure_destroy(&free_closure);
  CHECK(distinct >= MIN_FUNCTIONS, "only %d distinct functions called, need %d", distinct, MIN_FUNCTIONS);
  for (size_t i = 0; i < sizeof spine / sizeof spine[0]; ++i)
    CHECK(dyn_was_called(spine[i]), "spine function %s was not called", spine[i]);
  printf("libffi consumer: ok (%d distinct functions, all %zu spine calls)\n", distinct,
         sizeof spine / sizeof spine[0]);
  return EXIT_SUCCESS;
}
