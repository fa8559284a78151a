// The C handles of the device part of the C API, shared with the session
// glue: a device handle holds one shared reference to an mrt::Device, so
// sessions keep using the device after mrt_device_destroy().
#pragma once

#include <memory>

#include "device/device.hpp"
#include "mrt_c.h"

struct mrt_device {
  std::shared_ptr<mrt::Device> device;
};
