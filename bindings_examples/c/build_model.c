/* build_model: a model built from nothing with libmrt's C API, then served.
 *
 *   build_model OUT.popef
 *
 * 1. Builds a graph for one GC200: a two-layer MLP
 *      y = softmax(relu(x.w1 + b1).w2 + b2),  x [B,16], w1 [16,32], w2 [32,4]
 *    with the PopLibs-like ops (mrt_ops_*), weights streamed in by a Load
 *    program and laid out where the matmuls use them.
 * 2. Compiles it and shows what it costs (memory, modelled cycles).
 * 3. Writes it as a PopEF model (weights as TensorData) to OUT.popef.
 * 4. Loads that file and serves it with a ModelRunner, comparing every
 *    output with the same math done here in double precision.
 * Exit status 0 only if every output matched. docs/graph.md walks through it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mrt_c.h"

enum { BATCH = 2, IN = 16, HIDDEN = 32, OUT = 4 };

/* Stops at the first failed call, printing the library's message. */
#define CHECK(call)                                                                        \
  do {                                                                                     \
    mrt_status status_ = (call);                                                           \
    if (status_ != MRT_OK) {                                                               \
      fprintf(stderr, "build_model: %s failed: %s\n  %s\n", #call,                         \
              mrt_status_string(status_), mrt_last_error_message());                       \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

/* Deterministic weights in [-scale, scale). */
static void fill(float *values, size_t count, unsigned seed, float scale) {
  for (size_t i = 0; i < count; ++i) {
    seed = seed * 1103515245u + 12345u;
    values[i] = scale * ((float)((seed >> 8) & 0xffff) / 32768.0f - 1.0f);
  }
}

static float w1[IN * HIDDEN], b1[HIDDEN], w2[HIDDEN * OUT], b2[OUT];

/* Streams `tensor` in from a new host FIFO named `handle` in `program`. */
static void stream_in(mrt_graph *graph, mrt_program program, const char *handle, mrt_tensor tensor,
                      uint64_t elements) {
  mrt_stream stream;
  mrt_program copy;
  CHECK(mrt_graph_add_host_to_device_fifo(graph, handle, MRT_F32, elements, &stream));
  CHECK(mrt_program_copy_from_stream(graph, stream, tensor, NULL, &copy));
  CHECK(mrt_program_sequence_add(graph, program, copy));
}

/* Steps 1 to 3: the model, in memory. */
static mrt_model *build(void) {
  mrt_target target;
  mrt_graph *graph = NULL;
  CHECK(mrt_target_init("gc200", 1, &target));
  CHECK(mrt_graph_create(&target, 1, &graph));

  const uint64_t x_shape[2] = {BATCH, IN}, w1_shape[2] = {IN, HIDDEN};
  const uint64_t h_shape[2] = {BATCH, HIDDEN}, w2_shape[2] = {HIDDEN, OUT};
  const uint64_t b1_shape[1] = {HIDDEN}, b2_shape[1] = {OUT};
  mrt_tensor x, tw1, tb1, tw2, tb2;
  /* Laid out as the matmuls want them: a Main run moves only activations. */
  CHECK(mrt_ops_create_matmul_input(graph, MRT_MATMUL_LHS, MRT_F32, x_shape, w1_shape, "x", 0, 0, &x));
  CHECK(mrt_ops_create_matmul_input(graph, MRT_MATMUL_RHS, MRT_F32, x_shape, w1_shape, "w1", 0, 0, &tw1));
  CHECK(mrt_ops_create_matmul_input(graph, MRT_MATMUL_RHS, MRT_F32, h_shape, w2_shape, "w2", 0, 0, &tw2));
  CHECK(mrt_ops_create_tensor(graph, MRT_F32, b1_shape, 1, "b1", 0, 0, &tb1));
  CHECK(mrt_ops_create_tensor(graph, MRT_F32, b2_shape, 1, "b2", 0, 0, &tb2));

  mrt_program load, main_program;
  CHECK(mrt_program_sequence(graph, NULL, 0, "load", &load));
  CHECK(mrt_program_sequence(graph, NULL, 0, "main", &main_program));
  stream_in(graph, load, "w1", tw1, IN * HIDDEN);
  stream_in(graph, load, "b1", tb1, HIDDEN);
  stream_in(graph, load, "w2", tw2, HIDDEN * OUT);
  stream_in(graph, load, "b2", tb2, OUT);
  stream_in(graph, main_program, "x", x, BATCH * IN);

  mrt_tensor h, hb, hr, o, y;
  CHECK(mrt_ops_matmul(graph, main_program, x, tw1, -1, "layer1", 0, 0, &h));
  CHECK(mrt_ops_binary(graph, main_program, "Add", h, tb1, "bias1", &hb));
  CHECK(mrt_ops_unary(graph, main_program, "Relu", hb, -1, "relu", &hr));
  CHECK(mrt_ops_matmul(graph, main_program, hr, tw2, -1, "layer2", 0, 0, &o));
  CHECK(mrt_ops_binary_in_place(graph, main_program, "Add", o, tb2));
  CHECK(mrt_ops_softmax(graph, main_program, o, "probs", 0, 0, &y));
  mrt_stream y_stream;
  mrt_program y_copy;
  CHECK(mrt_graph_add_device_to_host_fifo(graph, "y", MRT_F32, BATCH * OUT, &y_stream));
  CHECK(mrt_program_copy_to_stream(graph, y, y_stream, NULL, &y_copy));
  CHECK(mrt_program_sequence_add(graph, main_program, y_copy));

  /* Program 0 is Load, program 1 Main. */
  const mrt_program programs[2] = {load, main_program};
  mrt_executable *executable = NULL;
  CHECK(mrt_graph_compile(graph, programs, 2, NULL, NULL, NULL, NULL, &executable));
  mrt_graph_destroy(graph); /* the executable does not need it */

  mrt_executable_info info = {.struct_size = sizeof info};
  CHECK(mrt_executable_get_info(executable, &info));
  uint64_t cycles = 0;
  for (size_t i = 0; i < info.num_steps; ++i) {
    mrt_step_info step = {.struct_size = sizeof step};
    CHECK(mrt_executable_step(executable, i, &step));
    cycles += step.modelled_cycles;
  }
  printf("compiled: %u programs, %zu steps, %llu bytes on %u tiles (fullest tile %u: %llu bytes), "
         "%llu modelled cycles for one run of every step\n",
         info.num_programs, info.num_steps, (unsigned long long)info.total_memory_bytes, info.num_tiles,
         info.max_memory_tile, (unsigned long long)info.max_tile_memory_bytes, (unsigned long long)cycles);

  /* The model: anchors name the FIFOs; weights come from TensorData. */
  mrt_model_builder *builder = NULL;
  CHECK(mrt_model_builder_create("tiny_mlp", executable, &builder));
  mrt_executable_destroy(executable); /* the builder keeps what it needs */
  const uint64_t load_programs[1] = {0}, main_programs[1] = {1};
  CHECK(mrt_model_builder_set_program_flow(builder, MRT_PHASE_LOAD, load_programs, 1));
  CHECK(mrt_model_builder_set_program_flow(builder, MRT_PHASE_MAIN, main_programs, 1));
  const struct {
    const char *name;
    int64_t shape[2];
    size_t rank;
    const float *data;
  } weights[4] = {{"w1", {IN, HIDDEN}, 2, w1}, {"b1", {HIDDEN}, 1, b1},
                  {"w2", {HIDDEN, OUT}, 2, w2}, {"b2", {OUT}, 1, b2}};
  for (int i = 0; i < 4; ++i) {
    mrt_anchor_config anchor;
    mrt_anchor_config_init(&anchor);
    anchor.handle = weights[i].name;
    anchor.shape = weights[i].shape;
    anchor.rank = weights[i].rank;
    anchor.programs = load_programs;
    anchor.num_programs = 1;
    anchor.data_source = MRT_DATA_SOURCE_TENSOR_DATA;
    CHECK(mrt_model_builder_add_anchor(builder, &anchor));
    const uint64_t bytes = (uint64_t)(weights[i].rank == 2 ? weights[i].shape[0] * weights[i].shape[1]
                                                            : weights[i].shape[0]) * sizeof(float);
    CHECK(mrt_model_builder_add_tensor_data(builder, weights[i].name, MRT_F32, weights[i].shape,
                                            weights[i].rank, weights[i].data, bytes));
  }
  const int64_t x_dims[2] = {BATCH, IN}, y_dims[2] = {BATCH, OUT};
  mrt_anchor_config anchor;
  mrt_anchor_config_init(&anchor);
  anchor.handle = "x";
  anchor.shape = x_dims;
  anchor.rank = 2;
  anchor.programs = main_programs;
  anchor.num_programs = 1;
  CHECK(mrt_model_builder_add_anchor(builder, &anchor));
  anchor.handle = "y";
  anchor.shape = y_dims;
  CHECK(mrt_model_builder_add_anchor(builder, &anchor));
  mrt_model *model = NULL;
  CHECK(mrt_model_builder_build(builder, &model));
  mrt_model_builder_destroy(builder);
  return model;
}

/* y = softmax(relu(x.w1 + b1).w2 + b2) for one sample, in double precision. */
static void reference(const float *x, double *y) {
  double hidden[HIDDEN], top = -INFINITY, total = 0;
  for (int j = 0; j < HIDDEN; ++j) {
    double sum = b1[j];
    for (int i = 0; i < IN; ++i) sum += (double)x[i] * w1[i * HIDDEN + j];
    hidden[j] = sum > 0 ? sum : 0;
  }
  for (int k = 0; k < OUT; ++k) {
    double sum = b2[k];
    for (int j = 0; j < HIDDEN; ++j) sum += hidden[j] * w2[j * OUT + k];
    y[k] = sum;
    if (sum > top) top = sum;
  }
  for (int k = 0; k < OUT; ++k) total += (y[k] = exp(y[k] - top));
  for (int k = 0; k < OUT; ++k) y[k] /= total;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: build_model OUT.popef\n");
    return 2;
  }
  CHECK(mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR));
  fill(w1, IN * HIDDEN, 1, 0.5f);
  fill(b1, HIDDEN, 2, 0.1f);
  fill(w2, HIDDEN * OUT, 3, 0.5f);
  fill(b2, OUT, 4, 0.1f);

  mrt_model *built = build();
  CHECK(mrt_model_write(built, argv[1]));
  mrt_model_destroy(built);
  printf("wrote %s\n", argv[1]);

  /* Served from the file, as any model would be. */
  mrt_model_runner *runner = NULL;
  const char *paths[1] = {argv[1]};
  CHECK(mrt_model_runner_create_from_files(paths, 1, NULL, &runner));
  int failures = 0;
  for (int round = 0; round < 3; ++round) {
    float x[BATCH * IN], y[BATCH * OUT];
    fill(x, BATCH * IN, 100 + (unsigned)round, 2.0f);
    mrt_tensor_view input = {"x", x, sizeof x}, output = {"y", y, sizeof y};
    CHECK(mrt_model_runner_execute(runner, &input, 1, &output, 1, 0));
    const int failures_before = failures;
    for (int b = 0; b < BATCH; ++b) {
      double expected[OUT];
      reference(x + b * IN, expected);
      for (int k = 0; k < OUT; ++k) {
        if (fabs(y[b * OUT + k] - expected[k]) > 1e-5) {
          fprintf(stderr, "build_model: request %d sample %d y[%d] = %.7f, expected %.7f\n", round, b, k,
                  y[b * OUT + k], expected[k]);
          ++failures;
        }
      }
    }
    if (failures == failures_before) {
      printf("request %d: y[0] = [%.4f %.4f %.4f %.4f] matches the reference\n", round, y[0], y[1], y[2], y[3]);
    }
  }
  mrt_model_runner_destroy(runner);
  if (failures) return 1;
  printf("build_model: ok\n");
  return 0;
}
