// Device options: Poplar's OptionFlags for choosing and attaching a device,
// as a PopEF model's Metadata::deviceOptions() carries them. The simulated
// system understands the IPU-Link options a model is compiled with:
//
//   ipuLinkDomainSize     IPUs in one IPU-Link domain: a positive integer
//   ipuLinkConfiguration  default | slidingWindow | barleyTwist
//   ipuLinkTopology       mesh | torus
//
// They are checked, but do not change which simulated device is chosen: the
// simulated IPU-Link fabric connects every IPU of a device the same way.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace mrt {

using DeviceOptions = std::map<std::string, std::string>;

// Throws mrt::Error(InvalidArgument) naming the first unknown option or bad
// value; `where` prefixes the message ("model 'mlp': ").
void validateDeviceOptions(const DeviceOptions &options, std::string_view where = {});

}  // namespace mrt
