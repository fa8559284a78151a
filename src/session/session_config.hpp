// SessionConfig and LaunchPolicy (seed 001, 10.2.4): how a Session gets its
// device and which checks it makes when created.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <hwsim/executable.hpp>

#include "device/device_wait_config.hpp"
#include "session/predicates.hpp"

namespace mrt {

enum class LaunchPolicy {
  Immediate,  // the constructor gets a device for the model and loads the executable
  Deferred,   // the user gets a device and calls bindToDevice()
};

struct SessionConfig {
  LaunchPolicy policy = LaunchPolicy::Deferred;
  // Which input anchors with PopEF TensorData/FeedData use it (default: all).
  PopefDataUsagePredicate pred_tensor_data = null_popef_data_usage_predicate;
  // Compare the model's package hash with popef::runtimePackageHash().
  bool check_package_hash = true;
  // How an Immediate session waits for a device.
  DeviceWaitConfig wait_config = {};
  // "unlimited" or an unsigned integer: how many host syncs (input stream
  // transfers) the session may prepare ahead, through the engine's stream
  // prefetch, while a run computes (session/look_ahead.hpp). "unlimited":
  // as many as the engine takes (one per stream) when the executable has IO
  // tiles (exchange.numIOTiles), where a prepared transfer overlaps
  // compute; none without IO tiles, where it could only take the caller's
  // data earlier. 0: never (the seed's cure for deadlocks of prefetching
  // models).
  std::string max_look_ahead = "unlimited";
  // Which model of the PopEF files the path constructor loads: one of
  // several in a file (a fused PopEF, docs/popef.md "Fused models"); an
  // unknown name is NotFound listing the models the files hold. Empty (the
  // default): the files' only model. Given a model, the name must be its
  // own or empty (InvalidArgument otherwise).
  std::string model_name;
  // The model's executable, already read from it and checked against its
  // metadata by the caller (a ModelRunner does so once for all its
  // replicas: deserializing and verifying the executable is much of what
  // creating a Session costs). Empty (the default): the Session reads it.
  hwsim::Executable executable;
};

// Throws mrt::Error(InvalidArgument) naming the bad value for a malformed
// max_look_ahead or wait_config.
void validate(const SessionConfig &config);

// max_look_ahead of a validated config as a number; nullopt for "unlimited".
std::optional<std::uint64_t> lookAheadLimit(const SessionConfig &config);

}  // namespace mrt
