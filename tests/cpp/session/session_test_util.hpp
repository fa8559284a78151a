// Helpers of the session tests: example models compiled for 4 tiles (so
// they run on small IPU Model devices, never busy and outside the pool),
// the device for them, float buffers and error capture.
#pragma once

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "device/device_manager.hpp"
#include "internal_example_models.hpp"
#include "session/session.hpp"

namespace mrt::session_test {

inline std::shared_ptr<const popef::Model> exampleModel(const std::string &name, std::size_t batch = 1) {
  example_models::ExampleOptions options;
  options.batch = batch;
  options.tiles = 4;
  return example_models::buildExampleModel(name, options);
}

// A manager of a system without pool IPUs: only IPU Model devices.
inline DeviceManager ipuModelManager() {
  hwsim::SystemConfig config;
  config.numIpus = 0;
  return DeviceManager(config);
}

inline std::shared_ptr<Device> smallDevice(const std::shared_ptr<const popef::Model> &model) {
  return ipuModelManager().createSmallIpuModelDevice(model);
}

inline std::vector<float> floatsOf(const popef::TensorData &data) {
  std::vector<float> values(data.size() / sizeof(float));
  std::memcpy(values.data(), data.data(), data.size());
  return values;
}

// Callbacks that copy from / into a vector the test owns.
inline CallbackHandle readFrom(const std::vector<float> &source) {
  return [&source](void *p) { std::memcpy(p, source.data(), source.size() * sizeof(float)); };
}
template <typename T>
CallbackHandle writeTo(std::vector<T> &destination) {
  return [&destination](void *p) { std::memcpy(destination.data(), p, destination.size() * sizeof(T)); };
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

// The model's parts, to build variants of it.
inline popef::ModelParts partsOf(const popef::Model &model) {
  return popef::ModelParts{model.metadata,     std::nullopt,          model.executable(),
                           model.tensorDataList(), model.feedDataList(), model.opaqueBlobs()};
}

}  // namespace mrt::session_test
