/* Graphs built through the C API and run for real on a small IPU Model
 * device, results compared with reference math computed here: every program
 * kind (Copy to/from streams and remote buffers, Repeat, RepeatWhile, If,
 * Switch, Call, Sync, WriteUndef, PrintTensor) and every op (matmul,
 * unary, binary with broadcasting, reduce, softmax, argmax, fill, cast).
 * Needs the engine part of the API (mrt_engine_*). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "graph_support.h"
#include "test_support.h"

#define F32 MRT_F32

static mrt_tensor mapped(mrt_graph *g, int32_t type, uint64_t rows, uint64_t cols, const char *name) {
  const uint64_t shape[] = {rows, cols};
  mrt_tensor t = 0;
  assert_int_equal(mrt_ops_create_tensor(g, type, shape, 2, name, 0, 0, &t), MRT_OK);
  return t;
}

static void expect_floats(const float *got, const float *want, size_t n, float tolerance) {
  for (size_t i = 0; i < n; ++i) {
    if (fabsf(got[i] - want[i]) > tolerance) fail_msg("element %zu: got %g, want %g", i, got[i], want[i]);
  }
}

/* Streams in, a loop counter vertex under Repeat, If/Switch on it, a Call,
 * a remote buffer round trip, stream out. */
static void test_programs(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  mrt_tensor x = mapped(g, F32, 2, 4, "x");
  mrt_tensor counter = 0;
  assert_int_equal(mrt_graph_add_variable(g, MRT_S32, NULL, 0, "counter", &counter), MRT_OK);
  assert_int_equal(mrt_graph_set_tile_mapping(g, counter, 0), MRT_OK);
  mrt_stream in = 0, out = 0;
  mrt_remote_buffer rb = 0;
  assert_int_equal(mrt_graph_add_host_to_device_fifo(g, "in", F32, 8, &in), MRT_OK);
  assert_int_equal(mrt_graph_add_device_to_host_fifo(g, "out", F32, 8, &out), MRT_OK);
  assert_int_equal(mrt_graph_add_remote_buffer(g, "rb", F32, 8, 2, &rb), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "counter", counter), MRT_OK);

  /* counter += 1 */
  const mrt_program inc = graph_increment(g, counter, 0);
  mrt_program repeat = 0, doubled = 0, body = 0, call = 0;
  assert_int_equal(mrt_program_repeat(g, 5, inc, "repeat", &repeat), MRT_OK);
  /* x = x + x as a function. */
  assert_int_equal(mrt_program_sequence(g, NULL, 0, "double", &body), MRT_OK);
  assert_int_equal(mrt_ops_binary_in_place(g, body, "Add", x, x), MRT_OK);
  mrt_function f = 0;
  assert_int_equal(mrt_graph_add_function(g, body, &f), MRT_OK);
  assert_int_equal(mrt_program_call(g, f, "call", &call), MRT_OK);
  /* switch (counter) { case 5: call; default: nothing } */
  mrt_program sw = 0;
  assert_int_equal(mrt_program_switch(g, counter, 0, "sw", &sw), MRT_OK);
  assert_int_equal(mrt_program_switch_add_case(g, sw, 5, call), MRT_OK);
  (void)doubled;

  mrt_program steps[6];
  assert_int_equal(mrt_program_copy_from_stream(g, in, x, "load", &steps[0]), MRT_OK);
  steps[1] = repeat;
  steps[2] = sw;
  assert_int_equal(mrt_program_copy_to_remote_buffer(g, x, rb, 1, 0, "save", &steps[3]), MRT_OK);
  assert_int_equal(mrt_program_copy_from_remote_buffer(g, rb, x, 1, 0, "restore", &steps[4]), MRT_OK);
  assert_int_equal(mrt_program_copy_to_stream(g, x, out, "emit", &steps[5]), MRT_OK);
  mrt_program main_program = 0;
  assert_int_equal(mrt_program_sequence(g, steps, 6, "main", &main_program), MRT_OK);
  mrt_program sync = 0;
  assert_int_equal(mrt_program_sync(g, MRT_SYNC_INTERNAL, "sync", &sync), MRT_OK);
  assert_int_equal(mrt_program_sequence_add(g, main_program, sync), MRT_OK);

  graph_start(&r, &main_program, 1);
  float input[8], output[8], want[8];
  for (int i = 0; i < 8; ++i) input[i] = (float)i - 3.5f;
  assert_int_equal(mrt_engine_connect_stream_to_buffer(r.engine, "in", MRT_ALL_REPLICAS, input, sizeof input), MRT_OK);
  assert_int_equal(mrt_engine_connect_stream_to_buffer(r.engine, "out", MRT_ALL_REPLICAS, output, sizeof output),
                   MRT_OK);
  graph_run_ok(&r, 0);
  int32_t count = 0;
  assert_int_equal(mrt_engine_read_tensor(r.engine, "counter", &count, sizeof count, 0), MRT_OK);
  assert_int_equal(count, 5);
  for (int i = 0; i < 8; ++i) want[i] = 2 * input[i];
  expect_floats(output, want, 8, 0);
  /* Second run: the counter is 10, the switch takes the default. */
  graph_run_ok(&r, 0);
  expect_floats(output, input, 8, 0);
  graph_stop(&r);
}

/* The ops against reference math. */
static void test_ops(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  enum { M = 3, K = 5, N = 4 };
  mrt_tensor a = mapped(g, F32, M, K, "a"), b = mapped(g, F32, K, N, "b"), bias = 0;
  const uint64_t n_shape = N;
  assert_int_equal(mrt_graph_add_variable(g, F32, &n_shape, 1, "bias", &bias), MRT_OK);
  assert_int_equal(mrt_graph_set_tile_mapping(g, bias, 1), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "a", a), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "b", b), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "bias", bias), MRT_OK);
  mrt_program seq = 0;
  assert_int_equal(mrt_program_sequence(g, NULL, 0, "main", &seq), MRT_OK);
  mrt_tensor mm = 0, biased = 0, relu = 0, sum = 0, smax = 0, amax = 0, cast = 0, filled = 0;
  assert_int_equal(mrt_ops_matmul(g, seq, a, b, -1, "mm", 0, 0, &mm), MRT_OK);
  assert_int_equal(mrt_ops_binary(g, seq, "Add", mm, bias, "biased", &biased), MRT_OK);
  assert_int_equal(mrt_ops_unary(g, seq, "Relu", biased, -1, "relu", &relu), MRT_OK);
  const uint64_t axis1 = 1;
  assert_int_equal(mrt_ops_reduce(g, seq, "ReduceSum", relu, &axis1, 1, "sum", 0, 0, &sum), MRT_OK);
  assert_int_equal(mrt_ops_softmax(g, seq, biased, "softmax", 0, 0, &smax), MRT_OK);
  assert_int_equal(mrt_ops_argmax(g, seq, biased, "argmax", 0, 0, &amax), MRT_OK);
  assert_int_equal(mrt_ops_unary(g, seq, "Cast", biased, MRT_S32, "cast", &cast), MRT_OK);
  filled = mapped(g, F32, 2, 2, "filled");
  assert_int_equal(mrt_ops_fill(g, seq, filled, 1.25), MRT_OK);
  const char *names[] = {"mm", "biased", "relu", "sum", "softmax", "argmax", "cast", "filled"};
  const mrt_tensor results[] = {mm, biased, relu, sum, smax, amax, cast, filled};
  for (int i = 0; i < 8; ++i) assert_int_equal(mrt_graph_create_host_read(g, names[i], results[i]), MRT_OK);
  graph_start(&r, &seq, 1);

  float ha[M * K], hb[K * N], hbias[N];
  unsigned seed = 7;
  test_fill_random(ha, M * K, &seed, -2, 2);
  test_fill_random(hb, K * N, &seed, -2, 2);
  test_fill_random(hbias, N, &seed, -1, 1);
  assert_int_equal(mrt_engine_write_tensor(r.engine, "a", ha, sizeof ha, MRT_ALL_REPLICAS), MRT_OK);
  assert_int_equal(mrt_engine_write_tensor(r.engine, "b", hb, sizeof hb, MRT_ALL_REPLICAS), MRT_OK);
  assert_int_equal(mrt_engine_write_tensor(r.engine, "bias", hbias, sizeof hbias, MRT_ALL_REPLICAS), MRT_OK);
  graph_run_ok(&r, 0);

  float want_mm[M * N], want_b[M * N], want_relu[M * N], want_sum[M], want_smax[M * N];
  int32_t want_amax[M], want_cast[M * N];
  for (int i = 0; i < M; ++i) {
    float row_max = -INFINITY, row_sum = 0, exp_sum = 0;
    want_amax[i] = 0;
    for (int j = 0; j < N; ++j) {
      float acc = 0;
      for (int k = 0; k < K; ++k) acc += ha[i * K + k] * hb[k * N + j];
      want_mm[i * N + j] = acc;
      want_b[i * N + j] = acc + hbias[j];
      want_relu[i * N + j] = want_b[i * N + j] > 0 ? want_b[i * N + j] : 0;
      want_cast[i * N + j] = (int32_t)want_b[i * N + j];
      row_sum += want_relu[i * N + j];
      if (want_b[i * N + j] > row_max) {
        row_max = want_b[i * N + j];
        want_amax[i] = j;
      }
    }
    want_sum[i] = row_sum;
    for (int j = 0; j < N; ++j) exp_sum += expf(want_b[i * N + j] - row_max);
    for (int j = 0; j < N; ++j) want_smax[i * N + j] = expf(want_b[i * N + j] - row_max) / exp_sum;
  }
  float got[M * N];
  int32_t goti[M * N];
  assert_int_equal(mrt_engine_read_tensor(r.engine, "mm", got, sizeof(float) * M * N, 0), MRT_OK);
  expect_floats(got, want_mm, M * N, 1e-4f);
  assert_int_equal(mrt_engine_read_tensor(r.engine, "biased", got, sizeof(float) * M * N, 0), MRT_OK);
  expect_floats(got, want_b, M * N, 1e-4f);
  assert_int_equal(mrt_engine_read_tensor(r.engine, "relu", got, sizeof(float) * M * N, 0), MRT_OK);
  expect_floats(got, want_relu, M * N, 1e-4f);
  assert_int_equal(mrt_engine_read_tensor(r.engine, "sum", got, sizeof(float) * M, 0), MRT_OK);
  expect_floats(got, want_sum, M, 1e-4f);
  assert_int_equal(mrt_engine_read_tensor(r.engine, "softmax", got, sizeof(float) * M * N, 0), MRT_OK);
  expect_floats(got, want_smax, M * N, 1e-5f);
  assert_int_equal(mrt_engine_read_tensor(r.engine, "argmax", goti, sizeof(int32_t) * M, 0), MRT_OK);
  for (int i = 0; i < M; ++i) assert_int_equal(goti[i], want_amax[i]);
  assert_int_equal(mrt_engine_read_tensor(r.engine, "cast", goti, sizeof(int32_t) * M * N, 0), MRT_OK);
  for (int i = 0; i < M * N; ++i) assert_int_equal(goti[i], want_cast[i]);
  assert_int_equal(mrt_engine_read_tensor(r.engine, "filled", got, sizeof(float) * 4, 0), MRT_OK);
  for (int i = 0; i < 4; ++i) assert_true(got[i] == 1.25f);
  graph_stop(&r);
}

/* A matmul whose weights the load program writes and copies to the tiles
 * that multiply them (mrt_ops_matmul_preloaded_rhs): two main runs with
 * different activations both multiply by the loaded weights. */
static void test_matmul_preloaded_rhs(void **state) {
  (void)state;
  graph_run r = {graph_small(1), NULL, NULL, NULL, NULL};
  mrt_graph *g = r.graph;
  enum { M = 96, K = 40, N = 8 };
  const uint64_t as[] = {M, K}, bs[] = {K, N};
  mrt_tensor a = 0, b = 0, mm = 0;
  assert_int_equal(mrt_ops_create_matmul_input(g, MRT_MATMUL_LHS_OF_PRELOADED, F32, as, bs, "a", 0, 0, &a), MRT_OK);
  assert_int_equal(mrt_ops_create_matmul_input(g, MRT_MATMUL_RHS_PRELOADED, F32, as, bs, "b", 0, 0, &b), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "a", a), MRT_OK);
  assert_int_equal(mrt_graph_create_host_write(g, "b", b), MRT_OK);
  mrt_program programs[2] = {0, 0};
  assert_int_equal(mrt_program_sequence(g, NULL, 0, "load", &programs[0]), MRT_OK);
  assert_int_equal(mrt_program_sequence(g, NULL, 0, "main", &programs[1]), MRT_OK);
  assert_int_equal(mrt_ops_matmul_preloaded_rhs(g, programs[1], programs[0], a, b, -1, "mm", 0, 0, &mm), MRT_OK);
  assert_int_equal(mrt_graph_create_host_read(g, "mm", mm), MRT_OK);
  graph_start(&r, programs, 2);
  float ha[M * K], hb[K * N], got[M * N], want[M * N];
  unsigned seed = 11;
  test_fill_random(hb, K * N, &seed, -1, 1);
  assert_int_equal(mrt_engine_write_tensor(r.engine, "b", hb, sizeof hb, MRT_ALL_REPLICAS), MRT_OK);
  graph_run_ok(&r, 0);
  for (int run = 0; run < 2; ++run) {
    test_fill_random(ha, M * K, &seed, -1, 1);
    assert_int_equal(mrt_engine_write_tensor(r.engine, "a", ha, sizeof ha, MRT_ALL_REPLICAS), MRT_OK);
    graph_run_ok(&r, 1);
    for (int i = 0; i < M; ++i) {
      for (int j = 0; j < N; ++j) {
        float acc = 0;
        for (int k = 0; k < K; ++k) acc += ha[i * K + k] * hb[k * N + j];
        want[i * N + j] = acc;
      }
    }
    assert_int_equal(mrt_engine_read_tensor(r.engine, "mm", got, sizeof got, 0), MRT_OK);
    expect_floats(got, want, M * N, 1e-4f);
  }
  graph_stop(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_programs),
      cmocka_unit_test(test_ops),
      cmocka_unit_test(test_matmul_preloaded_rhs),
  };
  return cmocka_run_group_tests(tests, test_private_system_setup, test_private_system_teardown);
}
