/* The PopEF writer through the C API: every example model (mrt-gen, 4
 * tiles) rebuilt with mrt_model_builder_* from its own metadata, executable
 * and data, written, loaded back and compared field by field and byte by
 * byte, then served by ModelRunner next to the original with the same
 * inputs (add_one against x + 1, mlp against the C reference). Also the
 * in-memory image (write_to_memory / load_from_memory) against the file
 * mrt_model_write writes, and a model split over two files. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mlp_reference.h"
#include "mrt_c.h"
#include "test_support.h"

/* ---- files ---- */

static char g_dir[1024]; /* a fresh directory for the files the tests write */

static int make_dir(void **state) {
  const char *tmp = getenv("TMPDIR");
  snprintf(g_dir, sizeof g_dir, "%s/mrt_model_writer_XXXXXX", tmp != NULL && *tmp ? tmp : "/tmp");
  assert_non_null(mkdtemp(g_dir));
  return test_private_system_setup(state);
}

static int remove_dir(void **state) {
  test_remove_directory(g_dir);
  return test_private_system_teardown(state);
}

/* "<g_dir>/<name>" into out. */
static void out_path(const char *name, char *out, size_t size) { snprintf(out, size, "%s/%s", g_dir, name); }

static mrt_model *load_paths(const char *const *paths, size_t num_paths) {
  mrt_model *model = NULL;
  if (mrt_model_load(paths, num_paths, &model) != MRT_OK) fail_msg("mrt_model_load: %s", mrt_last_error_message());
  return model;
}

static void *read_file(const char *path, size_t *out_size) {
  FILE *file = fopen(path, "rb");
  assert_non_null(file);
  assert_int_equal(fseek(file, 0, SEEK_END), 0);
  const long size = ftell(file);
  assert_true(size > 0);
  rewind(file);
  void *bytes = malloc((size_t)size);
  assert_non_null(bytes);
  assert_int_equal(fread(bytes, 1, (size_t)size, file), (size_t)size);
  fclose(file);
  *out_size = (size_t)size;
  return bytes;
}

/* ---- rebuilding a model from what the C API says about it ---- */

static mrt_anchor_info anchor_at(const mrt_model *model, size_t index) {
  mrt_anchor_info anchor = {0};
  anchor.struct_size = sizeof anchor;
  assert_int_equal(mrt_model_anchor(model, index, &anchor), MRT_OK);
  return anchor;
}

static mrt_model_info info_of(const mrt_model *model) {
  mrt_model_info info = {0};
  info.struct_size = sizeof info;
  assert_int_equal(mrt_model_get_info(model, &info), MRT_OK);
  return info;
}

/* The anchor's TensorData or FeedData blob, added to the builder as it is
 * in the model; returns 1 if there was one. */
static int copy_anchor_data(const mrt_model *model, const mrt_anchor_info *anchor, mrt_model_builder *builder) {
  const void *data = NULL;
  uint64_t size = 0, num_tensors = 0;
  if (mrt_model_tensor_data(model, anchor->name, &data, &size) == MRT_OK) {
    assert_int_equal(mrt_model_builder_add_tensor_data(builder, anchor->name, anchor->data_type, anchor->shape,
                                                       anchor->rank, data, size),
                     MRT_OK);
    return 1;
  }
  if (mrt_model_feed_data(model, anchor->name, &data, &size, &num_tensors) == MRT_OK) {
    assert_int_equal(mrt_model_builder_add_feed_data(builder, anchor->name, anchor->data_type, anchor->shape,
                                                     anchor->rank, data, size, num_tensors),
                     MRT_OK);
    return 1;
  }
  return 0;
}

/* A builder holding everything `model` has (its executable from
 * mrt_model_get_executable). */
static mrt_model_builder *builder_for(const mrt_model *model) {
  const mrt_model_info info = info_of(model);
  mrt_executable *executable = NULL;
  if (mrt_model_get_executable(model, &executable) != MRT_OK) {
    fail_msg("mrt_model_get_executable: %s", mrt_last_error_message());
  }
  mrt_model_builder *builder = NULL;
  assert_int_equal(mrt_model_builder_create(info.executable, executable, &builder), MRT_OK);
  mrt_executable_destroy(executable); /* the builder keeps it */

  assert_int_equal(mrt_model_builder_set_inference(builder, info.is_inference), MRT_OK);
  for (int32_t set = MRT_MODEL_ENGINE_OPTIONS; set <= MRT_MODEL_DEVICE_OPTIONS; ++set) {
    const size_t count = set == MRT_MODEL_ENGINE_OPTIONS ? info.num_engine_options : info.num_device_options;
    for (size_t i = 0; i < count; ++i) {
      const char *key = NULL, *value = NULL;
      assert_int_equal(mrt_model_option(model, set, i, &key, &value), MRT_OK);
      assert_int_equal(mrt_model_builder_set_option(builder, set, key, value), MRT_OK);
    }
  }
  for (size_t i = 0; i < info.num_programs; ++i) {
    uint64_t program = 0;
    const char *name = NULL;
    assert_int_equal(mrt_model_program(model, i, &program, &name), MRT_OK);
    assert_int_equal(mrt_model_builder_set_program_name(builder, program, name), MRT_OK);
  }
  for (int32_t phase = MRT_PHASE_LOAD; phase <= MRT_PHASE_SAVE; ++phase) {
    const uint64_t *programs = NULL;
    size_t count = 0;
    assert_int_equal(mrt_model_program_flow(model, phase, &programs, &count), MRT_OK);
    assert_int_equal(mrt_model_builder_set_program_flow(builder, phase, programs, count), MRT_OK);
  }
  size_t blobs = 0;
  for (size_t i = 0; i < info.num_anchors; ++i) {
    const mrt_anchor_info anchor = anchor_at(model, i);
    mrt_anchor_config config;
    mrt_anchor_config_init(&config);
    config.name = anchor.name;
    config.handle = anchor.handle;
    config.shape = anchor.shape;
    config.rank = anchor.rank;
    config.programs = anchor.programs;
    config.num_programs = anchor.num_programs;
    config.is_per_replica = anchor.is_per_replica;
    config.data_source = anchor.data_source;
    if (mrt_model_builder_add_anchor(builder, &config) != MRT_OK) {
      fail_msg("add_anchor %s: %s", anchor.name, mrt_last_error_message());
    }
    blobs += (size_t)copy_anchor_data(model, &anchor, builder);
  }
  /* Every blob of the examples belongs to an anchor. */
  assert_int_equal(blobs, info.num_tensor_data + info.num_feed_data);
  assert_int_equal(mrt_model_builder_set_seed_handle(builder, info.seed_handle), MRT_OK);
  return builder;
}

static mrt_model *build(mrt_model_builder *builder) {
  mrt_model *model = NULL;
  if (mrt_model_builder_build(builder, &model) != MRT_OK) fail_msg("build: %s", mrt_last_error_message());
  return model;
}

/* ---- comparing models ---- */

static void expect_same_anchor(const mrt_anchor_info *a, const mrt_anchor_info *b) {
  assert_string_equal(a->name, b->name);
  assert_string_equal(a->handle, b->handle);
  assert_int_equal(a->data_type, b->data_type);
  assert_int_equal(a->rank, b->rank);
  if (a->rank > 0) assert_memory_equal(a->shape, b->shape, a->rank * sizeof *a->shape);
  assert_int_equal(a->size_in_bytes, b->size_in_bytes);
  assert_int_equal(a->num_programs, b->num_programs);
  if (a->num_programs > 0) assert_memory_equal(a->programs, b->programs, a->num_programs * sizeof *a->programs);
  assert_int_equal(a->is_per_replica, b->is_per_replica);
  assert_int_equal(a->tensor_type, b->tensor_type);
  assert_int_equal(a->data_source, b->data_source);
  assert_int_equal(a->remote_buffer == NULL, b->remote_buffer == NULL);
  if (a->remote_buffer != NULL) assert_string_equal(a->remote_buffer, b->remote_buffer);
  assert_int_equal(a->remote_buffer_repeats, b->remote_buffer_repeats);
}

static void expect_same_bytes(const void *a, uint64_t a_size, const void *b, uint64_t b_size) {
  assert_int_equal(a_size, b_size);
  if (a_size > 0) assert_memory_equal(a, b, (size_t)a_size);
}

/* Metadata, anchors, program flow and map, options, executable and data. */
static void expect_same_model(const mrt_model *a, const mrt_model *b) {
  const mrt_model_info x = info_of(a), y = info_of(b);
  assert_string_equal(x.executable, y.executable);
  assert_int_equal(x.replication_factor, y.replication_factor);
  assert_int_equal(x.num_ipus, y.num_ipus);
  assert_int_equal(x.ipu_version, y.ipu_version);
  assert_int_equal(x.is_inference, y.is_inference);
  assert_string_equal(x.seed_handle, y.seed_handle);
  assert_string_equal(x.package_hash, y.package_hash);
  assert_int_equal(x.num_anchors, y.num_anchors);
  assert_int_equal(x.num_programs, y.num_programs);
  assert_int_equal(x.num_engine_options, y.num_engine_options);
  assert_int_equal(x.num_device_options, y.num_device_options);
  assert_int_equal(x.num_tensor_data, y.num_tensor_data);
  assert_int_equal(x.num_feed_data, y.num_feed_data);
  for (int32_t set = MRT_MODEL_ENGINE_OPTIONS; set <= MRT_MODEL_DEVICE_OPTIONS; ++set) {
    const size_t count = set == MRT_MODEL_ENGINE_OPTIONS ? x.num_engine_options : x.num_device_options;
    for (size_t i = 0; i < count; ++i) {
      const char *ka, *va, *kb, *vb;
      assert_int_equal(mrt_model_option(a, set, i, &ka, &va), MRT_OK);
      assert_int_equal(mrt_model_option(b, set, i, &kb, &vb), MRT_OK);
      assert_string_equal(ka, kb);
      assert_string_equal(va, vb);
    }
  }
  for (size_t i = 0; i < x.num_programs; ++i) {
    uint64_t pa, pb;
    const char *na, *nb;
    assert_int_equal(mrt_model_program(a, i, &pa, &na), MRT_OK);
    assert_int_equal(mrt_model_program(b, i, &pb, &nb), MRT_OK);
    assert_int_equal(pa, pb);
    assert_string_equal(na, nb);
  }
  for (int32_t phase = MRT_PHASE_LOAD; phase <= MRT_PHASE_SAVE; ++phase) {
    const uint64_t *pa, *pb;
    size_t ca, cb;
    assert_int_equal(mrt_model_program_flow(a, phase, &pa, &ca), MRT_OK);
    assert_int_equal(mrt_model_program_flow(b, phase, &pb, &cb), MRT_OK);
    expect_same_bytes(pa, ca * sizeof *pa, pb, cb * sizeof *pb);
  }
  for (size_t i = 0; i < x.num_anchors; ++i) {
    const mrt_anchor_info anchor = anchor_at(a, i), other = anchor_at(b, i);
    expect_same_anchor(&anchor, &other);
    const void *da, *db;
    uint64_t sa, sb, na, nb;
    if (mrt_model_tensor_data(a, anchor.name, &da, &sa) == MRT_OK) {
      assert_int_equal(mrt_model_tensor_data(b, anchor.name, &db, &sb), MRT_OK);
      expect_same_bytes(da, sa, db, sb);
      assert_int_equal((uintptr_t)db % 64, 0); /* aligned as from a file */
    }
    if (mrt_model_feed_data(a, anchor.name, &da, &sa, &na) == MRT_OK) {
      assert_int_equal(mrt_model_feed_data(b, anchor.name, &db, &sb, &nb), MRT_OK);
      expect_same_bytes(da, sa, db, sb);
      assert_int_equal(na, nb);
    }
  }
  const void *ea, *eb;
  uint64_t sa, sb;
  assert_int_equal(mrt_model_executable(a, &ea, &sa), MRT_OK);
  assert_int_equal(mrt_model_executable(b, &eb, &sb), MRT_OK);
  expect_same_bytes(ea, sa, eb, sb);
}

/* ---- serving ---- */

enum { MAX_TENSORS = 8, ROUNDS = 3 };

typedef struct {
  mrt_tensor_view views[MAX_TENSORS];
  size_t count;
} tensor_set;

/* Buffers for the runner's inputs that have no data in the model (filled
 * with values that suit their type) or for its outputs (zeroed). */
static tensor_set make_tensors(const mrt_model_runner *runner, int inputs, unsigned *seed) {
  const mrt_data_desc *descs = NULL;
  size_t count = 0;
  assert_int_equal(inputs ? mrt_model_runner_execute_inputs(runner, &descs, &count)
                          : mrt_model_runner_execute_outputs(runner, &descs, &count),
                   MRT_OK);
  tensor_set set = {0};
  for (size_t i = 0; i < count; ++i) {
    if (inputs && descs[i].popef_contains_tensor_data) continue;
    assert_true(set.count < MAX_TENSORS);
    const size_t size = (size_t)descs[i].size_in_bytes;
    unsigned char *data = calloc(size > 0 ? size : 1, 1);
    assert_non_null(data);
    if (inputs && descs[i].data_type == MRT_F32) {
      test_fill_random((float *)data, size / sizeof(float), seed, -2, 2);
    } else if (inputs) {
      /* Integers and flags: small values, so a predicate or an index means something. */
      for (size_t b = 0; b < size; ++b) data[b] = (unsigned char)(b % 4 == 0 ? rand_r(seed) % 2 : 0);
    }
    set.views[set.count++] = (mrt_tensor_view){descs[i].name, data, size};
  }
  return set;
}

static void free_tensors(tensor_set *set) {
  for (size_t i = 0; i < set->count; ++i) free(set->views[i].data);
}

static const mrt_tensor_view *find_view(const tensor_set *set, const char *name) {
  for (size_t i = 0; i < set->count; ++i) {
    if (strcmp(set->views[i].name, name) == 0) return &set->views[i];
  }
  fail_msg("no tensor named %s", name);
  return NULL;
}

/* The model-specific reference math, where the examples have one. */
static void expect_reference(const char *name, const mrt_model *model, const tensor_set *in, const tensor_set *out) {
  if (strcmp(name, "add_one") == 0) {
    const mrt_tensor_view *x = find_view(in, "x"), *y = find_view(out, "y");
    const float *xs = x->data, *ys = y->data;
    for (size_t i = 0; i < x->size_bytes / sizeof(float); ++i) assert_float_equal(ys[i], xs[i] + 1.0f, 1e-6);
  } else if (strcmp(name, "mlp") == 0) {
    const mlp_weights weights = mlp_weights_of(model);
    const float *images = find_view(in, "image")->data;
    const mrt_tensor_view *probs = find_view(out, "probs");
    const size_t batch = probs->size_bytes / (MLP_CLASSES * sizeof(float));
    for (size_t s = 0; s < batch; ++s) {
      double expected[MLP_CLASSES];
      mlp_reference(&weights, images + s * MLP_IMAGE, expected);
      const float *got = (const float *)probs->data + s * MLP_CLASSES;
      for (int c = 0; c < MLP_CLASSES; ++c) assert_float_equal(got[c], expected[c], 1e-4);
    }
  }
}

/* ROUNDS requests of the same inputs to both models: equal outputs, each
 * round (stateful models advance alike), and the reference math. */
static void expect_same_outputs(const char *name, const mrt_model *original, const mrt_model *rebuilt) {
  mrt_model_runner *a = test_small_runner_for_model(original), *b = test_small_runner_for_model(rebuilt);
  unsigned seed = 11;
  for (int round = 0; round < ROUNDS; ++round) {
    tensor_set in = make_tensors(a, 1, &seed);
    tensor_set out_a = make_tensors(a, 0, &seed), out_b = make_tensors(b, 0, &seed);
    assert_true(out_a.count > 0);
    assert_int_equal(mrt_model_runner_execute(a, in.views, in.count, out_a.views, out_a.count, 0), MRT_OK);
    assert_int_equal(mrt_model_runner_execute(b, in.views, in.count, out_b.views, out_b.count, 0), MRT_OK);
    for (size_t i = 0; i < out_a.count; ++i) {
      assert_string_equal(out_a.views[i].name, out_b.views[i].name);
      expect_same_bytes(out_a.views[i].data, out_a.views[i].size_bytes, out_b.views[i].data, out_b.views[i].size_bytes);
    }
    expect_reference(name, rebuilt, &in, &out_b);
    free_tensors(&in);
    free_tensors(&out_a);
    free_tensors(&out_b);
  }
  mrt_model_runner_destroy(a);
  mrt_model_runner_destroy(b);
}

/* ---- tests ---- */

static void round_trip(const char *name) {
  mrt_model *original = test_load_model("MRT_TEST_WRITER_MODELS", name);
  mrt_model_builder *builder = builder_for(original);
  mrt_model *built = build(builder);
  mrt_model_builder_destroy(builder); /* the model keeps what it needs */
  expect_same_model(original, built);

  char path[1200];
  out_path(name, path, sizeof path);
  assert_int_equal(mrt_model_write(built, path), MRT_OK);
  mrt_model_destroy(built);
  const char *paths[] = {path};
  mrt_model *reloaded = load_paths(paths, 1);
  expect_same_model(original, reloaded);
  expect_same_outputs(name, original, reloaded);
  mrt_model_destroy(reloaded);
  mrt_model_destroy(original);
}

static void add_one_round_trip(void **state) { (void)state; round_trip("add_one"); }
static void mlp_round_trip(void **state) { (void)state; round_trip("mlp"); }
static void stateful_round_trip(void **state) { (void)state; round_trip("stateful"); }
static void conditional_round_trip(void **state) { (void)state; round_trip("conditional"); }
static void remote_buffer_round_trip(void **state) { (void)state; round_trip("remote_buffer"); }
static void time_major_round_trip(void **state) { (void)state; round_trip("time_major"); }

/* A builder is reusable: changed and built again, the first model keeps
 * what it was built with. FeedData and engine options round trip too. */
static void builder_builds_again_with_changes(void **state) {
  (void)state;
  mrt_model *original = test_load_model("MRT_TEST_WRITER_MODELS", "add_one");
  mrt_model_builder *builder = builder_for(original);
  mrt_model *first = build(builder);

  const mrt_anchor_info x = anchor_at(original, 0);
  assert_string_equal(x.name, "x");
  enum { FEEDS = 3 };
  float feeds[FEEDS * 64];
  unsigned seed = 5;
  assert_true(sizeof feeds >= (size_t)x.size_in_bytes * FEEDS);
  test_fill_random(feeds, (size_t)x.size_in_bytes * FEEDS / sizeof(float), &seed, -1, 1);
  assert_int_equal(mrt_model_builder_add_feed_data(builder, "x_feed", MRT_F32, x.shape, x.rank, feeds,
                                                   (uint64_t)x.size_in_bytes * FEEDS, FEEDS),
                   MRT_OK);
  assert_int_equal(mrt_model_builder_set_option(builder, MRT_MODEL_ENGINE_OPTIONS, "debug.instrument", "true"),
                   MRT_OK);
  assert_int_equal(mrt_model_builder_set_program_name(builder, 0, "infer"), MRT_OK);
  assert_int_equal(mrt_model_builder_set_inference(builder, false), MRT_OK);
  mrt_model *second = build(builder);
  mrt_model_builder_destroy(builder);

  char path[1200];
  out_path("add_one_feed.popef", path, sizeof path);
  assert_int_equal(mrt_model_write(second, path), MRT_OK);
  mrt_model_destroy(second);
  const char *paths[] = {path};
  mrt_model *reloaded = load_paths(paths, 1);

  const mrt_model_info a = info_of(first), b = info_of(reloaded);
  assert_int_equal(a.num_feed_data, 0);
  assert_int_equal(b.num_feed_data, 1);
  assert_true(a.is_inference);
  assert_false(b.is_inference);
  assert_int_equal(b.num_engine_options, a.num_engine_options + 1);
  const void *data = NULL;
  uint64_t size = 0, count = 0;
  assert_int_equal(mrt_model_feed_data(reloaded, "x_feed", &data, &size, &count), MRT_OK);
  assert_int_equal(count, FEEDS);
  expect_same_bytes(data, size, feeds, (uint64_t)x.size_in_bytes * FEEDS);
  uint64_t program = 0;
  const char *name = NULL;
  assert_int_equal(mrt_model_program(first, 0, &program, &name), MRT_OK);
  assert_string_equal(name, "main");
  assert_int_equal(mrt_model_program(reloaded, 0, &program, &name), MRT_OK);
  assert_string_equal(name, "infer");
  mrt_model_destroy(reloaded);
  mrt_model_destroy(first);
  mrt_model_destroy(original);
}

/* write_to_memory gives the bytes of the file mrt_model_write writes;
 * load_from_memory reads them into an equal model that serves, after the
 * caller's buffer is gone. */
static void memory_image_equals_file(void **state) {
  (void)state;
  mrt_model *original = test_load_model("MRT_TEST_WRITER_MODELS", "mlp");
  char path[1200];
  out_path("mlp_file.popef", path, sizeof path);
  assert_int_equal(mrt_model_write(original, path), MRT_OK);
  size_t file_size = 0;
  void *file = read_file(path, &file_size);

  size_t size = 0;
  assert_int_equal(mrt_model_write_to_memory(original, NULL, 0, &size), MRT_OK);
  assert_int_equal(size, file_size);
  unsigned char *buffer = malloc(size + 3);
  assert_non_null(buffer);
  memset(buffer, 0xa5, size + 3);
  size_t written = 0;
  assert_int_equal(mrt_model_write_to_memory(original, buffer, size + 3, &written), MRT_OK);
  assert_int_equal(written, size);
  assert_memory_equal(buffer, file, size);
  for (size_t i = size; i < size + 3; ++i) assert_int_equal(buffer[i], 0xa5); /* nothing past the image */

  /* From an odd address: the copy realigns the data. */
  memmove(buffer + 1, buffer, size);
  mrt_model *loaded = NULL;
  assert_int_equal(mrt_model_load_from_memory(buffer + 1, size, &loaded), MRT_OK);
  memset(buffer, 0, size + 3);
  free(buffer);
  free(file);
  expect_same_model(original, loaded);
  expect_same_outputs("mlp", original, loaded);
  mrt_model_destroy(loaded);
  mrt_model_destroy(original);
}

/* The program in one file, the weights in another: loaded from both (in
 * either order) it is the same model; the program file alone is not one. */
static void split_files_load_back(void **state) {
  (void)state;
  mrt_model *original = test_load_model("MRT_TEST_WRITER_MODELS", "mlp");
  char program_path[1200], data_path[1200];
  out_path("mlp_program.popef", program_path, sizeof program_path);
  out_path("mlp_data.popef", data_path, sizeof data_path);
  assert_int_equal(mrt_model_write_split(original, program_path, data_path), MRT_OK);

  const char *both[] = {program_path, data_path}, *reversed[] = {data_path, program_path};
  mrt_model *loaded = load_paths(both, 2);
  expect_same_model(original, loaded);
  expect_same_outputs("mlp", original, loaded);
  mrt_model_destroy(loaded);
  loaded = load_paths(reversed, 2);
  expect_same_model(original, loaded);
  mrt_model_destroy(loaded);

  const char *program_only[] = {program_path};
  assert_int_equal(mrt_model_load(program_only, 1, &loaded), MRT_CORRUPT_MODEL);
  test_expect_contains(mrt_last_error_message(), "w1");
  const char *data_only[] = {data_path};
  assert_int_equal(mrt_model_load(data_only, 1, &loaded), MRT_CORRUPT_MODEL);
  mrt_model_destroy(original);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add_one_round_trip),
      cmocka_unit_test(mlp_round_trip),
      cmocka_unit_test(stateful_round_trip),
      cmocka_unit_test(conditional_round_trip),
      cmocka_unit_test(remote_buffer_round_trip),
      cmocka_unit_test(time_major_round_trip),
      cmocka_unit_test(builder_builds_again_with_changes),
      cmocka_unit_test(memory_image_equals_file),
      cmocka_unit_test(split_files_load_back),
  };
  return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
