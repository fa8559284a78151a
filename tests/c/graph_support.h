/* Helpers shared by the C tests that build a graph through the C API and run
 * it for real on small IPU Model devices (test_graph_run, test_graph_programs):
 * the objects one run owns, and compile / load / run / release steps that fail
 * the test with the library's message. */
#ifndef MRT_TEST_GRAPH_SUPPORT_H
#define MRT_TEST_GRAPH_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

#include "mrt_c.h"

/* What one graph run owns; graph_stop releases all of it. Fields not created
 * yet are NULL. */
typedef struct graph_run {
  mrt_graph *graph;
  mrt_executable *exe;
  mrt_engine *engine;
  mrt_device_manager *manager;
  mrt_device *device;
} graph_run;

/* A graph for one "ipu-model-small" IPU (4 tiles) with `replicas` replicas. */
mrt_graph *graph_small(uint32_t replicas);

/* An Execute program (named "inc") of a compute set "inc" holding one
 * Increment vertex on `tile`: counter (an S32 scalar) += 1. */
mrt_program graph_increment(mrt_graph *g, mrt_tensor counter, uint32_t tile);

/* Compiles programs and creates the engine and a device of num_ipus small
 * (4-tile) IPUs, without loading. */
void graph_prepare(graph_run *r, const mrt_program *programs, size_t n, int64_t num_ipus);

/* Loads the engine on the device. */
void graph_load(graph_run *r);

/* graph_prepare on one IPU, then graph_load. */
void graph_start(graph_run *r, const mrt_program *programs, size_t n);

/* Destroys the engine, device, device manager, executable and graph. */
void graph_stop(graph_run *r);

/* Runs program `program` of the engine. */
void graph_run_ok(graph_run *r, uint32_t program);

#endif
