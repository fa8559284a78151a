#include "graph_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

mrt_graph *graph_small(uint32_t replicas) {
  mrt_target target;
  assert_int_equal(mrt_target_init("ipu-model-small", 1, &target), MRT_OK);
  mrt_graph *graph = NULL;
  assert_int_equal(mrt_graph_create(&target, replicas, &graph), MRT_OK);
  return graph;
}

mrt_program graph_increment(mrt_graph *g, mrt_tensor counter, uint32_t tile) {
  mrt_compute_set cs = 0;
  mrt_vertex v = 0;
  mrt_program inc = 0;
  assert_int_equal(mrt_graph_add_compute_set(g, "inc", &cs), MRT_OK);
  assert_int_equal(mrt_graph_add_vertex(g, cs, "Increment", tile, &v), MRT_OK);
  assert_int_equal(mrt_graph_connect(g, v, "counter", counter), MRT_OK);
  assert_int_equal(mrt_program_execute(g, cs, "inc", &inc), MRT_OK);
  return inc;
}

void graph_prepare(graph_run *r, const mrt_program *programs, size_t n, int64_t num_ipus) {
  if (mrt_graph_compile(r->graph, programs, n, NULL, NULL, NULL, NULL, &r->exe) != MRT_OK) {
    fail_msg("compile: %s", mrt_last_error_message());
  }
  assert_int_equal(mrt_engine_create(r->exe, NULL, &r->engine), MRT_OK);
  assert_int_equal(mrt_device_manager_create(&r->manager), MRT_OK);
  if (num_ipus == 1) {
    assert_int_equal(mrt_device_manager_create_small_ipu_model_device(r->manager, 1, 2, &r->device), MRT_OK);
  } else {
    assert_int_equal(mrt_device_manager_create_ipu_model_device(r->manager, num_ipus, 2, 4, &r->device), MRT_OK);
  }
}

void graph_load(graph_run *r) {
  if (mrt_engine_load(r->engine, r->device) != MRT_OK) fail_msg("load: %s", mrt_last_error_message());
}

void graph_start(graph_run *r, const mrt_program *programs, size_t n) {
  graph_prepare(r, programs, n, 1);
  graph_load(r);
}

void graph_stop(graph_run *r) {
  mrt_engine_destroy(r->engine);
  mrt_device_destroy(r->device);
  mrt_device_manager_destroy(r->manager);
  mrt_executable_destroy(r->exe);
  mrt_graph_destroy(r->graph);
}

void graph_run_ok(graph_run *r, uint32_t program) {
  if (mrt_engine_run(r->engine, program) != MRT_OK) fail_msg("run %u: %s", program, mrt_last_error_message());
}
