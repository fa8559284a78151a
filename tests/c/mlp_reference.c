#include "mlp_reference.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static const float *tensor(const mrt_model *model, const char *name, uint64_t expected_size) {
  const void *data = NULL;
  uint64_t size = 0;
  if (mrt_model_tensor_data(model, name, &data, &size) != MRT_OK) fail_msg("%s", mrt_last_error_message());
  assert_int_equal(size, expected_size);
  return data;
}

mlp_weights mlp_weights_of(const mrt_model *model) {
  mlp_weights weights;
  weights.w1 = tensor(model, "w1", MLP_IMAGE * MLP_HIDDEN * sizeof(float));
  weights.b1 = tensor(model, "b1", MLP_HIDDEN * sizeof(float));
  weights.w2 = tensor(model, "w2", MLP_HIDDEN * MLP_CLASSES * sizeof(float));
  weights.b2 = tensor(model, "b2", MLP_CLASSES * sizeof(float));
  return weights;
}

void mlp_reference(const mlp_weights *weights, const float *image, double *probs) {
  double hidden[MLP_HIDDEN];
  for (int j = 0; j < MLP_HIDDEN; ++j) {
    double sum = weights->b1[j];
    for (int i = 0; i < MLP_IMAGE; ++i) sum += (double)image[i] * weights->w1[i * MLP_HIDDEN + j];
    hidden[j] = sum > 0 ? sum : 0;
  }
  double top = -INFINITY, total = 0;
  for (int k = 0; k < MLP_CLASSES; ++k) {
    double sum = weights->b2[k];
    for (int j = 0; j < MLP_HIDDEN; ++j) sum += hidden[j] * weights->w2[j * MLP_CLASSES + k];
    probs[k] = sum;
    if (sum > top) top = sum;
  }
  for (int k = 0; k < MLP_CLASSES; ++k) total += (probs[k] = exp(probs[k] - top));
  for (int k = 0; k < MLP_CLASSES; ++k) probs[k] /= total;
}
