// poplar::Device: what model_runtime::Device wraps and device() returns.
// libmrt has no Poplar: this holds one attached simulated device (an
// mrt::Device), move-only like Poplar's; a default-constructed one holds
// none. Poplar's own members (getTarget, attach, ...) are not here.
#pragma once

#include <utility>

#include "mrt.hpp"

namespace poplar {

class Device {
 public:
  Device() = default;
  // libmrt extension: the simulated device this one is.
  explicit Device(mrt::Device device) : device_(std::move(device)) {}
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  Device(Device &&) = default;
  Device &operator=(Device &&) = default;

  // libmrt extensions: whether it holds a device, and that device.
  explicit operator bool() const noexcept { return static_cast<bool>(device_); }
  const mrt::Device &mrtDevice() const { return device_; }

 private:
  mrt::Device device_;
};

}  // namespace poplar
