/* mlp_example: the mlp example model end to end through libmrt's C API.
 *
 *   mlp_example MODEL.popef                  load, run sync and async, check
 *   mlp_example MODEL.popef --check-errors   show what misuse returns
 *
 * The reference is computed here, in C, from the model's own weights (its
 * TensorData blobs w1, b1, w2, b2): probs = softmax(relu(image.w1 + b1).w2 + b2).
 * Exit status 0 only if every check passed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrt_c.h"

enum { IMAGE = 784, HIDDEN = 128, CLASSES = 10 };

/* Prints a failed call with the library's message and returns 1. */
static int failed(const char *what, mrt_status status) {
  fprintf(stderr, "mlp_example: %s failed: %s\n  %s\n", what, mrt_status_string(status),
          mrt_last_error_message());
  return 1;
}

/* A TensorData blob of the model as floats; NULL (and a message) if it is
 * missing or has another size. Borrowed from the model. */
static const float *weights(const mrt_model *model, const char *name, size_t count) {
  const void *data = NULL;
  uint64_t size = 0;
  mrt_status s = mrt_model_tensor_data(model, name, &data, &size);
  if (s != MRT_OK) {
    failed("mrt_model_tensor_data", s);
    return NULL;
  }
  if (size != count * sizeof(float)) {
    fprintf(stderr, "mlp_example: TensorData %s has %llu bytes, expected %zu\n", name,
            (unsigned long long)size, count * sizeof(float));
    return NULL;
  }
  return data;
}

/* softmax(relu(image.w1 + b1).w2 + b2) in double precision. */
static int reference(const mrt_model *model, const float *image, double *probs) {
  const float *w1 = weights(model, "w1", IMAGE * HIDDEN), *b1 = weights(model, "b1", HIDDEN);
  const float *w2 = weights(model, "w2", HIDDEN * CLASSES), *b2 = weights(model, "b2", CLASSES);
  if (!w1 || !b1 || !w2 || !b2) return 1;
  double hidden[HIDDEN], top = -INFINITY, total = 0;
  for (int j = 0; j < HIDDEN; ++j) {
    double sum = b1[j];
    for (int i = 0; i < IMAGE; ++i) sum += (double)image[i] * w1[i * HIDDEN + j];
    hidden[j] = sum > 0 ? sum : 0;
  }
  for (int k = 0; k < CLASSES; ++k) {
    double sum = b2[k];
    for (int j = 0; j < HIDDEN; ++j) sum += hidden[j] * w2[j * CLASSES + k];
    probs[k] = sum;
    if (sum > top) top = sum;
  }
  for (int k = 0; k < CLASSES; ++k) total += (probs[k] = exp(probs[k] - top));
  for (int k = 0; k < CLASSES; ++k) probs[k] /= total;
  return 0;
}

static int argmax_f(const float *v) {
  int best = 0;
  for (int k = 1; k < CLASSES; ++k) if (v[k] > v[best]) best = k;
  return best;
}
static int argmax_d(const double *v) {
  int best = 0;
  for (int k = 1; k < CLASSES; ++k) if (v[k] > v[best]) best = k;
  return best;
}

/* Same argmax and every probability within 1e-5 relative (plus a tiny
 * absolute floor for probabilities near zero). */
static int matches(const char *how, const float *probs, const double *expected) {
  int ok = argmax_f(probs) == argmax_d(expected);
  for (int k = 0; k < CLASSES; ++k) {
    if (fabs(probs[k] - expected[k]) > 1e-5 * fabs(expected[k]) + 1e-7) {
      fprintf(stderr, "mlp_example: %s probs[%d] = %.8f, reference %.8f\n", how, k, probs[k], expected[k]);
      ok = 0;
    }
  }
  if (!ok) fprintf(stderr, "mlp_example: %s result does not match the reference\n", how);
  return ok;
}

static int run(const char *path) {
  int rc = 1;
  mrt_model *model = NULL;
  mrt_model_runner *runner = NULL;
  mrt_future *future = NULL;
  mrt_status s;
  const char *paths[] = {path};
  if ((s = mrt_model_load(paths, 1, &model)) != MRT_OK) return failed("mrt_model_load", s);
  /* config NULL: the defaults (one replica, devices from the simulated system). */
  if ((s = mrt_model_runner_create(model, NULL, &runner)) != MRT_OK) {
    rc = failed("mrt_model_runner_create", s);
    goto done;
  }

  /* A deterministic image: a smooth ramp with a stripe pattern. */
  static float image[IMAGE];
  for (int i = 0; i < IMAGE; ++i) image[i] = (float)((i * 37) % 256) / 255.0f;
  double expected[CLASSES];
  if (reference(model, image, expected) != 0) goto done;

  float sync_probs[CLASSES], async_probs[CLASSES];
  mrt_tensor_view input = {"image", image, sizeof image};
  mrt_tensor_view output = {"probs", sync_probs, sizeof sync_probs};
  if ((s = mrt_model_runner_execute(runner, &input, 1, &output, 1, 0)) != MRT_OK) {
    rc = failed("mrt_model_runner_execute", s);
    goto done;
  }
  output.data = async_probs;
  if ((s = mrt_model_runner_execute_async(runner, &input, 1, &output, 1, 0, &future)) != MRT_OK) {
    rc = failed("mrt_model_runner_execute_async", s);
    goto done;
  }
  /* The request's own outcome comes from the future, not mrt_last_error_message. */
  if ((s = mrt_future_wait(future, -1)) != MRT_OK) {
    fprintf(stderr, "mlp_example: the async request failed: %s\n  %s\n", mrt_status_string(s),
            mrt_future_error_message(future));
    goto done;
  }
  if (matches("sync", sync_probs, expected) && matches("async", async_probs, expected)) {
    const int best = argmax_f(sync_probs);
    printf("mlp: argmax %d p=%.4f (sync and async match the reference)\n", best, sync_probs[best]);
    rc = 0;
  }
done:
  mrt_future_destroy(future);
  mrt_model_runner_destroy(runner);
  mrt_model_destroy(model);
  return rc;
}

/* One misuse: the call must fail with `expected`, and the library says why. */
static int expect_status(const char *what, mrt_status got, mrt_status expected) {
  if (got != expected) {
    fprintf(stderr, "mlp_example: %s returned %s, expected %s\n", what, mrt_status_string(got),
            mrt_status_string(expected));
    return 0;
  }
  const char *message = mrt_last_error_message();
  printf("%-24s -> %s\n  %s\n", what, mrt_status_string(got), message);
  return *message != '\0';
}

static int check_errors(const char *path) {
  mrt_model_runner *runner = NULL;
  const char *paths[] = {path};
  mrt_status s = mrt_model_runner_create_from_files(paths, 1, NULL, &runner);
  if (s != MRT_OK) return failed("mrt_model_runner_create_from_files", s);
  static float image[IMAGE], small[IMAGE / 2];
  float probs[CLASSES];
  int ok = 1;

  /* A misspelt extra input: the right one and "imagez". */
  mrt_tensor_view wrong_name[2] = {{"image", image, sizeof image}, {"imagez", image, sizeof image}};
  mrt_tensor_view output = {"probs", probs, sizeof probs};
  ok &= expect_status("wrong tensor name", mrt_model_runner_execute(runner, wrong_name, 2, &output, 1, 0),
                      MRT_NOT_FOUND);
  mrt_tensor_view wrong_size = {"image", small, sizeof small};
  ok &= expect_status("wrong buffer size", mrt_model_runner_execute(runner, &wrong_size, 1, &output, 1, 0),
                      MRT_INVALID_ARGUMENT);
  /* The runner still serves after bad requests. */
  mrt_tensor_view input = {"image", image, sizeof image};
  if ((s = mrt_model_runner_execute(runner, &input, 1, &output, 1, 0)) != MRT_OK) ok = failed("execute", s) == 0;

  /* In C a destroyed handle is a dangling pointer: the only safe habit is to
   * clear it on destroy. The library rejects the cleared (NULL) handle. */
  mrt_model_runner_destroy(runner);
  runner = NULL;
  ok &= expect_status("use after destroy", mrt_model_runner_execute(runner, &input, 1, &output, 1, 0),
                      MRT_INVALID_ARGUMENT);
  const char *missing[] = {"/nonexistent/mlp.popef"};
  mrt_model *model = NULL;
  ok &= expect_status("missing model file", mrt_model_load(missing, 1, &model), MRT_NOT_FOUND);
  puts(ok ? "misuse: every error carried its status code and message" : "misuse: unexpected results");
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--check-errors") != 0)) {
    fprintf(stderr, "usage: %s MODEL.popef [--check-errors]\n  (write the model with: mrt-gen mlp -o mlp.popef)\n",
            argv[0]);
    return 2;
  }
  mrt_status s = mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR);
  if (s != MRT_OK) return failed("mrt_check_version", s);
  return argc == 3 ? check_errors(argv[1]) : run(argv[1]);
}
