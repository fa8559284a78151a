/* The mlp example model's math computed in C from the model's TensorData,
 * the reference the C tests check the library's outputs against:
 * probs = softmax(relu(image . w1 + b1) . w2 + b2). */
#ifndef MRT_TEST_MLP_REFERENCE_H
#define MRT_TEST_MLP_REFERENCE_H

#include "mrt_c.h"

enum { MLP_IMAGE = 784, MLP_HIDDEN = 128, MLP_CLASSES = 10 };

typedef struct mlp_weights {
  const float *w1, *b1, *w2, *b2; /* borrowed from the model */
} mlp_weights;

/* The weights of `model` (an mlp); fails the test if any is missing or of
 * the wrong size. */
mlp_weights mlp_weights_of(const mrt_model *model);

/* probs[MLP_CLASSES] for one image[MLP_IMAGE], in double precision. */
void mlp_reference(const mlp_weights *weights, const float *image, double *probs);

#endif
