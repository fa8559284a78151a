/* Building graphs through the C API: targets, tensors and views, tile
 * mapping, codelet discovery, vertices, host handles, programs and compile,
 * and bad input for every kind of call (NULL, ids of another graph or of the
 * wrong kind, out-of-range tiles, unknown codelets and fields, type and shape
 * mismatches, unmapped variables, programs containing themselves, writing to
 * constants, compiling twice, changing a compiled graph). Every failure must
 * give the exact status and a message naming the bad value, and leave the
 * graph usable. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

#define F32 MRT_F32

static void expect_error(mrt_status status, mrt_status expected, const char *needle) {
  assert_int_equal(status, expected);
  test_expect_contains(mrt_last_error_message(), needle);
}

static mrt_graph *small_graph(void) {
  mrt_target target;
  assert_int_equal(mrt_target_init("ipu-model-small", 1, &target), MRT_OK);
  mrt_graph *graph = NULL;
  assert_int_equal(mrt_graph_create(&target, 1, &graph), MRT_OK);
  assert_non_null(graph);
  return graph;
}

static mrt_tensor variable(mrt_graph *g, int32_t type, uint64_t rows, uint64_t cols, const char *name) {
  const uint64_t shape[] = {rows, cols};
  mrt_tensor t = 0;
  assert_int_equal(mrt_graph_add_variable(g, type, shape, 2, name, &t), MRT_OK);
  assert_true(t != 0);
  return t;
}

static char *hex(uint64_t id) {
  static char buffer[4][32];
  static int next;
  char *b = buffer[next++ % 4];
  snprintf(b, sizeof buffer[0], "0x%llx", (unsigned long long)id);
  return b;
}

static void test_targets(void **state) {
  (void)state;
  mrt_target t;
  assert_int_equal(mrt_target_init("GC200", 2, &t), MRT_OK);
  assert_int_equal(t.struct_size, sizeof(mrt_target));
  assert_string_equal(t.name, "GC200");
  assert_int_equal(t.ipu_version, 2);
  assert_int_equal(t.num_ipus, 2);
  assert_int_equal(t.tiles_per_ipu, 1472);
  assert_int_equal(mrt_target_init("c600", 1, &t), MRT_OK);
  assert_int_equal(t.ipu_version, 21);
  assert_int_equal(mrt_target_init("ipu-model-small", 1, &t), MRT_OK);
  assert_int_equal(t.tiles_per_ipu, 4);

  expect_error(mrt_target_init("gc300", 1, &t), MRT_NOT_FOUND, "gc300");
  test_expect_contains(mrt_last_error_message(), "ipu-model-small");
  expect_error(mrt_target_init("bow", 0, &t), MRT_INVALID_ARGUMENT, "num_ipus is 0");
  expect_error(mrt_target_init("bow", 65, &t), MRT_INVALID_ARGUMENT, "65");
  expect_error(mrt_target_init(NULL, 1, &t), MRT_INVALID_ARGUMENT, "system");
  expect_error((mrt_target_init)("bow", 1, NULL), MRT_INVALID_ARGUMENT, "out_target");

  /* Custom rates round-trip through a graph; malformed ones name the field. */
  mrt_graph *g = NULL;
  assert_int_equal(mrt_target_init("bow", 1, &t), MRT_OK);
  t.tiles_per_ipu = 16;
  t.clock_hz = 2e9;
  assert_int_equal(mrt_graph_create(&t, 3, &g), MRT_OK);
  mrt_target back;
  back.struct_size = sizeof back;
  assert_int_equal(mrt_graph_get_target(g, &back), MRT_OK);
  assert_int_equal(back.tiles_per_ipu, 16);
  assert_true(back.clock_hz == 2e9);
  assert_string_equal(back.name, "Bow");
  uint32_t replicas = 0;
  assert_int_equal(mrt_graph_replication_factor(g, &replicas), MRT_OK);
  assert_int_equal(replicas, 3);
  mrt_graph_destroy(g);

  mrt_graph *bad = NULL;
  t.tiles_per_ipu = 0;
  expect_error(mrt_graph_create(&t, 1, &bad), MRT_INVALID_ARGUMENT, "tiles_per_ipu is 0");
  t.tiles_per_ipu = 4;
  t.exchange_bytes_per_cycle = 0;
  expect_error(mrt_graph_create(&t, 1, &bad), MRT_INVALID_ARGUMENT, "exchange_bytes_per_cycle");
  t.exchange_bytes_per_cycle = 24;
  t.ipu_version = 3;
  expect_error(mrt_graph_create(&t, 1, &bad), MRT_INVALID_ARGUMENT, "ipu_version is 3");
  t.ipu_version = 2;
  expect_error(mrt_graph_create(&t, 0, &bad), MRT_INVALID_ARGUMENT, "replication_factor is 0");
  expect_error(mrt_graph_create(&t, 1, NULL), MRT_INVALID_ARGUMENT, "out");
  assert_null(bad);

  /* NULL target: one GC200. */
  assert_int_equal(mrt_graph_create(NULL, 1, &g), MRT_OK);
  assert_int_equal(mrt_graph_get_target(g, &back), MRT_OK);
  assert_int_equal(back.tiles_per_ipu, 1472);
  mrt_graph_destroy(g);
  mrt_graph_destroy(NULL);
  expect_error(mrt_graph_get_target(NULL, &back), MRT_INVALID_ARGUMENT, "graph");
  expect_error(mrt_graph_replication_factor(NULL, &replicas), MRT_INVALID_ARGUMENT, "graph");
}

static void test_tensors_and_views(void **state) {
  (void)state;
  mrt_graph *g = small_graph();
  mrt_tensor x = variable(g, F32, 4, 6, "x");
  mrt_tensor_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_graph_tensor_info(g, x, &info), MRT_OK);
  assert_int_equal(info.data_type, MRT_F32);
  assert_int_equal(info.rank, 2);
  assert_int_equal(info.shape[0], 4);
  assert_int_equal(info.shape[1], 6);
  assert_int_equal(info.num_elements, 24);
  assert_int_equal(info.num_bytes, 96);
  assert_true(info.is_contiguous);
  assert_false(info.is_constant);

  mrt_tensor s = 0, i = 0, r = 0, f = 0, tr = 0, c = 0;
  assert_int_equal(mrt_graph_slice(g, x, 1, 3, 1, &s), MRT_OK);
  assert_int_equal(mrt_graph_tensor_info(g, s, &info), MRT_OK);
  assert_int_equal(info.shape[0], 4);
  assert_int_equal(info.shape[1], 2);
  assert_false(info.is_contiguous);
  assert_int_equal(mrt_graph_index(g, x, 2, &i), MRT_OK);
  assert_int_equal(mrt_graph_tensor_info(g, i, &info), MRT_OK);
  assert_int_equal(info.rank, 1);
  assert_int_equal(info.shape[0], 6);
  const uint64_t shape3[] = {2, 3, 4};
  assert_int_equal(mrt_graph_reshape(g, x, shape3, 3, &r), MRT_OK);
  assert_int_equal(mrt_graph_tensor_info(g, r, &info), MRT_OK);
  assert_int_equal(info.rank, 3);
  assert_int_equal(mrt_graph_flatten(g, r, &f), MRT_OK);
  assert_int_equal(mrt_graph_tensor_info(g, f, &info), MRT_OK);
  assert_int_equal(info.shape[0], 24);
  assert_int_equal(mrt_graph_transpose(g, x, &tr), MRT_OK);
  assert_int_equal(mrt_graph_tensor_info(g, tr, &info), MRT_OK);
  assert_int_equal(info.shape[0], 6);
  assert_int_equal(info.shape[1], 4);
  const mrt_tensor parts[] = {x, x};
  assert_int_equal(mrt_graph_concat(g, parts, 2, 0, &c), MRT_OK);
  assert_int_equal(mrt_graph_tensor_info(g, c, &info), MRT_OK);
  assert_int_equal(info.shape[0], 8);

  /* Constants, and scalars (rank 0, shape NULL). */
  const float data[3] = {1, 2, 3};
  const uint64_t three = 3;
  mrt_tensor k = 0, k2 = 0, sc = 0;
  assert_int_equal(mrt_graph_add_constant(g, F32, &three, 1, data, sizeof data, "k", &k), MRT_OK);
  assert_int_equal(mrt_graph_tensor_info(g, k, &info), MRT_OK);
  assert_true(info.is_constant);
  assert_int_equal(mrt_graph_add_constant_filled(g, MRT_S32, NULL, 0, 7, "seven", &k2), MRT_OK);
  assert_int_equal(mrt_graph_tensor_info(g, k2, &info), MRT_OK);
  assert_int_equal(info.rank, 0);
  assert_null(info.shape);
  assert_int_equal(info.num_elements, 1);
  assert_int_equal(mrt_graph_add_variable(g, MRT_U8, NULL, 0, NULL, &sc), MRT_OK);

  /* Bad input: each names the value, none writes out. */
  mrt_tensor out = 0;
  const uint64_t five[] = {5, 5};
  expect_error(mrt_graph_reshape(g, x, five, 2, &out), MRT_INVALID_ARGUMENT, "[5, 5] (25 elements)");
  expect_error(mrt_graph_slice(g, x, 2, 7, 1, &out), MRT_INVALID_ARGUMENT, "[2, 7)");
  expect_error(mrt_graph_slice(g, x, 0, 1, 2, &out), MRT_INVALID_ARGUMENT, "dim 2");
  expect_error(mrt_graph_index(g, x, 4, &out), MRT_INVALID_ARGUMENT, "index 4");
  expect_error(mrt_graph_transpose(g, r, &out), MRT_INVALID_ARGUMENT, "rank 2");
  mrt_tensor y = variable(g, F32, 4, 5, "y");
  const mrt_tensor mismatched[] = {x, y};
  expect_error(mrt_graph_concat(g, mismatched, 2, 0, &out), MRT_INVALID_ARGUMENT, "tensors[1]");
  test_expect_contains(mrt_last_error_message(), "[4, 5]");
  const mrt_tensor mixed[] = {x, variable(g, MRT_S32, 4, 6, "z")};
  expect_error(mrt_graph_concat(g, mixed, 2, 0, &out), MRT_INVALID_ARGUMENT, "S32");
  expect_error(mrt_graph_concat(g, parts, 0, 0, &out), MRT_INVALID_ARGUMENT, "num_tensors");
  expect_error(mrt_graph_add_variable(g, MRT_F64, five, 2, "d", &out), MRT_INVALID_ARGUMENT, "64-bit");
  expect_error(mrt_graph_add_variable(g, 99, five, 2, "d", &out), MRT_INVALID_ARGUMENT, "99");
  expect_error(mrt_graph_add_variable(g, F32, NULL, 2, "d", &out), MRT_INVALID_ARGUMENT, "shape");
  expect_error(mrt_graph_add_variable(g, F32, five, 2, "d", NULL), MRT_INVALID_ARGUMENT, "out");
  expect_error(mrt_graph_add_variable(NULL, F32, five, 2, "d", &out), MRT_INVALID_ARGUMENT, "graph");
  expect_error(mrt_graph_add_constant(g, F32, &three, 1, data, 11, "k", &out), MRT_INVALID_ARGUMENT,
               "num_bytes is 11");
  expect_error(mrt_graph_tensor_info(g, x, NULL), MRT_INVALID_ARGUMENT, "out_info");
  assert_int_equal(out, 0);

  /* Ids: 0, wrong kind, another graph, out of range. */
  expect_error(mrt_graph_tensor_info(g, 0, &info), MRT_INVALID_ARGUMENT, "is 0");
  mrt_compute_set cs = 0;
  assert_int_equal(mrt_graph_add_compute_set(g, "cs", &cs), MRT_OK);
  expect_error(mrt_graph_tensor_info(g, cs, &info), MRT_INVALID_ARGUMENT, "is a compute set, not a tensor");
  test_expect_contains(mrt_last_error_message(), hex(cs));
  mrt_graph *other = small_graph();
  mrt_tensor foreign = variable(other, F32, 2, 2, "foreign");
  expect_error(mrt_graph_tensor_info(g, foreign, &info), MRT_INVALID_ARGUMENT, "belongs to graph");
  test_expect_contains(mrt_last_error_message(), hex(foreign));
  expect_error(mrt_graph_tensor_info(g, x + 1000, &info), MRT_INVALID_ARGUMENT, "is not a tensor of graph");
  mrt_graph_destroy(other);
  /* A stale id of a destroyed graph is still refused by its serial. */
  expect_error(mrt_graph_tensor_info(g, foreign, &info), MRT_INVALID_ARGUMENT, "belongs to graph");

  /* Still usable. */
  assert_int_equal(mrt_graph_tensor_info(g, x, &info), MRT_OK);
  mrt_graph_destroy(g);
}

static void test_tile_mapping(void **state) {
  (void)state;
  mrt_graph *g = small_graph();
  mrt_tensor x = variable(g, F32, 4, 6, "x");
  assert_int_equal(mrt_graph_map_linearly(g, x, 6, 0, 0), MRT_OK);
  size_t count = 0;
  assert_int_equal(mrt_graph_tile_mapping(g, x, NULL, 0, &count), MRT_OK);
  assert_int_equal(count, 4);
  mrt_tile_interval iv[4];
  assert_int_equal(mrt_graph_tile_mapping(g, x, iv, 4, &count), MRT_OK);
  for (size_t i = 0; i < 4; ++i) {
    assert_int_equal(iv[i].begin, 6 * i);
    assert_int_equal(iv[i].end, 6 * i + 6);
    assert_int_equal(iv[i].tile, i);
  }
  mrt_tensor row = 0;
  assert_int_equal(mrt_graph_index(g, x, 1, &row), MRT_OK);
  assert_int_equal(mrt_graph_set_tile_mapping(g, row, 3), MRT_OK);
  assert_int_equal(mrt_graph_tile_mapping(g, row, iv, 1, &count), MRT_OK);
  assert_int_equal(count, 1);
  assert_int_equal(iv[0].tile, 3);

  expect_error(mrt_graph_set_tile_mapping(g, x, 4), MRT_INVALID_ARGUMENT, "tile 4");
  test_expect_contains(mrt_last_error_message(), "4 tiles");
  expect_error(mrt_graph_map_linearly(g, x, 0, 0, 0), MRT_INVALID_ARGUMENT, "grain_size");
  expect_error(mrt_graph_map_linearly(g, x, 1, 2, 3), MRT_INVALID_ARGUMENT, "[2, 5)");
  expect_error(mrt_graph_map_linearly(g, x, 1, 9, 0), MRT_INVALID_ARGUMENT, "first_tile 9");
  expect_error(mrt_graph_tile_mapping(g, x, NULL, 2, &count), MRT_INVALID_ARGUMENT, "intervals");
  expect_error(mrt_graph_tile_mapping(g, x, iv, 4, NULL), MRT_INVALID_ARGUMENT, "out_count");
  mrt_graph_destroy(g);
}

static void test_codelets(void **state) {
  (void)state;
  const size_t n = mrt_codelet_count();
  assert_true(n >= 30);
  int found_matmul = 0, found_fill = 0;
  for (size_t i = 0; i < n; ++i) {
    mrt_codelet_info info;
    info.struct_size = sizeof info;
    assert_int_equal(mrt_codelet_get_info(i, &info), MRT_OK);
    assert_non_null(info.name);
    assert_true(strlen(info.description) > 0);
    for (size_t f = 0; f < info.num_fields; ++f) {
      const char *name = NULL;
      int32_t dir = -1;
      assert_int_equal(mrt_codelet_field(i, f, &name, &dir), MRT_OK);
      assert_true(dir >= MRT_FIELD_IN && dir <= MRT_FIELD_INOUT);
    }
    if (strcmp(info.name, "MatMul") == 0) {
      found_matmul = 1;
      assert_int_equal(info.num_fields, 3);
      const char *name = NULL;
      int32_t dir = -1;
      assert_int_equal(mrt_codelet_field(i, 2, &name, &dir), MRT_OK);
      assert_string_equal(name, "out");
      assert_int_equal(dir, MRT_FIELD_INOUT);
      expect_error(mrt_codelet_field(i, 3, &name, &dir), MRT_INVALID_ARGUMENT, "field 3");
    }
    if (strcmp(info.name, "Fill") == 0) {
      found_fill = 1;
      assert_int_equal(info.num_attributes, 1);
      const char *name = NULL;
      const double *defaults = NULL;
      size_t num = 0;
      assert_int_equal(mrt_codelet_attribute(i, 0, &name, &defaults, &num), MRT_OK);
      assert_string_equal(name, "value");
      assert_int_equal(num, 1);
      assert_true(defaults[0] == 0.0);
      expect_error(mrt_codelet_attribute(i, 1, &name, &defaults, &num), MRT_INVALID_ARGUMENT, "attribute 1");
    }
  }
  assert_true(found_matmul && found_fill);
  mrt_codelet_info info;
  info.struct_size = sizeof info;
  char text[32];
  snprintf(text, sizeof text, "%zu", n);
  expect_error(mrt_codelet_get_info(n, &info), MRT_INVALID_ARGUMENT, text);
  expect_error(mrt_codelet_get_info(0, NULL), MRT_INVALID_ARGUMENT, "out_info");
}

static void test_vertices(void **state) {
  (void)state;
  mrt_graph *g = small_graph();
  mrt_tensor x = variable(g, F32, 1, 4, "x");
  mrt_tensor y = variable(g, F32, 1, 4, "y");
  assert_int_equal(mrt_graph_set_tile_mapping(g, x, 1), MRT_OK);
  assert_int_equal(mrt_graph_set_tile_mapping(g, y, 1), MRT_OK);
  mrt_compute_set cs = 0;
  mrt_vertex v = 0, fill = 0, bad = 0;
  assert_int_equal(mrt_graph_add_compute_set(g, "cs", &cs), MRT_OK);
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Relu", 1, &v), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, v, "in", x), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, v, "out", y), MRT_OK);
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Fill", 1, &fill), MRT_OK);
  const double value = 2.5;
  assert_int_equal(mrt_graph_set_vertex_attribute(g, fill, "value", &value, 1), MRT_OK);
  assert_int_equal(mrt_graph_set_vertex_attribute(g, fill, "value", NULL, 0), MRT_OK);

  expect_error(mrt_graph_add_vertex(g, cs, "relu", 1, &bad), MRT_NOT_FOUND, "did you mean 'Relu'");
  expect_error(mrt_graph_add_vertex(g, cs, "Frobnicate", 1, &bad), MRT_NOT_FOUND, "Frobnicate");
  test_expect_contains(mrt_last_error_message(), "MatMul");
  expect_error(mrt_graph_add_vertex(g, cs, "Relu", 4, &bad), MRT_INVALID_ARGUMENT, "tile 4");
  test_expect_contains(mrt_last_error_message(), "4 tiles");
  expect_error(mrt_graph_add_vertex(g, x, "Relu", 0, &bad), MRT_INVALID_ARGUMENT, "is a tensor, not a compute set");
  expect_error(mrt_graph_add_vertex(g, cs, NULL, 0, &bad), MRT_INVALID_ARGUMENT, "codelet");
  expect_error(mrt_graph_connect(g, v, "input", x), MRT_NOT_FOUND, "'input'");
  test_expect_contains(mrt_last_error_message(), "in, out");
  expect_error(mrt_graph_connect(g, x, "in", x), MRT_INVALID_ARGUMENT, "not a vertex");
  expect_error(mrt_graph_set_vertex_attribute(g, fill, "colour", &value, 1), MRT_NOT_FOUND, "'colour'");
  test_expect_contains(mrt_last_error_message(), "value");
  expect_error(mrt_graph_set_vertex_attribute(g, fill, "value", NULL, 1), MRT_INVALID_ARGUMENT, "values");
  /* A vertex output on a constant. */
  mrt_tensor k = 0;
  const uint64_t four = 4;
  assert_int_equal(mrt_graph_add_constant_filled(g, F32, &four, 1, 1, "ones", &k), MRT_OK);
  expect_error(mrt_graph_connect(g, fill, "out", k), MRT_INVALID_ARGUMENT, "'ones'");
  test_expect_contains(mrt_last_error_message(), "constant");
  assert_int_equal(bad, 0);
  mrt_graph_destroy(g);
}

static void test_host_handles(void **state) {
  (void)state;
  mrt_graph *g = small_graph();
  mrt_tensor x = variable(g, F32, 2, 2, "x");
  mrt_stream in = 0, out = 0, dup = 0;
  mrt_remote_buffer rb = 0;
  assert_int_equal(mrt_graph_add_host_to_device_fifo(g, "in", F32, 4, &in), MRT_OK);
  assert_int_equal(mrt_graph_add_device_to_host_fifo(g, "out", F32, 4, &out), MRT_OK);
  assert_int_equal(mrt_graph_add_remote_buffer(g, "rb", F32, 4, 3, &rb), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "xw", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "xr", x), MRT_OK);
  expect_error(mrt_graph_add_host_to_device_fifo(g, "in", F32, 4, &dup), MRT_INVALID_ARGUMENT, "'in'");
  expect_error(mrt_graph_add_host_to_device_fifo(g, "", F32, 4, &dup), MRT_INVALID_ARGUMENT, "empty");
  expect_error(mrt_graph_add_host_to_device_fifo(g, NULL, F32, 4, &dup), MRT_INVALID_ARGUMENT, "handle");
  expect_error(mrt_graph_add_host_to_device_fifo(g, "z", F32, 0, &dup), MRT_INVALID_ARGUMENT, "num_elements is 0");
  expect_error(mrt_graph_add_remote_buffer(g, "rb2", F32, 4, 0, &dup), MRT_INVALID_ARGUMENT, "repeats 0");
  mrt_tensor k = 0;
  assert_int_equal(mrt_graph_add_constant_filled(g, F32, NULL, 0, 1, "one", &k), MRT_OK);
  expect_error(mrt_graph_create_host_write(g, "kw", k), MRT_INVALID_ARGUMENT, "'one'");
  expect_error(mrt_graph_add_function(g, x, &dup), MRT_INVALID_ARGUMENT, "is a tensor, not a program");
  assert_int_equal(dup, 0);
  mrt_graph_destroy(g);
}

static void test_programs_bad_input(void **state) {
  (void)state;
  mrt_graph *g = small_graph();
  mrt_tensor x = variable(g, F32, 2, 2, "x");
  mrt_tensor n = variable(g, MRT_S32, 2, 2, "n");
  mrt_tensor k = 0, flag = 0;
  const uint64_t four = 4;
  assert_int_equal(mrt_graph_add_constant_filled(g, F32, &four, 1, 1, "ones", &k), MRT_OK);
  assert_int_equal(mrt_graph_add_variable(g, MRT_BOOL, NULL, 0, "flag", &flag), MRT_OK);
  mrt_program seq = 0, inner = 0, copy = 0, p = 0;
  assert_int_equal(mrt_program_sequence(g, NULL, 0, "main", &seq), MRT_OK);
  assert_int_equal(mrt_program_sequence(g, &seq, 1, "inner", &inner), MRT_OK);

  /* A program containing itself, directly, through a child or a function. */
  expect_error(mrt_program_sequence_add(g, seq, seq), MRT_INVALID_ARGUMENT, "contain itself");
  test_expect_contains(mrt_last_error_message(), hex(seq));
  expect_error(mrt_program_sequence_add(g, seq, inner), MRT_INVALID_ARGUMENT, "contain itself");
  mrt_function f = 0;
  mrt_program call = 0;
  assert_int_equal(mrt_graph_add_function(g, seq, &f), MRT_OK);
  assert_int_equal(mrt_program_call(g, f, "call", &call), MRT_OK);
  expect_error(mrt_program_sequence_add(g, seq, call), MRT_INVALID_ARGUMENT, "contain itself");
  mrt_program sw = 0;
  mrt_tensor ctrl = 0;
  assert_int_equal(mrt_graph_add_variable(g, MRT_S32, NULL, 0, "ctrl", &ctrl), MRT_OK);
  assert_int_equal(mrt_program_switch(g, ctrl, 0, "sw", &sw), MRT_OK);
  assert_int_equal(mrt_program_switch_add_case(g, sw, 1, seq), MRT_OK);
  expect_error(mrt_program_switch_add_case(g, sw, 1, inner), MRT_INVALID_ARGUMENT, "already has a case 1");
  expect_error(mrt_program_switch_add_case(g, sw, 2, sw), MRT_INVALID_ARGUMENT, "contain itself");
  expect_error(mrt_program_switch_add_case(g, seq, 2, inner), MRT_INVALID_ARGUMENT, "not a Switch");
  expect_error(mrt_program_sequence_add(g, sw, inner), MRT_INVALID_ARGUMENT, "not a Sequence");
  expect_error(mrt_program_switch(g, x, 0, "sw", &p), MRT_INVALID_ARGUMENT, "scalar");
  expect_error(mrt_program_switch(g, flag, 0, "sw", &p), MRT_INVALID_ARGUMENT, "S32 or U32");

  /* Copies: types, counts, constants, stream directions, slots. */
  expect_error(mrt_program_copy(g, x, n, "c", &copy), MRT_INVALID_ARGUMENT, "'n'");
  expect_error(mrt_program_copy(g, x, k, "c", &copy), MRT_INVALID_ARGUMENT, "'ones'");
  test_expect_contains(mrt_last_error_message(), "constant");
  assert_int_equal(mrt_program_copy(g, k, x, "c", &copy), MRT_OK);
  mrt_stream in = 0, out = 0;
  mrt_remote_buffer rb = 0;
  assert_int_equal(mrt_graph_add_host_to_device_fifo(g, "in", F32, 4, &in), MRT_OK);
  assert_int_equal(mrt_graph_add_device_to_host_fifo(g, "out", F32, 4, &out), MRT_OK);
  assert_int_equal(mrt_graph_add_remote_buffer(g, "rb", F32, 4, 2, &rb), MRT_OK);
  expect_error(mrt_program_copy_from_stream(g, out, x, "c", &p), MRT_INVALID_ARGUMENT, "device-to-host");
  expect_error(mrt_program_copy_from_stream(g, in, k, "c", &p), MRT_INVALID_ARGUMENT, "constant");
  expect_error(mrt_program_copy_from_stream(g, in, n, "c", &p), MRT_INVALID_ARGUMENT, "stream 'in'");
  expect_error(mrt_program_copy_to_stream(g, x, in, "c", &p), MRT_INVALID_ARGUMENT, "host-to-device");
  expect_error(mrt_program_copy_from_remote_buffer(g, rb, x, 2, 0, "c", &p), MRT_INVALID_ARGUMENT, "slot 2");
  expect_error(mrt_program_copy_to_remote_buffer(g, x, rb, 0, x, "c", &p), MRT_INVALID_ARGUMENT, "slot_tensor");
  expect_error(mrt_program_copy_from_remote_buffer(g, in, x, 0, 0, "c", &p), MRT_INVALID_ARGUMENT,
               "is a stream, not a remote buffer");

  /* Control flow. */
  expect_error(mrt_program_if(g, x, seq, 0, "if", &p), MRT_INVALID_ARGUMENT, "scalar");
  expect_error(mrt_program_repeat_while(g, seq, x, seq, true, "w", &p), MRT_INVALID_ARGUMENT, "predicate");
  expect_error(mrt_program_sync(g, 3, "s", &p), MRT_INVALID_ARGUMENT, "sync_type 3");
  expect_error(mrt_program_repeat(g, 3, x, "r", &p), MRT_INVALID_ARGUMENT, "body");
  expect_error(mrt_program_call(g, seq, "c", &p), MRT_INVALID_ARGUMENT, "not a function");
  expect_error(mrt_program_execute(g, seq, "e", &p), MRT_INVALID_ARGUMENT, "not a compute set");
  expect_error(mrt_program_sequence(g, NULL, 2, "s", &p), MRT_INVALID_ARGUMENT, "programs");
  const mrt_program list[] = {seq, x};
  expect_error(mrt_program_sequence(g, list, 2, "s", &p), MRT_INVALID_ARGUMENT, "programs[1]");
  expect_error(mrt_program_write_undef(g, 0, "u", &p), MRT_INVALID_ARGUMENT, "tensor");
  expect_error(mrt_program_print_tensor(g, "t", x, NULL), MRT_INVALID_ARGUMENT, "out");
  assert_int_equal(p, 0);
  /* The valid ones. */
  assert_int_equal(mrt_program_sync(g, MRT_SYNC_GLOBAL, "s", &p), MRT_OK);
  assert_int_equal(mrt_program_write_undef(g, x, "u", &p), MRT_OK);
  assert_int_equal(mrt_program_print_tensor(g, "x", x, &p), MRT_OK);
  assert_int_equal(mrt_program_if(g, flag, seq, 0, "if", &p), MRT_OK);
  assert_int_equal(mrt_program_repeat_while(g, seq, flag, inner, false, "w", &p), MRT_OK);
  mrt_graph_destroy(g);
}

static int g_progress_calls, g_freed;
static void on_progress(int32_t step, int32_t total, void *user_data) {
  assert_true(step >= 0 && step <= total);
  assert_ptr_equal(user_data, &g_progress_calls);
  ++g_progress_calls;
}
static void on_free(void *user_data) {
  assert_ptr_equal(user_data, &g_progress_calls);
  ++g_freed;
}

static void test_compile(void **state) {
  (void)state;
  mrt_graph *g = small_graph();
  mrt_tensor x = variable(g, F32, 4, 4, "x");
  mrt_tensor y = variable(g, F32, 4, 4, "unmapped_y");
  assert_int_equal(mrt_graph_map_linearly(g, x, 4, 0, 0), MRT_OK);
  mrt_program copy = 0;
  assert_int_equal(mrt_program_copy(g, x, y, "copy", &copy), MRT_OK);
  mrt_executable *exe = NULL;

  /* Unmapped variable: named; user_data freed once although it failed. */
  g_freed = 0;
  expect_error(mrt_graph_compile(g, &copy, 1, NULL, on_progress, &g_progress_calls, on_free, &exe),
               MRT_INVALID_ARGUMENT, "unmapped_y");
  assert_int_equal(g_freed, 1);
  assert_null(exe);
  /* Bad arguments are also refused with user_data freed. */
  expect_error(mrt_graph_compile(NULL, &copy, 1, NULL, on_progress, &g_progress_calls, on_free, &exe),
               MRT_INVALID_ARGUMENT, "graph");
  assert_int_equal(g_freed, 2);
  expect_error(mrt_graph_compile(g, &x, 1, NULL, NULL, NULL, NULL, &exe), MRT_INVALID_ARGUMENT, "programs[0]");
  const char *bad_options[] = {"no.such.option", "1", NULL};
  assert_int_equal(mrt_graph_map_linearly(g, y, 4, 0, 0), MRT_OK);
  expect_error(mrt_graph_compile(g, &copy, 1, bad_options, NULL, NULL, NULL, &exe), MRT_INVALID_ARGUMENT,
               "no.such.option");
  const char *odd_options[] = {"debug.instrument", NULL};
  expect_error(mrt_graph_compile(g, &copy, 1, odd_options, NULL, NULL, NULL, &exe), MRT_INVALID_ARGUMENT,
               "has no value");

  /* Now it compiles, once; then the graph is frozen but can be queried. */
  g_progress_calls = 0;
  assert_int_equal(mrt_graph_compile(g, &copy, 1, NULL, on_progress, &g_progress_calls, on_free, &exe), MRT_OK);
  assert_non_null(exe);
  assert_true(g_progress_calls > 0);
  assert_int_equal(g_freed, 3);
  mrt_executable *again = NULL;
  expect_error(mrt_graph_compile(g, &copy, 1, NULL, NULL, NULL, NULL, &again), MRT_FAILED_PRECONDITION,
               "was compiled");
  assert_null(again);
  mrt_tensor z = 0;
  expect_error(mrt_graph_add_variable(g, F32, NULL, 0, "z", &z), MRT_FAILED_PRECONDITION, "was compiled");
  expect_error(mrt_graph_set_tile_mapping(g, x, 0), MRT_FAILED_PRECONDITION, "was compiled");
  mrt_program p = 0;
  expect_error(mrt_program_sequence(g, NULL, 0, "s", &p), MRT_FAILED_PRECONDITION, "was compiled");
  mrt_tensor_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_graph_tensor_info(g, x, &info), MRT_OK);
  mrt_graph_destroy(g);
  mrt_executable_destroy(exe);
}

static void test_out_of_memory(void **state) {
  (void)state;
  mrt_target t;
  assert_int_equal(mrt_target_init("ipu-model-small", 1, &t), MRT_OK);
  t.bytes_per_tile = 4096;
  mrt_graph *g = NULL;
  assert_int_equal(mrt_graph_create(&t, 1, &g), MRT_OK);
  mrt_tensor x = variable(g, F32, 64, 64, "big");
  assert_int_equal(mrt_graph_set_tile_mapping(g, x, 2), MRT_OK);
  mrt_program w = 0;
  assert_int_equal(mrt_program_write_undef(g, x, "w", &w), MRT_OK);
  mrt_executable *exe = NULL;
  expect_error(mrt_graph_compile(g, &w, 1, NULL, NULL, NULL, NULL, &exe), MRT_RESOURCE_EXHAUSTED, "tile 2");
  test_expect_contains(mrt_last_error_message(), "4096");
  mrt_graph_destroy(g);
}

static void test_writing_constants_refused(void **state) {
  (void)state;
  mrt_graph *g = small_graph();
  mrt_tensor k = 0, x = variable(g, F32, 1, 4, "x"), both = 0;
  const uint64_t four[] = {1, 4};
  assert_int_equal(mrt_graph_add_constant_filled(g, F32, four, 2, 3, "threes", &k), MRT_OK);
  const mrt_tensor parts[] = {x, k};
  assert_int_equal(mrt_graph_concat(g, parts, 2, 0, &both), MRT_OK);
  mrt_tensor_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_graph_tensor_info(g, both, &info), MRT_OK);
  assert_false(info.is_constant); /* not every element is */
  mrt_program seq = 0, p = 0;
  assert_int_equal(mrt_program_sequence(g, NULL, 0, "s", &seq), MRT_OK);
  mrt_tensor eight = variable(g, F32, 2, 4, "eight");
  expect_error(mrt_program_copy(g, eight, both, "c", &p), MRT_INVALID_ARGUMENT, "constant");
  expect_error(mrt_ops_fill(g, seq, k, 1), MRT_INVALID_ARGUMENT, "'threes'");
  expect_error(mrt_ops_binary_in_place(g, seq, "Add", k, x), MRT_INVALID_ARGUMENT, "'threes'");
  mrt_graph_destroy(g);
}

static void test_ops_bad_input(void **state) {
  (void)state;
  mrt_graph *g = small_graph();
  mrt_program seq = 0, notseq = 0;
  assert_int_equal(mrt_program_sequence(g, NULL, 0, "s", &seq), MRT_OK);
  assert_int_equal(mrt_program_sync(g, 0, "sync", &notseq), MRT_OK);
  const uint64_t shape[] = {4, 8};
  mrt_tensor a = 0, b = 0, n = 0, out = 0;
  assert_int_equal(mrt_ops_create_tensor(g, F32, shape, 2, "a", 0, 0, &a), MRT_OK);
  assert_int_equal(mrt_ops_create_tensor(g, F32, shape, 2, "b", 0, 0, &b), MRT_OK);
  assert_int_equal(mrt_ops_create_tensor(g, MRT_S32, shape, 2, "n", 0, 0, &n), MRT_OK);
  expect_error(mrt_ops_binary(g, seq, "Add", a, n, "c", &out), MRT_INVALID_ARGUMENT, "S32");
  test_expect_contains(mrt_last_error_message(), "F32");
  expect_error(mrt_ops_binary(g, seq, "Addd", a, b, "c", &out), MRT_NOT_FOUND, "Addd");
  expect_error(mrt_ops_binary(g, seq, "Relu", a, b, "c", &out), MRT_INVALID_ARGUMENT, "not a binary codelet");
  expect_error(mrt_ops_binary(g, notseq, "Add", a, b, "c", &out), MRT_INVALID_ARGUMENT, "not a Sequence");
  expect_error(mrt_ops_unary(g, seq, "Exp", n, -1, "e", &out), MRT_INVALID_ARGUMENT, "F16 or F32");
  expect_error(mrt_ops_unary(g, seq, "Cast", a, -1, "e", &out), MRT_INVALID_ARGUMENT, "out_type");
  expect_error(mrt_ops_unary(g, seq, "Neg", a, MRT_S32, "e", &out), MRT_INVALID_ARGUMENT, "only Cast");
  expect_error(mrt_ops_matmul(g, seq, a, b, -1, "m", 0, 0, &out), MRT_INVALID_ARGUMENT, "do not chain");
  expect_error(mrt_ops_matmul_preloaded_rhs(g, seq, seq, a, b, -1, "m", 0, 0, &out), MRT_INVALID_ARGUMENT,
               "load_sequence 0x");
  test_expect_contains(mrt_last_error_message(), "the matmul's own sequence");
  expect_error(mrt_ops_matmul_preloaded_rhs(g, seq, notseq, a, b, -1, "m", 0, 0, &out), MRT_INVALID_ARGUMENT,
               "load_sequence 0x");
  test_expect_contains(mrt_last_error_message(), "not a Sequence");
  expect_error(mrt_ops_softmax(g, seq, n, "s", 0, 0, &out), MRT_INVALID_ARGUMENT, "F16 or F32");
  const uint64_t axes[] = {2};
  expect_error(mrt_ops_reduce(g, seq, "ReduceSum", a, axes, 1, "r", 0, 0, &out), MRT_INVALID_ARGUMENT, "axes[0] = 2");
  expect_error(mrt_ops_create_tensor(g, F32, shape, 2, "t", 4, 0, &out), MRT_INVALID_ARGUMENT, "4 tiles");
  expect_error(mrt_ops_create_tensor(g, F32, shape, 2, "t", 1, 4, &out), MRT_INVALID_ARGUMENT, "[1, 5)");
  const uint64_t as[] = {4, 8}, bs[] = {7, 2};
  expect_error(mrt_ops_create_matmul_input(g, MRT_MATMUL_LHS, F32, as, bs, "w", 0, 0, &out), MRT_INVALID_ARGUMENT,
               "do not chain");
  expect_error(mrt_ops_create_matmul_input(g, 5, F32, as, as, "w", 0, 0, &out), MRT_INVALID_ARGUMENT, "operand 5");
  expect_error(mrt_ops_create_matmul_input(g, -1, F32, as, as, "w", 0, 0, &out), MRT_INVALID_ARGUMENT, "operand -1");
  assert_int_equal(out, 0);
  mrt_graph_destroy(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_targets),
      cmocka_unit_test(test_tensors_and_views),
      cmocka_unit_test(test_tile_mapping),
      cmocka_unit_test(test_codelets),
      cmocka_unit_test(test_vertices),
      cmocka_unit_test(test_host_handles),
      cmocka_unit_test(test_programs_bad_input),
      cmocka_unit_test(test_compile),
      cmocka_unit_test(test_out_of_memory),
      cmocka_unit_test(test_writing_constants_refused),
      cmocka_unit_test(test_ops_bad_input),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
