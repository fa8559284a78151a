// The example mlp model (mrt-gen mlp: 784 -> 128 ReLU -> 10 softmax) in
// double precision, for the C++ test suites that check its outputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace mrt_test {

inline constexpr std::size_t kMlpImage = 784, kMlpHidden = 128, kMlpClasses = 10;

// Class probabilities of one image; the weights are row-major [in, out].
inline std::vector<double> mlpProbabilities(const float *image, const float *w1, const float *b1, const float *w2,
                                            const float *b2) {
  std::vector<double> hidden(kMlpHidden), probs(kMlpClasses);
  for (std::size_t j = 0; j < kMlpHidden; ++j) {
    double sum = b1[j];
    for (std::size_t i = 0; i < kMlpImage; ++i) sum += double(image[i]) * w1[i * kMlpHidden + j];
    hidden[j] = std::max(sum, 0.0);
  }
  for (std::size_t k = 0; k < kMlpClasses; ++k) {
    double sum = b2[k];
    for (std::size_t j = 0; j < kMlpHidden; ++j) sum += hidden[j] * w2[j * kMlpClasses + k];
    probs[k] = sum;
  }
  const double top = *std::max_element(probs.begin(), probs.end());
  double total = 0;
  for (auto &p : probs) total += (p = std::exp(p - top));
  for (auto &p : probs) p /= total;
  return probs;
}

}  // namespace mrt_test
