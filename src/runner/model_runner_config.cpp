#include "runner/model_runner_config.hpp"

#include <cerrno>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "common/error.hpp"

namespace mrt {

namespace {
// "2", or for a replicated model "2 x the model's 2 replicas = 4".
std::string replicasText(const ModelRunnerConfig &config, unsigned model_replicas) {
  if (model_replicas == 1) return fmt::format("{}", config.replication_factor);
  return fmt::format("{} x the model's {} replicas = {}", config.replication_factor, model_replicas,
                     std::uint64_t{config.replication_factor} * model_replicas);
}
}  // namespace

void validate(const ModelRunnerConfig &config, unsigned model_replicas) {
  if (config.replication_factor == 0) {
    throw Error(ErrorCode::InvalidArgument, "ModelRunnerConfig: replication_factor must be at least 1, got 0");
  }
  const std::uint64_t replicas = std::uint64_t{config.replication_factor} * model_replicas;
  for (const auto &[replica, device] : config.replica_to_device) {
    if (replica >= replicas) {
      throw Error(ErrorCode::InvalidArgument,
                  "ModelRunnerConfig: replica_to_device names replica {}, but replication_factor is {}", replica,
                  replicasText(config, model_replicas));
    }
    if (replica % model_replicas != 0) {
      throw Error(ErrorCode::InvalidArgument,
                  "ModelRunnerConfig: replica_to_device names replica {}, which shares the device of replica {} (the "
                  "model has {} replicas per device): give the device for replica {}",
                  replica, replica - replica % model_replicas, model_replicas, replica - replica % model_replicas);
    }
    if (!device) {
      throw Error(ErrorCode::InvalidArgument, "ModelRunnerConfig: replica_to_device[{}] is null", replica);
    }
  }
  for (const auto &[replica, outputs] : config.replica_to_save_programs_outputs) {
    if (replica >= replicas) {
      throw Error(ErrorCode::InvalidArgument,
                  "ModelRunnerConfig: replica_to_save_programs_outputs names replica {}, but replication_factor is {}",
                  replica, replicasText(config, model_replicas));
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

namespace {
std::string milliseconds(std::chrono::nanoseconds d) {
  return fmt::format("{} ms", std::chrono::duration<double, std::milli>(d).count());
}
}  // namespace

std::string describe(const ModelRunnerConfig &config) {
  // A timeout_ns of 0 waits forever; a batch_size_timeout_ns of 0 pads at once.
  std::string text =
      fmt::format("timeout {}", config.timeout_ns.count() == 0 ? "none (wait forever)" : milliseconds(config.timeout_ns));
  if (config.thread_safe) text += ", thread_safe";
  if (batchingEnabled(config)) {
    text += fmt::format(", batching_dim {}", config.batching_dim);
    if (config.batch_size_timeout_ns != std::chrono::nanoseconds::max())
      text += fmt::format(", batch_size_timeout {}", milliseconds(config.batch_size_timeout_ns));
  }
  if (config.auto_reset) text += ", auto_reset";
  if (config.run_save_programs) text += ", run_save_programs";
  if (!config.frozen_inputs.empty()) text += fmt::format(", {} frozen input(s)", config.frozen_inputs.size());
  text += fmt::format(", rings of {} x batch, max_look_ahead {}", config.ring_buffer_size_multiplier,
                      config.max_look_ahead);
  return text;
}

}  // namespace mrt
