#include "runner/model_runner_config.hpp"

#include <cerrno>
#include <cstdlib>

#include "common/error.hpp"

namespace mrt {

void validate(const ModelRunnerConfig &config) {
  if (config.replication_factor == 0) {
    throw Error(ErrorCode::InvalidArgument, "ModelRunnerConfig: replication_factor must be at least 1, got 0");
  }
  for (const auto &[replica, device] : config.replica_to_device) {
    if (replica >= config.replication_factor) {
      throw Error(ErrorCode::InvalidArgument,
                  "ModelRunnerConfig: replica_to_device names replica {}, but replication_factor is {}", replica,
                  config.replication_factor);
    }
    if (!device) {
      throw Error(ErrorCode::InvalidArgument, "ModelRunnerConfig: replica_to_device[{}] is null", replica);
    }
  }
  for (const auto &[replica, outputs] : config.replica_to_save_programs_outputs) {
    if (replica >= config.replication_factor) {
      throw Error(ErrorCode::InvalidArgument,
                  "ModelRunnerConfig: replica_to_save_programs_outputs names replica {}, but replication_factor is {}",
                  replica, config.replication_factor);
    }
  }
  if (config.timeout_ns.count() < 0) {
    throw Error(ErrorCode::InvalidArgument, "ModelRunnerConfig: timeout_ns must not be negative, got {}",
                config.timeout_ns.count());
  }
  if (config.batch_size_timeout_ns.count() < 0 || config.data_parallel_timeout_ns.count() < 0) {
    throw Error(ErrorCode::InvalidArgument,
                "ModelRunnerConfig: batch_size_timeout_ns and data_parallel_timeout_ns must not be negative, got {} "
                "and {}",
                config.batch_size_timeout_ns.count(), config.data_parallel_timeout_ns.count());
  }
  if (config.ring_buffer_size_multiplier == 0) {
    throw Error(ErrorCode::InvalidArgument, "ModelRunnerConfig: ring_buffer_size_multiplier must be at least 1, got 0");
  }
  for (const auto &[name, view] : config.frozen_inputs) {
    if (view.data == nullptr && view.data_size_bytes != 0) {
      throw Error(ErrorCode::InvalidArgument, "ModelRunnerConfig: frozen input '{}' has null data", name);
    }
  }
}

}  // namespace mrt
