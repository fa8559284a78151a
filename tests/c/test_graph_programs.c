/* The graph API run for real on small IPU Model devices, every result checked
 * exactly: If (both branches, no else), RepeatWhile (while true and while
 * false), WriteUndef, PrintTensor through a print callback (text format and
 * user_data_free), remote buffer copies with a run-time slot, tensor copies
 * between tiles, slices and concat views, hand-placed vertices (Add, Fill
 * with an attribute), replication (2 replicas, different input each), F16 and
 * S32 data, engine bad input, and mrt_engine_stop from another thread while a
 * stream callback waits. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "graph_support.h"
#include "test_support.h"

#define F32 MRT_F32
#define S32 MRT_S32

/* A variable of `n` elements (rank 1; n 0: a scalar) on one tile. */
static mrt_tensor var_on(mrt_graph *g, int32_t type, uint64_t n, uint32_t tile, const char *name) {
  mrt_tensor t = 0;
  assert_int_equal(mrt_graph_add_variable(g, type, &n, n == 0 ? 0 : 1, name, &t), MRT_OK);
  assert_int_equal(mrt_graph_set_tile_mapping(g, t, tile), MRT_OK);
  return t;
}

static mrt_program sequence(mrt_graph *g, const char *name) {
  mrt_program p = 0;
  assert_int_equal(mrt_program_sequence(g, NULL, 0, name, &p), MRT_OK);
  return p;
}

static void write_t(graph_run *r, const char *handle, const void *data, uint64_t size, uint32_t replica) {
  if (mrt_engine_write_tensor(r->engine, handle, data, size, replica) != MRT_OK) {
    fail_msg("write %s: %s", handle, mrt_last_error_message());
  }
}

static void read_t(graph_run *r, const char *handle, void *data, uint64_t size, uint32_t replica) {
  if (mrt_engine_read_tensor(r->engine, handle, data, size, replica) != MRT_OK) {
    fail_msg("read %s: %s", handle, mrt_last_error_message());
  }
}

static int32_t read_s32(graph_run *r, const char *handle) {
  int32_t v = 0;
  read_t(r, handle, &v, sizeof v, 0);
  return v;
}

static void expect_f32(const float *got, const float *want, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) fail_msg("element %zu: got %.9g, want %.9g", i, got[i], want[i]);
  }
}

/* The status and a message naming `needle`. */
static void expect_error(mrt_status status, mrt_status want, const char *needle) {
  if (status != want) fail_msg("status %d, want %d (%s)", (int)status, (int)want, mrt_last_error_message());
  test_expect_contains(mrt_last_error_message(), needle);
}

/* ---- If ---- */

static void test_if(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor x = var_on(g, F32, 4, 0, "x");
  mrt_tensor pred = var_on(g, S32, 0, 1, "pred");
  assert_int_equal(mrt_graph_create_host_write(g, "x_w", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "x", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "pred", pred), MRT_OK);
  mrt_program then_body = sequence(g, "then"), else_body = sequence(g, "else");
  assert_int_equal(mrt_ops_fill(g, then_body, x, 10), MRT_OK);
  assert_int_equal(mrt_ops_fill(g, else_body, x, 20), MRT_OK);
  mrt_program programs[2];
  assert_int_equal(mrt_program_if(g, pred, then_body, else_body, "if_else", &programs[0]), MRT_OK);
  assert_int_equal(mrt_program_if(g, pred, then_body, 0, "if_only", &programs[1]), MRT_OK);
  graph_start(&r, programs, 2);

  const float five[4] = {5, 5, 5, 5}, ten[4] = {10, 10, 10, 10}, twenty[4] = {20, 20, 20, 20};
  float got[4];
  const struct {
    uint32_t program;
    int32_t pred;
    const float *want;
  } cases[] = {
      {0, 1, ten}, {0, 0, twenty}, {0, -3, ten}, /* any non-zero value is true */
      {1, 0, five},                              /* no else: nothing happens */
      {1, 7, ten},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    write_t(&r, "x_w", five, sizeof five, MRT_ALL_REPLICAS);
    write_t(&r, "pred", &cases[i].pred, sizeof(int32_t), MRT_ALL_REPLICAS);
    graph_run_ok(&r, cases[i].program);
    read_t(&r, "x", got, sizeof got, 0);
    expect_f32(got, cases[i].want, 4);
  }
  graph_stop(&r);
}

/* ---- RepeatWhile ---- */

/* counter += 1 while counter < limit: program 0 with "Less" while true,
 * program 1 with "GreaterEqual" while false. The limit is on another tile. */
static void test_repeat_while(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor counter = var_on(g, S32, 0, 0, "counter");
  mrt_tensor limit = var_on(g, S32, 0, 1, "limit");
  mrt_tensor iterations = var_on(g, S32, 0, 2, "iterations");
  assert_int_equal(mrt_graph_create_host_write(g, "counter_w", counter), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "counter", counter), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "limit", limit), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "iterations_w", iterations), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "iterations", iterations), MRT_OK);

  /* Body: counter += 1 (tile 0) and iterations += 1 (tile 2). */
  mrt_compute_set cs = 0;
  mrt_vertex v = 0, w = 0;
  assert_int_equal(mrt_graph_add_compute_set(g, "inc", &cs), MRT_OK);
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Increment", 0, &v), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, v, "counter", counter), MRT_OK);
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Increment", 2, &w), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, w, "counter", iterations), MRT_OK);
  mrt_program body = 0;
  assert_int_equal(mrt_program_execute(g, cs, "inc", &body), MRT_OK);

  mrt_program cond_lt = sequence(g, "cond_lt"), cond_ge = sequence(g, "cond_ge");
  mrt_tensor lt = 0, ge = 0;
  assert_int_equal(mrt_ops_binary(g, cond_lt, "Less", counter, limit, "lt", &lt), MRT_OK);
  assert_int_equal(mrt_ops_binary(g, cond_ge, "GreaterEqual", counter, limit, "ge", &ge), MRT_OK);
  mrt_tensor_info info = {.struct_size = sizeof info};
  assert_int_equal(mrt_graph_tensor_info(g, lt, &info), MRT_OK);
  assert_int_equal(info.data_type, MRT_BOOL);
  assert_int_equal(info.rank, 0);
  mrt_program programs[2];
  assert_int_equal(mrt_program_repeat_while(g, cond_lt, lt, body, true, "while_true", &programs[0]), MRT_OK);
  assert_int_equal(mrt_program_repeat_while(g, cond_ge, ge, body, false, "while_false", &programs[1]), MRT_OK);
  graph_start(&r, programs, 2);

  const struct {
    uint32_t program;
    int32_t counter, limit, want_iterations;
  } cases[] = {
      {0, 0, 7, 7}, {1, 0, 7, 7}, {0, -4, 2, 6}, {1, -4, 2, 6},
      {0, 9, 3, 0}, {1, 9, 3, 0}, /* condition false at once: the body never runs */
      {0, 5, 5, 0}, {1, 5, 5, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    const int32_t zero = 0;
    write_t(&r, "counter_w", &cases[i].counter, sizeof(int32_t), MRT_ALL_REPLICAS);
    write_t(&r, "limit", &cases[i].limit, sizeof(int32_t), MRT_ALL_REPLICAS);
    write_t(&r, "iterations_w", &zero, sizeof zero, MRT_ALL_REPLICAS);
    graph_run_ok(&r, cases[i].program);
    const int32_t want = cases[i].counter > cases[i].limit ? cases[i].counter : cases[i].limit;
    if (read_s32(&r, "counter") != want || read_s32(&r, "iterations") != cases[i].want_iterations) {
      fail_msg("case %zu: counter %d (want %d), iterations %d (want %d)", i, read_s32(&r, "counter"), want,
               read_s32(&r, "iterations"), cases[i].want_iterations);
    }
  }
  graph_stop(&r);
}

/* ---- WriteUndef ---- */

static void test_write_undef(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor x = var_on(g, F32, 4, 0, "x"), y = var_on(g, F32, 4, 1, "y");
  assert_int_equal(mrt_graph_create_host_write(g, "x_w", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "x", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "y", y), MRT_OK);
  mrt_program programs[2];
  assert_int_equal(mrt_program_write_undef(g, x, "undef", &programs[0]), MRT_OK);
  assert_int_equal(mrt_program_copy(g, x, y, "copy", &programs[1]), MRT_OK);
  graph_start(&r, programs, 2);

  /* Its step is modelled at 0 cycles... */
  mrt_executable_info info = {.struct_size = sizeof info};
  assert_int_equal(mrt_executable_get_info(r.exe, &info), MRT_OK);
  size_t undef_steps = 0;
  for (size_t i = 0; i < info.num_steps; ++i) {
    mrt_step_info step = {.struct_size = sizeof step};
    assert_int_equal(mrt_executable_step(r.exe, i, &step), MRT_OK);
    if (strcmp(step.kind, "WriteUndef") == 0) {
      ++undef_steps;
      assert_int_equal(step.modelled_cycles, 0);
    }
  }
  assert_int_equal(undef_steps, 1);

  /* ...and running it moves no device cycle. */
  const float a[4] = {1, -2, 3.5f, 1e-3f}, b[4] = {-7, 0.25f, 8, 1e6f};
  float got[4];
  write_t(&r, "x_w", a, sizeof a, MRT_ALL_REPLICAS);
  uint64_t before = 0, after = 0;
  assert_int_equal(mrt_engine_device_cycles(r.engine, 0, &before), MRT_OK);
  graph_run_ok(&r, 0);
  graph_run_ok(&r, 0);
  assert_int_equal(mrt_engine_device_cycles(r.engine, 0, &after), MRT_OK);
  assert_int_equal(after, before);

  /* Rewritten after the hint, the values are the new ones everywhere. */
  write_t(&r, "x_w", b, sizeof b, MRT_ALL_REPLICAS);
  read_t(&r, "x", got, sizeof got, 0);
  expect_f32(got, b, 4);
  graph_run_ok(&r, 1);
  read_t(&r, "y", got, sizeof got, 0);
  expect_f32(got, b, 4);
  assert_int_equal(mrt_engine_device_cycles(r.engine, 0, &after), MRT_OK);
  assert_true(after > before); /* the copy does cost */
  graph_stop(&r);
}

/* ---- PrintTensor ---- */

typedef struct capture {
  char lines[8][160];
  int num_lines;
  int frees;
} capture;

static void capture_line(const char *line, void *user_data) {
  capture *c = user_data;
  if (c->num_lines < 8) snprintf(c->lines[c->num_lines], sizeof c->lines[0], "%s", line);
  ++c->num_lines;
}

static void capture_free(void *user_data) { ++((capture *)user_data)->frees; }

static void expect_printed(const capture *c) {
  /* hwsim converts each element to double and formats it with fmt's
   * shortest round trip ("{}"): integers without ".0", and an F32 that is
   * not exact in few digits shows its double value (1e20f is
   * 100000002004087734272). */
  static const char *const want[] = {
      "floats: [1 2.5 -3 0.125 1.0000000200408773e+20]",
      "ints: [7 -1 0 2147483647]",
      "halves: [1 0.333251953125 -65504]",
      "flag: [1 0]",
  };
  assert_int_equal(c->num_lines, 4);
  for (int i = 0; i < 4; ++i) assert_string_equal(c->lines[i], want[i]);
}

static void test_print_tensor(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  const uint64_t n5 = 5, n4 = 4, n3 = 3, n2 = 2;
  const float floats[5] = {1, 2.5f, -3, 0.125f, 1e20f};
  const int32_t ints[4] = {7, -1, 0, INT32_MAX};
  const uint16_t halves[3] = {0x3C00, 0x3555, 0xFBFF}; /* 1, 0.333251953125, -65504 */
  const uint8_t flags[2] = {1, 0};
  mrt_tensor f = 0, i = 0, h = 0, b = 0;
  assert_int_equal(mrt_graph_add_constant(g, F32, &n5, 1, floats, sizeof floats, "f", &f), MRT_OK);
  assert_int_equal(mrt_graph_add_constant(g, S32, &n4, 1, ints, sizeof ints, "i", &i), MRT_OK);
  assert_int_equal(mrt_graph_add_constant(g, MRT_F16, &n3, 1, halves, sizeof halves, "h", &h), MRT_OK);
  assert_int_equal(mrt_graph_add_constant(g, MRT_BOOL, &n2, 1, flags, sizeof flags, "b", &b), MRT_OK);
  const mrt_tensor all[] = {f, i, h, b};
  for (int k = 0; k < 4; ++k) assert_int_equal(mrt_graph_set_tile_mapping(g, all[k], (uint32_t)k), MRT_OK);
  mrt_program prints[4], seq = 0;
  assert_int_equal(mrt_program_print_tensor(g, "floats", f, &prints[0]), MRT_OK);
  assert_int_equal(mrt_program_print_tensor(g, "ints", i, &prints[1]), MRT_OK);
  assert_int_equal(mrt_program_print_tensor(g, "halves", h, &prints[2]), MRT_OK);
  assert_int_equal(mrt_program_print_tensor(g, "flag", b, &prints[3]), MRT_OK);
  assert_int_equal(mrt_program_sequence(g, prints, 4, "prints", &seq), MRT_OK);
  graph_start(&r, &seq, 1);

  capture a = {0}, b2 = {0}, c = {0};
  assert_int_equal(mrt_engine_set_print_callback(r.engine, capture_line, &a, capture_free), MRT_OK);
  graph_run_ok(&r, 0);
  expect_printed(&a);
  assert_int_equal(a.frees, 0);
  /* Replacing the callback frees the old user_data once. */
  assert_int_equal(mrt_engine_set_print_callback(r.engine, capture_line, &b2, capture_free), MRT_OK);
  assert_int_equal(a.frees, 1);
  graph_run_ok(&r, 0);
  expect_printed(&b2);
  assert_int_equal(a.num_lines, 4);
  /* NULL restores stdout and frees the one before. */
  assert_int_equal(mrt_engine_set_print_callback(r.engine, NULL, NULL, NULL), MRT_OK);
  assert_int_equal(b2.frees, 1);
  assert_int_equal(mrt_engine_set_print_callback(r.engine, capture_line, &c, capture_free), MRT_OK);
  graph_run_ok(&r, 0);
  expect_printed(&c);
  /* Destroying the engine frees the current one once. */
  mrt_engine_destroy(r.engine);
  r.engine = NULL;
  assert_int_equal(a.frees, 1);
  assert_int_equal(b2.frees, 1);
  assert_int_equal(c.frees, 1);
  graph_stop(&r);
}

/* ---- Remote buffers with a run-time slot ---- */

static void test_remote_buffer_slot_tensor(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_remote_buffer rb = 0;
  assert_int_equal(mrt_graph_add_remote_buffer(g, "rb", F32, 4, 2, &rb), MRT_OK);
  mrt_tensor x = var_on(g, F32, 4, 0, "x"), y = var_on(g, F32, 4, 1, "y");
  mrt_tensor slot = var_on(g, MRT_U32, 0, 2, "slot");
  assert_int_equal(mrt_graph_create_host_read(g, "x", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "y", y), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "slot", slot), MRT_OK);
  mrt_program programs[2];
  /* slot 1 given, but the slot tensor wins. */
  assert_int_equal(mrt_program_copy_from_remote_buffer(g, rb, x, 1, slot, "fetch", &programs[0]), MRT_OK);
  assert_int_equal(mrt_program_copy_to_remote_buffer(g, y, rb, 1, slot, "store", &programs[1]), MRT_OK);
  graph_start(&r, programs, 2);

  const float s0[4] = {1, 2, 3, 4}, s1[4] = {-5, -6, -7, -8}, c[4] = {0.5f, 1.5f, 2.5f, 3.5f},
              d[4] = {9, 99, 999, 9999};
  float got[4];
  assert_int_equal(mrt_engine_copy_to_remote_buffer(r.engine, "rb", s0, sizeof s0, 0, 0), MRT_OK);
  assert_int_equal(mrt_engine_copy_to_remote_buffer(r.engine, "rb", s1, sizeof s1, 1, 0), MRT_OK);
  uint32_t which = 0;
  write_t(&r, "slot", &which, sizeof which, 0);
  graph_run_ok(&r, 0);
  read_t(&r, "x", got, sizeof got, 0);
  expect_f32(got, s0, 4);
  which = 1;
  write_t(&r, "slot", &which, sizeof which, 0);
  graph_run_ok(&r, 0);
  read_t(&r, "x", got, sizeof got, 0);
  expect_f32(got, s1, 4);

  /* Stores: slot 1 then slot 0, the other slot untouched each time. */
  write_t(&r, "y", c, sizeof c, 0);
  graph_run_ok(&r, 1);
  assert_int_equal(mrt_engine_copy_from_remote_buffer(r.engine, "rb", got, sizeof got, 1, 0), MRT_OK);
  expect_f32(got, c, 4);
  assert_int_equal(mrt_engine_copy_from_remote_buffer(r.engine, "rb", got, sizeof got, 0, 0), MRT_OK);
  expect_f32(got, s0, 4);
  which = 0;
  write_t(&r, "slot", &which, sizeof which, 0);
  write_t(&r, "y", d, sizeof d, 0);
  graph_run_ok(&r, 1);
  assert_int_equal(mrt_engine_copy_from_remote_buffer(r.engine, "rb", got, sizeof got, 0, 0), MRT_OK);
  expect_f32(got, d, 4);
  assert_int_equal(mrt_engine_copy_from_remote_buffer(r.engine, "rb", got, sizeof got, 1, 0), MRT_OK);
  expect_f32(got, c, 4);

  /* A slot past the end at run time fails naming it. */
  which = 2;
  write_t(&r, "slot", &which, sizeof which, 0);
  expect_error(mrt_engine_run(r.engine, 0), MRT_INVALID_ARGUMENT, "slot 2");
  graph_stop(&r);
}

/* ---- Copies between tiles, slices and concat views ---- */

static void test_copies(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor a = var_on(g, F32, 8, 0, "a"), b = var_on(g, F32, 8, 1, "b");
  const uint64_t shape24[] = {2, 4};
  mrt_tensor d = 0;
  assert_int_equal(mrt_graph_add_variable(g, F32, shape24, 2, "d", &d), MRT_OK);
  assert_int_equal(mrt_graph_set_tile_mapping(g, d, 2), MRT_OK);
  mrt_tensor p = var_on(g, F32, 3, 2, "p"), q = var_on(g, F32, 5, 3, "q"), e = var_on(g, F32, 8, 0, "e");
  mrt_tensor col = var_on(g, F32, 2, 1, "col");
  const char *names[] = {"b", "d", "p", "q", "e", "col"};
  const mrt_tensor reads[] = {b, d, p, q, e, col};
  for (int i = 0; i < 6; ++i) assert_int_equal(mrt_graph_create_host_read(g, names[i], reads[i]), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "a", a), MRT_OK);

  mrt_program seq = sequence(g, "copies"), step = 0;
  /* a (tile 0) -> b (tile 1) */
  assert_int_equal(mrt_program_copy(g, a, b, "a->b", &step), MRT_OK);
  assert_int_equal(mrt_program_sequence_add(g, seq, step), MRT_OK);
  /* a[4:8] -> d[0], a[0:4] -> d[1] */
  mrt_tensor lo = 0, hi = 0, row0 = 0, row1 = 0;
  assert_int_equal(mrt_graph_slice(g, a, 0, 4, 0, &lo), MRT_OK);
  assert_int_equal(mrt_graph_slice(g, a, 4, 8, 0, &hi), MRT_OK);
  assert_int_equal(mrt_graph_index(g, d, 0, &row0), MRT_OK);
  assert_int_equal(mrt_graph_index(g, d, 1, &row1), MRT_OK);
  assert_int_equal(mrt_program_copy(g, hi, row0, "hi->d0", &step), MRT_OK);
  assert_int_equal(mrt_program_sequence_add(g, seq, step), MRT_OK);
  assert_int_equal(mrt_program_copy(g, lo, row1, "lo->d1", &step), MRT_OK);
  assert_int_equal(mrt_program_sequence_add(g, seq, step), MRT_OK);
  /* a -> concat(p, q): a[0:3] lands in p, a[3:8] in q */
  mrt_tensor pq = 0, qp = 0;
  const mrt_tensor parts[] = {p, q}, parts_rev[] = {q, p};
  assert_int_equal(mrt_graph_concat(g, parts, 2, 0, &pq), MRT_OK);
  assert_int_equal(mrt_program_copy(g, a, pq, "a->pq", &step), MRT_OK);
  assert_int_equal(mrt_program_sequence_add(g, seq, step), MRT_OK);
  /* concat(q, p) -> e */
  assert_int_equal(mrt_graph_concat(g, parts_rev, 2, 0, &qp), MRT_OK);
  assert_int_equal(mrt_program_copy(g, qp, e, "qp->e", &step), MRT_OK);
  assert_int_equal(mrt_program_sequence_add(g, seq, step), MRT_OK);
  /* column 2 of d (a strided view) -> col */
  mrt_tensor c2 = 0, c2flat = 0;
  assert_int_equal(mrt_graph_slice(g, d, 2, 3, 1, &c2), MRT_OK);
  assert_int_equal(mrt_graph_flatten(g, c2, &c2flat), MRT_OK);
  assert_int_equal(mrt_program_copy(g, c2flat, col, "d[:,2]->col", &step), MRT_OK);
  assert_int_equal(mrt_program_sequence_add(g, seq, step), MRT_OK);
  graph_start(&r, &seq, 1);

  const float ha[8] = {10, 11, 12, 13, 14, 15, 16, 17};
  write_t(&r, "a", ha, sizeof ha, MRT_ALL_REPLICAS);
  graph_run_ok(&r, 0);
  float got[8];
  read_t(&r, "b", got, sizeof got, 0);
  expect_f32(got, ha, 8);
  const float want_d[8] = {14, 15, 16, 17, 10, 11, 12, 13};
  read_t(&r, "d", got, sizeof got, 0);
  expect_f32(got, want_d, 8);
  read_t(&r, "p", got, 3 * sizeof(float), 0);
  expect_f32(got, ha, 3);
  read_t(&r, "q", got, 5 * sizeof(float), 0);
  expect_f32(got, ha + 3, 5);
  const float want_e[8] = {13, 14, 15, 16, 17, 10, 11, 12};
  read_t(&r, "e", got, sizeof got, 0);
  expect_f32(got, want_e, 8);
  const float want_col[2] = {16, 12};
  read_t(&r, "col", got, 2 * sizeof(float), 0);
  expect_f32(got, want_col, 2);
  graph_stop(&r);
}

/* ---- Hand-placed vertices ---- */

static void test_vertices(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor x = var_on(g, F32, 4, 1, "x"), y = var_on(g, F32, 4, 1, "y"), z = var_on(g, F32, 4, 1, "z");
  mrt_tensor f = var_on(g, F32, 5, 2, "f"), n = var_on(g, S32, 3, 3, "n"), dflt = var_on(g, F32, 2, 0, "dflt");
  assert_int_equal(mrt_graph_create_host_write(g, "x", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "y", y), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "dflt_w", dflt), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "z", z), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "f", f), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "n", n), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "dflt", dflt), MRT_OK);

  mrt_compute_set cs = 0;
  mrt_vertex add = 0, fill_f = 0, fill_n = 0, fill_d = 0;
  assert_int_equal(mrt_graph_add_compute_set(g, "hand", &cs), MRT_OK);
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Add", 1, &add), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, add, "in0", x), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, add, "in1", y), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, add, "out", z), MRT_OK);
  const double minus_1_5 = -1.5, forty_two = 42;
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Fill", 2, &fill_f), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, fill_f, "out", f), MRT_OK);
  assert_int_equal(mrt_graph_set_vertex_attribute(g, fill_f, "value", &minus_1_5, 1), MRT_OK);
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Fill", 3, &fill_n), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, fill_n, "out", n), MRT_OK);
  assert_int_equal(mrt_graph_set_vertex_attribute(g, fill_n, "value", &forty_two, 1), MRT_OK);
  /* Set, then restored to the default 0 with no values. */
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Fill", 0, &fill_d), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, fill_d, "out", dflt), MRT_OK);
  assert_int_equal(mrt_graph_set_vertex_attribute(g, fill_d, "value", &forty_two, 1), MRT_OK);
  assert_int_equal(mrt_graph_set_vertex_attribute(g, fill_d, "value", NULL, 0), MRT_OK);
  mrt_program exec = 0;
  assert_int_equal(mrt_program_execute(g, cs, "hand", &exec), MRT_OK);
  graph_start(&r, &exec, 1);

  const float hx[4] = {1, 2, 3, 4}, hy[4] = {0.5f, -2, 100, -4}, nine[2] = {9, 9};
  write_t(&r, "x", hx, sizeof hx, MRT_ALL_REPLICAS);
  write_t(&r, "y", hy, sizeof hy, MRT_ALL_REPLICAS);
  write_t(&r, "dflt_w", nine, sizeof nine, MRT_ALL_REPLICAS);
  graph_run_ok(&r, 0);
  float got[5];
  const float want_z[4] = {1.5f, 0, 103, 0}, want_f[5] = {-1.5f, -1.5f, -1.5f, -1.5f, -1.5f}, zeros[2] = {0, 0};
  read_t(&r, "z", got, 4 * sizeof(float), 0);
  expect_f32(got, want_z, 4);
  read_t(&r, "f", got, sizeof got, 0);
  expect_f32(got, want_f, 5);
  read_t(&r, "dflt", got, 2 * sizeof(float), 0);
  expect_f32(got, zeros, 2);
  int32_t gotn[3];
  read_t(&r, "n", gotn, sizeof gotn, 0);
  for (int i = 0; i < 3; ++i) assert_int_equal(gotn[i], 42);
  graph_stop(&r);
}

/* ---- Replication ---- */

static void test_replicas(void **state) {
  (void)state;
  graph_run r = {graph_small(2), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor x = var_on(g, F32, 4, 0, "x"), counter = var_on(g, S32, 0, 3, "counter");
  mrt_program seq = sequence(g, "main");
  mrt_tensor y = 0;
  assert_int_equal(mrt_ops_binary(g, seq, "Mul", x, x, "y", &y), MRT_OK);
  assert_int_equal(mrt_program_sequence_add(g, seq, graph_increment(g, counter, 3)), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "x", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "y", y), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "counter", counter), MRT_OK);
  graph_prepare(&r, &seq, 1, 2);
  mrt_executable_info info = {.struct_size = sizeof info};
  assert_int_equal(mrt_executable_get_info(r.exe, &info), MRT_OK);
  assert_int_equal(info.replication_factor, 2);
  assert_int_equal(info.num_ipus, 2);
  graph_load(&r);

  const float x0[4] = {1, 2, 3, 4}, x1[4] = {-10, 0.5f, 30, 7};
  const float y0[4] = {1, 4, 9, 16}, y1[4] = {100, 0.25f, 900, 49};
  write_t(&r, "x", x0, sizeof x0, 0);
  write_t(&r, "x", x1, sizeof x1, 1);
  graph_run_ok(&r, 0);
  float got[4];
  int32_t count = 0;
  read_t(&r, "y", got, sizeof got, 0);
  expect_f32(got, y0, 4);
  read_t(&r, "y", got, sizeof got, 1);
  expect_f32(got, y1, 4);
  for (uint32_t rep = 0; rep < 2; ++rep) {
    read_t(&r, "counter", &count, sizeof count, rep);
    assert_int_equal(count, 1);
  }
  /* One replica alone: only its state moves. */
  write_t(&r, "x", x0, sizeof x0, 1);
  if (mrt_engine_run_replica(r.engine, 0, 1) != MRT_OK) fail_msg("run_replica: %s", mrt_last_error_message());
  read_t(&r, "y", got, sizeof got, 1);
  expect_f32(got, y0, 4);
  read_t(&r, "counter", &count, sizeof count, 0);
  assert_int_equal(count, 1);
  read_t(&r, "counter", &count, sizeof count, 1);
  assert_int_equal(count, 2);
  /* MRT_ALL_REPLICAS writes both. */
  write_t(&r, "x", x1, sizeof x1, MRT_ALL_REPLICAS);
  graph_run_ok(&r, 0);
  for (uint32_t rep = 0; rep < 2; ++rep) {
    read_t(&r, "y", got, sizeof got, rep);
    expect_f32(got, y1, 4);
  }
  uint64_t c0 = 0, c1 = 0;
  assert_int_equal(mrt_engine_device_cycles(r.engine, 0, &c0), MRT_OK);
  assert_int_equal(mrt_engine_device_cycles(r.engine, 1, &c1), MRT_OK);
  assert_true(c0 > 0 && c1 > c0); /* replica 1 ran three times, replica 0 twice */
  graph_stop(&r);
}

/* ---- F16 and S32 ---- */

static void test_f16_s32(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  enum { N = 8 };
  const uint64_t shape[] = {2, N / 2};
  mrt_tensor a = 0, s0 = 0, s1 = 0;
  assert_int_equal(mrt_ops_create_tensor(g, F32, shape, 2, "a", 0, 0, &a), MRT_OK);
  assert_int_equal(mrt_ops_create_tensor(g, S32, shape, 2, "s0", 0, 0, &s0), MRT_OK);
  assert_int_equal(mrt_ops_create_tensor(g, S32, shape, 2, "s1", 2, 2, &s1), MRT_OK);
  mrt_program seq = sequence(g, "main");
  mrt_tensor h = 0, back = 0, sum = 0;
  assert_int_equal(mrt_ops_unary(g, seq, "Cast", a, MRT_F16, "h", &h), MRT_OK);
  assert_int_equal(mrt_ops_unary(g, seq, "Cast", h, F32, "back", &back), MRT_OK);
  assert_int_equal(mrt_ops_binary(g, seq, "Add", s0, s1, "sum", &sum), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "a", a), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "s0", s0), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "s1", s1), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "h", h), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "back", back), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "sum", sum), MRT_OK);
  graph_start(&r, &seq, 1);

  /* Exact halves, values that round (to nearest even), the largest half. */
  const float ha[N] = {1, -2, 0.5f, 65504, 1.0f / 3, 0.1f, 2049, -0.0f};
  const uint16_t want_bits[N] = {0x3C00, 0xC000, 0x3800, 0x7BFF, 0x3555, 0x2E66, 0x6800, 0x8000};
  const float want_back[N] = {1, -2, 0.5f, 65504, 0.333251953125f, 0.0999755859375f, 2048, -0.0f};
  const int32_t hs0[N] = {1, -7, 123456789, -2147483647, 0, 40000, INT32_MAX, -1};
  const int32_t hs1[N] = {2, 3, 876543210, -1, 0, -40001, 0, -5};
  const int32_t want_sum[N] = {3, -4, 999999999, INT32_MIN, 0, -1, INT32_MAX, -6};
  write_t(&r, "a", ha, sizeof ha, MRT_ALL_REPLICAS);
  write_t(&r, "s0", hs0, sizeof hs0, MRT_ALL_REPLICAS);
  write_t(&r, "s1", hs1, sizeof hs1, MRT_ALL_REPLICAS);
  graph_run_ok(&r, 0);
  uint16_t bits[N];
  float got[N];
  int32_t goti[N];
  read_t(&r, "h", bits, sizeof bits, 0);
  for (int i = 0; i < N; ++i) {
    if (bits[i] != want_bits[i]) fail_msg("half %d: got 0x%04x, want 0x%04x", i, bits[i], want_bits[i]);
  }
  read_t(&r, "back", got, sizeof got, 0);
  expect_f32(got, want_back, N);
  assert_true(signbit(got[7]));
  read_t(&r, "sum", goti, sizeof goti, 0);
  for (int i = 0; i < N; ++i) assert_int_equal(goti[i], want_sum[i]);
  graph_stop(&r);
}

/* ---- Engine bad input ---- */

static void test_engine_bad_input(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor x = var_on(g, F32, 4, 0, "x"), y = var_on(g, F32, 4, 1, "y");
  mrt_stream in = 0;
  mrt_remote_buffer rb = 0;
  assert_int_equal(mrt_graph_add_host_to_device_fifo(g, "in", F32, 4, &in), MRT_OK);
  assert_int_equal(mrt_graph_add_remote_buffer(g, "rb", F32, 4, 2, &rb), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "x", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "y", y), MRT_OK);
  mrt_program programs[2];
  assert_int_equal(mrt_program_copy(g, x, y, "copy", &programs[0]), MRT_OK);
  assert_int_equal(mrt_program_copy_from_stream(g, in, x, "load", &programs[1]), MRT_OK);
  graph_prepare(&r, programs, 2, 1);

  float buf[4] = {1, 2, 3, 4};
  expect_error(mrt_engine_run(r.engine, 0), MRT_FAILED_PRECONDITION, "not loaded");
  expect_error(mrt_engine_run_replica(r.engine, 0, 0), MRT_FAILED_PRECONDITION, "not loaded");
  expect_error(mrt_engine_read_tensor(r.engine, "y", buf, sizeof buf, 0), MRT_FAILED_PRECONDITION, "not loaded");
  graph_load(&r);

  expect_error(mrt_engine_run(r.engine, 7), MRT_INVALID_ARGUMENT, "program 7");
  expect_error(mrt_engine_run(r.engine, 2), MRT_INVALID_ARGUMENT, "program 2");
  expect_error(mrt_engine_run_replica(r.engine, 0, 5), MRT_INVALID_ARGUMENT, "replica 5");
  expect_error(mrt_engine_write_tensor(r.engine, "x", buf, sizeof buf, 3), MRT_INVALID_ARGUMENT, "replica 3");
  expect_error(mrt_engine_read_tensor(r.engine, "y", buf, sizeof buf, 1), MRT_INVALID_ARGUMENT, "replica 1");
  uint64_t cycles = 0;
  expect_error(mrt_engine_device_cycles(r.engine, 9, &cycles), MRT_INVALID_ARGUMENT, "replica 9");
  expect_error(mrt_engine_read_tensor(r.engine, "y", buf, 12, 0), MRT_INVALID_ARGUMENT, "12 bytes");
  test_expect_contains(mrt_last_error_message(), "expected 16");
  expect_error(mrt_engine_write_tensor(r.engine, "x", buf, 20, 0), MRT_INVALID_ARGUMENT, "20 bytes");
  expect_error(mrt_engine_copy_to_remote_buffer(r.engine, "rb", buf, 8, 0, 0), MRT_INVALID_ARGUMENT, "8 bytes");
  expect_error(mrt_engine_read_tensor(r.engine, "nosuch_read", buf, sizeof buf, 0), MRT_NOT_FOUND, "nosuch_read");
  expect_error(mrt_engine_write_tensor(r.engine, "nosuch_write", buf, sizeof buf, 0), MRT_NOT_FOUND,
               "nosuch_write");
  /* A read handle is not a write handle. */
  expect_error(mrt_engine_write_tensor(r.engine, "y", buf, sizeof buf, 0), MRT_NOT_FOUND, "'y'");
  expect_error(mrt_engine_connect_stream_to_buffer(r.engine, "nosuch_stream", 0, buf, sizeof buf), MRT_NOT_FOUND,
               "nosuch_stream");
  expect_error(mrt_engine_copy_from_remote_buffer(r.engine, "nosuch_rb", buf, sizeof buf, 0, 0), MRT_NOT_FOUND,
               "nosuch_rb");
  /* A stream never connected. */
  expect_error(mrt_engine_run(r.engine, 1), MRT_FAILED_PRECONDITION, "'in'");

  /* None of that broke the engine. */
  graph_load(&r);
  write_t(&r, "x", buf, sizeof buf, 0);
  graph_run_ok(&r, 0);
  float got[4];
  read_t(&r, "y", got, sizeof got, 0);
  expect_f32(got, buf, 4);
  graph_stop(&r);
}

/* ---- mrt_engine_stop from another thread ---- */

typedef struct gate {
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  bool block;     /* the callback waits for `released` */
  bool entered;   /* the callback is waiting */
  bool released;  /* the stopping thread has called mrt_engine_stop */
  bool timed_out;
  int calls;
  mrt_engine *engine;
  mrt_status stop_status;
} gate;

static struct timespec deadline_in(int seconds) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  ts.tv_sec += seconds;
  return ts;
}

static void gated_stream(void *data, uint64_t size, uint32_t replica, void *user_data) {
  (void)replica;
  gate *gt = user_data;
  float *values = data;
  for (uint64_t i = 0; i < size / sizeof(float); ++i) values[i] = (float)i + 0.5f;
  pthread_mutex_lock(&gt->mutex);
  ++gt->calls;
  if (gt->block) {
    gt->entered = true;
    pthread_cond_broadcast(&gt->cond);
    const struct timespec deadline = deadline_in(20);
    while (!gt->released && !gt->timed_out) {
      if (pthread_cond_timedwait(&gt->cond, &gt->mutex, &deadline) == ETIMEDOUT) gt->timed_out = true;
    }
    gt->block = false;
  }
  pthread_mutex_unlock(&gt->mutex);
}

static void *stopper(void *arg) {
  gate *gt = arg;
  pthread_mutex_lock(&gt->mutex);
  const struct timespec deadline = deadline_in(20);
  while (!gt->entered && !gt->timed_out) {
    if (pthread_cond_timedwait(&gt->cond, &gt->mutex, &deadline) == ETIMEDOUT) gt->timed_out = true;
  }
  pthread_mutex_unlock(&gt->mutex);
  const mrt_status status = mrt_engine_stop(gt->engine);
  pthread_mutex_lock(&gt->mutex);
  gt->stop_status = status;
  gt->released = true;
  pthread_cond_broadcast(&gt->cond);
  pthread_mutex_unlock(&gt->mutex);
  return NULL;
}

static void test_stop_in_stream_callback(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor x = var_on(g, F32, 4, 0, "x"), counter = var_on(g, S32, 0, 1, "counter");
  mrt_stream in = 0;
  assert_int_equal(mrt_graph_add_host_to_device_fifo(g, "in", F32, 4, &in), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "x", x), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "counter", counter), MRT_OK);
  mrt_program steps[2], seq = 0;
  assert_int_equal(mrt_program_copy_from_stream(g, in, x, "load", &steps[0]), MRT_OK);
  steps[1] = graph_increment(g, counter, 1);
  assert_int_equal(mrt_program_sequence(g, steps, 2, "main", &seq), MRT_OK);
  graph_start(&r, &seq, 1);

  gate gt = {.block = true, .engine = r.engine, .stop_status = MRT_INTERNAL};
  assert_int_equal(pthread_mutex_init(&gt.mutex, NULL), 0);
  assert_int_equal(pthread_cond_init(&gt.cond, NULL), 0);
  assert_int_equal(mrt_engine_connect_stream(r.engine, "in", MRT_ALL_REPLICAS, gated_stream, &gt, NULL), MRT_OK);
  pthread_t thread;
  assert_int_equal(pthread_create(&thread, NULL, stopper, &gt), 0);
  const mrt_status status = mrt_engine_run(r.engine, 0);
  char message[512];
  size_t length = 0;
  mrt_last_error_message_copy(message, sizeof message, &length);
  assert_int_equal(pthread_join(thread, NULL), 0);
  assert_false(gt.timed_out);
  assert_int_equal(gt.stop_status, MRT_OK);
  if (status != MRT_CANCELLED) fail_msg("run: status %d, want MRT_CANCELLED (%s)", (int)status, message);
  test_expect_contains(message, "program 0");
  test_expect_contains(message, "mrt_engine_stop");
  /* Stopped in the transfer: the compute set after it never ran. Until
   * loaded again, the engine refuses to run. */
  expect_error(mrt_engine_run(r.engine, 0), MRT_FAILED_PRECONDITION, "not loaded");

  /* Load again: the same connection serves the new run. */
  graph_load(&r);
  const int calls_before = gt.calls;
  graph_run_ok(&r, 0);
  assert_true(gt.calls > calls_before);
  assert_int_equal(read_s32(&r, "counter"), 1);
  float got[4];
  const float want[4] = {0.5f, 1.5f, 2.5f, 3.5f};
  read_t(&r, "x", got, sizeof got, 0);
  expect_f32(got, want, 4);
  graph_stop(&r);
  pthread_cond_destroy(&gt.cond);
  pthread_mutex_destroy(&gt.mutex);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_if),
      cmocka_unit_test(test_repeat_while),
      cmocka_unit_test(test_write_undef),
      cmocka_unit_test(test_print_tensor),
      cmocka_unit_test(test_remote_buffer_slot_tensor),
      cmocka_unit_test(test_copies),
      cmocka_unit_test(test_vertices),
      cmocka_unit_test(test_replicas),
      cmocka_unit_test(test_f16_s32),
      cmocka_unit_test(test_engine_bad_input),
      cmocka_unit_test(test_stop_in_stream_callback),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
