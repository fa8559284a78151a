// Helpers of the compatibility-layer tests: a private simulated IPU system
// per test process, the example models mrt-gen wrote at build time, and the
// reference math of mlp and add_one from the model's own TensorData. Used by
// the GoogleTest suite and by the seed programs (plain main()s).
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "mlp_reference.hpp"
#include "popef/Model.hpp"

namespace compat_test {

// Points the simulated system at a fresh lock directory with 4 IPUs, so no
// other test process can hold our devices; the directory is removed at exit.
// Call before any DeviceManager; later calls keep the first directory (each
// test file of a suite registers this).
inline void usePrivateSystem() {
  static std::string dir;
  if (!dir.empty()) return;
  dir = std::filesystem::temp_directory_path().string() + "/mrt_compat_locks_XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    std::perror("mkdtemp");
    std::exit(2);
  }
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  });
  ::setenv("MRT_HWSIM_LOCK_DIR", dir.c_str(), 1);
  ::setenv("MRT_HWSIM_IPUS", "4", 1);
}

// A model file written by mrt-gen: add_one, mlp (full size) or *_t4 (4 tiles).
inline std::string modelPath(const std::string &name) {
  return std::string(MRT_COMPAT_TEST_MODELS) + "/" + name + ".popef";
}

inline constexpr std::size_t kImage = 784, kHidden = 128, kClasses = 10, kAddOneN = 16;

// TensorData `name` of the model as floats.
inline std::vector<float> floats(const popef::Model &model, const std::string &name) {
  const auto bytes = model.tensorData(name);
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// softmax(relu(image.w1 + b1).w2 + b2), in double; b2 may be overridden.
inline std::vector<double> mlpReference(const popef::Model &model, const std::vector<float> &image,
                                        const std::vector<float> *b2_override = nullptr) {
  const auto w1 = floats(model, "w1"), b1 = floats(model, "b1");
  const auto w2 = floats(model, "w2"), b2 = b2_override ? *b2_override : floats(model, "b2");
  return mrt_test::mlpProbabilities(image.data(), w1.data(), b1.data(), w2.data(), b2.data());
}

inline std::vector<float> randomFloats(std::size_t n, unsigned seed, float low = -2.0f, float high = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(n);
  for (auto &v : values) v = dist(rng);
  return values;
}

// Largest |actual[i] - expected[i]|.
inline double maxError(const float *actual, const std::vector<double> &expected) {
  double worst = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) worst = std::max(worst, std::abs(actual[i] - expected[i]));
  return worst;
}

}  // namespace compat_test

namespace compat_test {

// The seed programs' assertion: prints what failed and exits 1.
inline void require(bool condition, const std::string &what) {
  if (!condition) {
    std::fprintf(stderr, "FAILED: %s\n", what.c_str());
    std::exit(1);
  }
}

}  // namespace compat_test
