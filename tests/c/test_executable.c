/* The executable part of the C API on example models written by mrt-gen
 * (MRT_TEST_ENGINE_MODELS, 4-tile builds): info, target, memory per tile,
 * program steps with their modelled cycles, handles, the serialize /
 * deserialize round trip (same hash, same bytes), corrupt bytes and bad
 * input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mrt_c.h"
#include "test_support.h"

static mrt_executable *executable_of(const char *name) {
  mrt_model *model = test_load_model("MRT_TEST_ENGINE_MODELS", name);
  mrt_executable *exe = NULL;
  assert_int_equal(mrt_model_get_executable(model, &exe), MRT_OK);
  mrt_model_destroy(model); /* the executable needs nothing of the model */
  return exe;
}

static mrt_executable_info info_of(const mrt_executable *exe) {
  mrt_executable_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(mrt_executable_get_info(exe, &info), MRT_OK);
  return info;
}

static void test_info_target_and_memory(void **state) {
  (void)state;
  mrt_executable *exe = executable_of("add_one");
  const mrt_executable_info info = info_of(exe);
  assert_int_equal(info.replication_factor, 1);
  assert_int_equal(info.num_ipus, 1);
  assert_int_equal(info.num_programs, 1);
  assert_int_equal(info.num_tiles, 4);
  assert_int_equal(info.num_streams, 2);
  assert_int_equal(info.num_remote_buffers, 0);
  assert_true(info.num_steps > 0);
  assert_true(info.hash != 0);

  mrt_target target;
  memset(&target, 0, sizeof target);
  target.struct_size = sizeof target;
  assert_int_equal(mrt_executable_get_target(exe, &target), MRT_OK);
  assert_int_equal(target.ipu_version, 2);
  assert_int_equal(target.num_ipus, 1);
  assert_int_equal(target.tiles_per_ipu, 4);
  assert_non_null(target.name);
  assert_true(strlen(target.name) > 0);
  assert_true(target.clock_hz > 0.0);
  assert_true(target.host_sync_cycles > 0.0);
  assert_int_equal(target.bytes_per_tile, info.bytes_per_tile);

  /* The totals of the info are those of the per-tile list. */
  const uint64_t *bytes = NULL;
  size_t count = 0;
  assert_int_equal(mrt_executable_memory_per_tile(exe, &bytes, &count), MRT_OK);
  assert_int_equal(count, info.num_tiles);
  uint64_t total = 0, max = 0;
  size_t max_tile = 0;
  for (size_t t = 0; t < count; ++t) {
    total += bytes[t];
    if (bytes[t] > max) {
      max = bytes[t];
      max_tile = t;
    }
  }
  assert_int_equal(info.total_memory_bytes, total);
  assert_int_equal(info.max_tile_memory_bytes, max);
  assert_int_equal(info.max_memory_tile, max_tile);
  assert_true(max > 0 && max <= info.bytes_per_tile);

  const char *name = NULL;
  assert_int_equal(mrt_executable_program_name(exe, 0, &name), MRT_OK);
  assert_non_null(name);
  assert_int_equal(mrt_executable_program_name(exe, 1, &name), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "program index 1 out of range");
  mrt_executable_destroy(exe);
}

static void test_steps_have_modelled_cycles(void **state) {
  (void)state;
  mrt_executable *exe = executable_of("mlp");
  const mrt_executable_info info = info_of(exe);
  size_t executes = 0;
  for (size_t i = 0; i < info.num_steps; ++i) {
    mrt_step_info step;
    memset(&step, 0, sizeof step);
    step.struct_size = sizeof step;
    assert_int_equal(mrt_executable_step(exe, i, &step), MRT_OK);
    assert_non_null(step.kind);
    assert_non_null(step.name);
    if (strcmp(step.kind, "Execute") == 0) {
      ++executes;
      assert_true(step.modelled_cycles > 0); /* a compute set always costs cycles */
    }
    if (strcmp(step.kind, "StreamToTensor") == 0) assert_true(step.modelled_cycles > 0);
  }
  assert_true(executes >= 4); /* two matmuls, bias, relu, softmax */

  mrt_step_info step;
  step.struct_size = sizeof step;
  assert_int_equal(mrt_executable_step(exe, info.num_steps, &step), MRT_INVALID_ARGUMENT);
  char expected[64];
  snprintf(expected, sizeof expected, "step index %zu out of range", info.num_steps);
  test_expect_contains(mrt_last_error_message(), expected);
  step.struct_size = 4;
  assert_int_equal(mrt_executable_step(exe, 0, &step), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_info->struct_size is 4");
  mrt_executable_destroy(exe);
}

static mrt_pipeline_info pipeline_of(const mrt_executable *exe, uint32_t program) {
  mrt_pipeline_info info;
  memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  assert_int_equal(mrt_executable_pipeline(exe, program, &info), MRT_OK);
  return info;
}

/* pipeline2's Main (program 1) is two stages, one per IPU: streamed, a run
 * ends every slowest-stage-plus-transfer, less than one run alone takes
 * (docs/hwsim.md "Pipelining"); the mlp's is one stage. */
static void test_pipeline_stages_and_cycles(void **state) {
  (void)state;
  mrt_executable *piped = executable_of("pipeline2");
  const mrt_pipeline_info p = pipeline_of(piped, 1);
  assert_int_equal(p.num_stages, 2);
  assert_true(p.interval_cycles > 0);
  assert_true(p.interval_cycles < p.latency_cycles);
  /* Load streams the weights to IPU 0, then to IPU 1: two stages that
   * exchange nothing, which repeated loads could overlap too. */
  const mrt_pipeline_info load = pipeline_of(piped, 0);
  assert_int_equal(load.num_stages, 2);
  assert_true(load.interval_cycles < load.latency_cycles);

  mrt_executable *whole = executable_of("mlp");
  const mrt_pipeline_info w = pipeline_of(whole, 1);
  assert_int_equal(w.num_stages, 1);
  assert_int_equal(w.interval_cycles, w.latency_cycles);

  mrt_pipeline_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_executable_pipeline(whole, 2, &info), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "program index 2 out of range");
  assert_int_equal(mrt_executable_pipeline(NULL, 0, &info), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "executable");
  assert_int_equal(mrt_executable_pipeline(whole, 0, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_info");
  info.struct_size = 4;
  assert_int_equal(mrt_executable_pipeline(whole, 0, &info), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_info->struct_size is 4");
  mrt_executable_destroy(whole);
  mrt_executable_destroy(piped);
}

static mrt_handle_info handle_of(const mrt_executable *exe, int32_t kind, size_t index) {
  mrt_handle_info handle;
  memset(&handle, 0, sizeof handle);
  handle.struct_size = sizeof handle;
  assert_int_equal(mrt_executable_handle(exe, kind, index, &handle), MRT_OK);
  return handle;
}

static void test_handles(void **state) {
  (void)state;
  mrt_executable *exe = executable_of("remote_buffer");
  const mrt_executable_info info = info_of(exe);
  assert_int_equal(info.num_streams, 2);
  assert_int_equal(info.num_remote_buffers, 1);
  int seen_x = 0, seen_y = 0;
  for (size_t i = 0; i < info.num_streams; ++i) {
    const mrt_handle_info h = handle_of(exe, MRT_HANDLE_HOST_TO_DEVICE, i);
    assert_int_equal(h.data_type, MRT_F32);
    assert_int_equal(h.num_elements, 8);
    assert_int_equal(h.repeats, 1);
    if (strcmp(h.handle, "x") == 0) {
      assert_int_equal(h.kind, MRT_HANDLE_HOST_TO_DEVICE);
      ++seen_x;
    } else if (strcmp(h.handle, "y") == 0) {
      assert_int_equal(h.kind, MRT_HANDLE_DEVICE_TO_HOST);
      ++seen_y;
    }
  }
  assert_int_equal(seen_x, 1);
  assert_int_equal(seen_y, 1);
  const mrt_handle_info w = handle_of(exe, MRT_HANDLE_REMOTE_BUFFER, 0);
  assert_string_equal(w.handle, "w");
  assert_int_equal(w.kind, MRT_HANDLE_REMOTE_BUFFER);
  assert_int_equal(w.num_elements, 8);
  assert_int_equal(w.repeats, 1);

  mrt_handle_info h;
  h.struct_size = sizeof h;
  assert_int_equal(mrt_executable_handle(exe, MRT_HANDLE_REMOTE_BUFFER, 1, &h), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "remote buffer index 1 out of range");
  assert_int_equal(mrt_executable_handle(exe, MRT_HANDLE_HOST_READ, 0, &h), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "host read index 0");
  assert_int_equal(mrt_executable_handle(exe, 99, 0, &h), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "kind 99");
  mrt_executable_destroy(exe);
}

static void test_serialize_round_trip(void **state) {
  (void)state;
  mrt_executable *exe = executable_of("mlp");
  const void *data = NULL;
  uint64_t size = 0;
  assert_int_equal(mrt_executable_serialize(exe, &data, &size), MRT_OK);
  assert_true(size > 0);

  mrt_executable *copy = NULL;
  assert_int_equal(mrt_executable_deserialize(data, size, &copy), MRT_OK);
  assert_int_equal(info_of(copy).hash, info_of(exe).hash);
  assert_int_equal(info_of(copy).num_steps, info_of(exe).num_steps);
  const void *copy_data = NULL;
  uint64_t copy_size = 0;
  assert_int_equal(mrt_executable_serialize(copy, &copy_data, &copy_size), MRT_OK);
  assert_int_equal(copy_size, size);
  assert_memory_equal(copy_data, data, size);
  mrt_executable_destroy(copy);
  mrt_executable_destroy(exe);
}

static void test_corrupt_bytes(void **state) {
  (void)state;
  mrt_executable *exe = executable_of("add_one");
  const void *data = NULL;
  uint64_t size = 0;
  assert_int_equal(mrt_executable_serialize(exe, &data, &size), MRT_OK);
  unsigned char *bytes = malloc(size);
  assert_non_null(bytes);
  memcpy(bytes, data, size);
  mrt_executable *out = NULL;

  /* Truncated. */
  assert_int_equal(mrt_executable_deserialize(bytes, size / 2, &out), MRT_CORRUPT_MODEL);
  assert_null(out);
  /* A wrong file identifier / root offset. */
  memset(bytes, 0xff, 8);
  assert_int_equal(mrt_executable_deserialize(bytes, size, &out), MRT_CORRUPT_MODEL);
  assert_null(out);
  assert_true(strlen(mrt_last_error_message()) > strlen("mrt_executable_deserialize: "));
  /* Garbage. */
  for (uint64_t i = 0; i < size; ++i) bytes[i] = (unsigned char)(i * 37u + 11u);
  assert_int_equal(mrt_executable_deserialize(bytes, size, &out), MRT_CORRUPT_MODEL);
  assert_int_equal(mrt_executable_deserialize(bytes, 0, &out), MRT_CORRUPT_MODEL);
  test_expect_contains(mrt_last_error_message(), "size is 0");
  free(bytes);
  mrt_executable_destroy(exe);
}

static void test_bad_input(void **state) {
  (void)state;
  mrt_executable *exe = executable_of("add_one");
  mrt_executable_info info;
  info.struct_size = sizeof info;
  assert_int_equal(mrt_executable_get_info(NULL, &info), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "executable must not be NULL");
  assert_int_equal(mrt_executable_get_info(exe, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_info must not be NULL");
  info.struct_size = 3;
  assert_int_equal(mrt_executable_get_info(exe, &info), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_info->struct_size is 3");
  mrt_target target;
  target.struct_size = 0;
  assert_int_equal(mrt_executable_get_target(exe, &target), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_executable_serialize(exe, NULL, NULL), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "out_data");
  assert_int_equal(mrt_executable_memory_per_tile(NULL, NULL, NULL), MRT_INVALID_ARGUMENT);
  mrt_executable *out = NULL;
  assert_int_equal(mrt_executable_deserialize(NULL, 10, &out), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "data must not be NULL");
  assert_int_equal(mrt_model_get_executable(NULL, &out), MRT_INVALID_ARGUMENT);
  test_expect_contains(mrt_last_error_message(), "model must not be NULL");
  const char *name = NULL;
  assert_int_equal(mrt_executable_program_name(exe, 0, NULL), MRT_INVALID_ARGUMENT);
  assert_int_equal(mrt_executable_program_name(NULL, 0, &name), MRT_INVALID_ARGUMENT);
  mrt_executable_destroy(NULL);
  /* The handle is still fine after all of that. */
  assert_int_equal(info_of(exe).num_programs, 1);
  mrt_executable_destroy(exe);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_info_target_and_memory), cmocka_unit_test(test_steps_have_modelled_cycles),
      cmocka_unit_test(test_handles),                cmocka_unit_test(test_serialize_round_trip),
      cmocka_unit_test(test_corrupt_bytes),          cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_pipeline_stages_and_cycles),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
