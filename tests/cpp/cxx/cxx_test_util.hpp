// Helpers of the mrt.hpp tests: a private simulated IPU system per test
// process, the example models mrt-gen wrote at build time, the reference
// math of mlp (from the model's own TensorData) and an expectation that a
// call throws mrt::Error with a given code and message.
#pragma once

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mlp_reference.hpp"

#include "mrt.hpp"

namespace mrt_cxx_test {

// Points the simulated system at a private lock directory with 4 IPUs, so
// no other test process can hold our devices.
class PrivateSystem : public ::testing::Environment {
 public:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mrt_cxx_locks_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    ::setenv("MRT_HWSIM_LOCK_DIR", dir_.c_str(), 1);
    ::setenv("MRT_HWSIM_IPUS", "4", 1);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

 private:
  std::string dir_;
};

inline const ::testing::Environment *const kPrivateSystem =
    ::testing::AddGlobalTestEnvironment(new PrivateSystem);

// A model file written by mrt-gen: add_one, mlp (full size) or *_t4 (4 tiles).
inline std::string modelPath(const std::string &name) {
  return std::string(MRT_CXX_TEST_MODELS) + "/" + name + ".popef";
}

inline constexpr std::size_t kImage = 784, kHidden = 128, kClasses = 10, kAddOneN = 16;

// softmax(relu(image.w1 + b1).w2 + b2), in double, from the model's weights.
inline std::vector<double> mlpReference(const mrt::Model &model, const std::vector<float> &image) {
  const auto w1 = model.tensorDataAs<float>("w1"), b1 = model.tensorDataAs<float>("b1");
  const auto w2 = model.tensorDataAs<float>("w2"), b2 = model.tensorDataAs<float>("b2");
  return mrt_test::mlpProbabilities(image.data(), w1.data(), b1.data(), w2.data(), b2.data());
}

inline std::vector<float> randomFloats(std::size_t n, unsigned seed, float low = -2.0f, float high = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> values(n);
  for (auto &v : values) v = dist(rng);
  return values;
}

template <class Actual>
void expectNear(const Actual &actual, const std::vector<double> &expected, double tolerance) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual[i], expected[i], tolerance) << "at " << i;
}

// Counts the live copies of a callback's state, to check that the library
// frees what it was given exactly once (a double free would go negative or
// be caught by ASan; a leak would stay positive).
struct LiveCounter {
  std::atomic<int> *live;
  explicit LiveCounter(std::atomic<int> &counter) : live(&counter) { ++*live; }
  LiveCounter(const LiveCounter &other) : live(other.live) { ++*live; }
  LiveCounter &operator=(const LiveCounter &) = delete;
  ~LiveCounter() { --*live; }
};

// A deferred session of `model` bound to its own small IPU Model device.
inline mrt::Session boundSession(const mrt::Model &model, const mrt::SessionConfig &config = {}) {
  mrt::Session session(model, config);
  mrt::DeviceManager devices;
  session.bindToDevice(devices.createSmallIpuModelDevice(model));  // the session keeps the device
  return session;
}

// Copies `source` into the device's buffer (an input anchor's callback).
inline mrt::AnchorCallback feed(const std::vector<float> &source) {
  return [&source](void *buffer, uint64_t size) {
    ASSERT_EQ(size, source.size() * sizeof(float));
    std::memcpy(buffer, source.data(), size);
  };
}
// Copies the device's buffer into `sink` (an output anchor's callback).
inline mrt::AnchorCallback drain(std::vector<float> &sink) {
  return [&sink](void *buffer, uint64_t size) {
    ASSERT_EQ(size, sink.size() * sizeof(float));
    std::memcpy(sink.data(), buffer, size);
  };
}

}  // namespace mrt_cxx_test

// Expects `statement` to throw mrt::Error with status `expected_code` and a message
// containing `fragment`.
#define EXPECT_MRT_ERROR(statement, expected_code, fragment)                                        \
  do {                                                                                     \
    try {                                                                                  \
      statement;                                                                           \
      ADD_FAILURE() << #statement " did not throw";                                        \
    } catch (const mrt::Error &e) {                                                        \
      EXPECT_EQ(e.code(), expected_code) << e.what();                                               \
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)                   \
          << "message '" << e.what() << "' lacks '" << fragment << "'";                    \
    }                                                                                      \
  } while (0)
