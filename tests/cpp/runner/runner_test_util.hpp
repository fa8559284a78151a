// Helpers of the runner tests: a private simulated IPU system per test
// process (MRT_HWSIM_LOCK_DIR in a fresh temp dir, MRT_HWSIM_IPUS), example
// models compiled for 4 tiles, reference math, random inputs and error
// capture.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "internal_example_models.hpp"
#include "runner/model_runner.hpp"

namespace mrt::runner_test {

// Optimised and not under a sanitizer: stress tests run their full count of
// requests only then (sanitizers slow the simulated device ~25x).
#if defined(NDEBUG) && !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
inline constexpr bool kFullSpeedBuild = true;
#else
inline constexpr bool kFullSpeedBuild = false;
#endif

// Points the simulated system at a private lock directory with `ipus` IPUs,
// so no other test process can hold our devices. Once per process.
class SimulatedSystem : public ::testing::Environment {
 public:
  explicit SimulatedSystem(unsigned ipus = 4) : ipus_(ipus) {}
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mrt_runner_locks_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ::setenv("MRT_HWSIM_LOCK_DIR", dir_.c_str(), 1);
    ::setenv("MRT_HWSIM_IPUS", std::to_string(ipus_).c_str(), 1);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

 private:
  unsigned ipus_;
  std::string dir_;
};

inline std::shared_ptr<popef::Model> exampleModel(const std::string &name, std::size_t batch = 1,
                                                  std::size_t size = 16) {
  example_models::ExampleOptions options;
  options.batch = batch;
  options.size = size;
  return example_models::buildExampleModel(name, options);
}

inline std::vector<float> tensorFloats(const popef::Model &model, const std::string &name) {
  const popef::TensorData &data = model.tensorData(name);
  std::vector<float> values(data.size() / sizeof(float));
  std::memcpy(values.data(), data.data(), data.size());
  return values;
}

inline std::vector<float> randomFloats(std::mt19937 &rng, std::size_t count, float lo = -1.f, float hi = 1.f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> values(count);
  for (float &v : values) v = dist(rng);
  return values;
}

inline ConstTensorMemoryView constView(const std::vector<float> &v) { return {v.data(), v.size() * sizeof(float)}; }
inline TensorMemoryView view(std::vector<float> &v) { return {v.data(), v.size() * sizeof(float)}; }

inline std::vector<float> floatsOf(const TensorMemory &memory) {
  std::vector<float> values(memory.data_size_bytes / sizeof(float));
  std::memcpy(values.data(), memory.data.get(), memory.data_size_bytes);
  return values;
}

// The mlp's math on the host: softmax(relu(image.w1 + b1).w2 + b2), per sample.
class MlpReference {
 public:
  explicit MlpReference(const popef::Model &model)
      : w1_(tensorFloats(model, "w1")), b1_(tensorFloats(model, "b1")), w2_(tensorFloats(model, "w2")),
        b2_(tensorFloats(model, "b2")) {}
  MlpReference(std::vector<float> w1, std::vector<float> b1, std::vector<float> w2, std::vector<float> b2)
      : w1_(std::move(w1)), b1_(std::move(b1)), w2_(std::move(w2)), b2_(std::move(b2)) {}

  std::vector<float> operator()(const std::vector<float> &images) const {
    const std::size_t samples = images.size() / 784;
    std::vector<float> probs(samples * 10);
    std::vector<double> hidden(128);
    for (std::size_t s = 0; s < samples; ++s) {
      for (std::size_t j = 0; j < 128; ++j) {
        double acc = b1_[j];
        for (std::size_t i = 0; i < 784; ++i) acc += double(images[s * 784 + i]) * w1_[i * 128 + j];
        hidden[j] = std::max(acc, 0.0);
      }
      double logits[10];
      double top = -1e300;
      for (std::size_t k = 0; k < 10; ++k) {
        double acc = b2_[k];
        for (std::size_t j = 0; j < 128; ++j) acc += hidden[j] * w2_[j * 10 + k];
        logits[k] = acc;
        top = std::max(top, acc);
      }
      double sum = 0;
      for (double &l : logits) sum += (l = std::exp(l - top));
      for (std::size_t k = 0; k < 10; ++k) probs[s * 10 + k] = static_cast<float>(logits[k] / sum);
    }
    return probs;
  }

 private:
  std::vector<float> w1_, b1_, w2_, b2_;
};

inline void expectNear(const std::vector<float> &actual, const std::vector<float> &expected, float tolerance = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], tolerance) << "element " << i;
  }
}

inline std::vector<float> plusOne(std::vector<float> x) {
  for (float &v : x) v += 1.f;
  return x;
}

inline Error captureError(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const Error &error) {
    return error;
  }
  ADD_FAILURE() << "expected an mrt::Error";
  return Error(ErrorCode::Ok, "no error");
}

}  // namespace mrt::runner_test
