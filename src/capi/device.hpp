// The C handles of the device part of the C API, shared with the session
// glue: a device handle holds one shared reference to an mrt::Device, so
// sessions keep using the device after mrt_device_destroy().
#pragma once

#include <memory>

#include "device/device.hpp"
#include "device/device_wait_config.hpp"
#include "mrt_c.h"

struct mrt_device {
  std::shared_ptr<mrt::Device> device;
};

namespace mrt::capi {

// The wait configuration a caller passed (NULL: the defaults, NO_WAIT),
// checked field by field; `argument` names it in messages.
DeviceWaitConfig waitConfigOf(const mrt_device_wait_config *config, const char *argument);

}  // namespace mrt::capi
