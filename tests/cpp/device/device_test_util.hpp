// Helpers of the device tests: a private lock directory per test, so tests
// never see each other's (or other processes') attached IPUs, managers of a
// given simulated system in it, example models, and error capture.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "device/device_manager.hpp"
#include "internal_example_models.hpp"

namespace mrt::device_test {

class LockDir {
 public:
  LockDir() {
    std::string pattern = ::testing::TempDir() + "mrt_device_locks_XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
    path_ = pattern;
  }
  ~LockDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  LockDir(const LockDir &) = delete;
  LockDir &operator=(const LockDir &) = delete;
  const std::string &path() const { return path_; }

 private:
  std::string path_;
};

inline DeviceManager managerIn(const LockDir &dir, unsigned ipus = 4,
                               hwsim::IpuVersion version = hwsim::IpuVersion::Ipu2) {
  hwsim::SystemConfig config;
  config.numIpus = ipus;
  config.ipuVersion = version;
  config.lockDirectory = dir.path();
  return DeviceManager(config);
}

// add_one on `ipus` IPUs of `version`: the cheapest example model.
inline std::shared_ptr<const popef::Model> addOneModel(unsigned ipus = 1, std::uint32_t version = 2) {
  example_models::ExampleOptions options;
  options.ipus = ipus;
  options.ipuVersion = version;
  options.tiles = 4;
  return example_models::buildExampleModel("add_one", options);
}

// The same model with other device options in its metadata.
inline std::shared_ptr<const popef::Model> withDeviceOptions(const popef::Model &model,
                                                             DeviceOptions options) {
  popef::ModelParts parts;
  parts.metadata = model.metadata;
  parts.metadata.setDeviceOptions(std::move(options));
  parts.executable = model.executable();
  parts.tensorData = model.tensorDataList();
  parts.feedData = model.feedDataList();
  parts.opaqueBlobs = model.opaqueBlobs();
  return std::make_shared<const popef::Model>(std::move(parts));
}

// Runs fn and returns the mrt::Error it threw; fails the test otherwise.
inline Error errorOf(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const Error &error) {
    return error;
  } catch (const std::exception &other) {
    ADD_FAILURE() << "expected mrt::Error, got: " << other.what();
    return Error(ErrorCode::Internal, other.what());
  }
  ADD_FAILURE() << "expected mrt::Error, nothing was thrown";
  return Error(ErrorCode::Ok, "nothing thrown");
}

}  // namespace mrt::device_test
