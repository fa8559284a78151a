// ModelRunnerConfig (seed 001, 10.1.3): every option of the seed with its
// default, and the memory maps the runner's execute calls take and return.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>

#include "device/device.hpp"
#include "device/device_wait_config.hpp"
#include "runner/tensor_memory.hpp"

namespace mrt {

// Tensor name -> the caller's input bytes (execute inputs, frozen inputs).
using InputMemoryView = std::unordered_map<std::string, ConstTensorMemoryView>;
// Tensor name -> caller-allocated output memory.
using OutputMemoryView = std::unordered_map<std::string, TensorMemoryView>;
// Tensor name -> output memory the library allocated.
using OutputMemory = std::unordered_map<std::string, TensorMemory>;

using ReplicaIdToOutputMemoryView = std::unordered_map<unsigned, OutputMemoryView>;
using ReplicaIdToDevice = std::unordered_map<unsigned, std::shared_ptr<Device>>;

// Called on a replica's device thread when it timed out waiting for input
// `tensor_id`. It may point `inputs` / `outputs` at maps whose names are the
// queues to flush (the values are ignored); left null, every queue is flushed.
using FlushCallback = std::function<void(const std::string &tensor_id, const InputMemoryView *&inputs,
                                         const OutputMemoryView *&outputs)>;

struct ModelRunnerConfig {
  // Copies of the model: each has its own device and Session. A model
  // compiled with replication factor R (in-model replication) brings R
  // replicas per copy, on one device of R x (IPUs per replica) IPUs, so the
  // runner has replication_factor x R replicas; replica id k is in-model
  // replica k % R of copy k / R. Every replica has its own queues, device
  // thread, statistics and Save outputs, and serves the requests addressed
  // to its id.
  unsigned replication_factor = 1;
  // Run the Save programs when the runner is destroyed (after draining the
  // requests in flight), writing their outputs to
  // replica_to_save_programs_outputs[replica][name] when given.
  bool run_save_programs = false;
  // Concurrent execute calls are allowed (each replica's enqueue is done
  // under its mutex). Without it, calls must not overlap; the runner still
  // takes the (then uncontended) mutex because the device thread's timeout
  // flushes share it.
  bool thread_safe = false;
  // Data loaded once, overriding the model's TensorData (weights) or fixing
  // an input for every execution. Copied when the runner is created.
  InputMemoryView frozen_inputs = {};
  ReplicaIdToOutputMemoryView replica_to_save_programs_outputs = {};
  // Devices for some replicas; the others get one from DeviceManager. With
  // in-model replication a device serves a whole copy: it is given for the
  // copy's first replica id (a multiple of the model's replication factor).
  ReplicaIdToDevice replica_to_device = {};
  DeviceWaitConfig device_wait_config = {};
  bool check_package_hash = true;
  // How long the device waits for input before the timeout callback flushes
  // dummy data so it can progress; 0: wait forever.
  std::chrono::nanoseconds timeout_ns = std::chrono::seconds(5);
  bool validate_io_params = true;
  // Dynamic batch sizing along this dimension of every execute input and
  // output (which must all have it, of the same size: the model's batch):
  // a request may hold any number of samples, which the queues pack into
  // model batches or split across them. Along dimension 0 a sample is one
  // contiguous block; along d > 0 a request is a tensor of the model's shape
  // with its sample count in dimension d, and each sample is gathered from
  // (scattered to) every row of the dimensions before d. max(): the
  // dimension the model records (popef Metadata::batchingDim, e.g. from
  // mrt_onnx_options.batching_dim) if any, else disabled, and every input
  // must hold a whole number of model batches (along dimension 0, one after
  // the other). ModelRunner::config() reports the dimension in effect.
  unsigned batching_dim = std::numeric_limits<unsigned>::max();
  // After a device error: reset the device, reload and go on serving.
  bool auto_reset = false;
  std::string max_look_ahead = "unlimited";
  // Ring entries per anchor: multiplier x the model batch size.
  unsigned ring_buffer_size_multiplier = 2;
  // Flush on timeout only while a request waits for its outputs.
  bool flush_on_waiting_outputs = false;
  // With batching: pad a partial batch after waiting this long for more.
  std::chrono::nanoseconds batch_size_timeout_ns = std::chrono::nanoseconds::max();
  // With batching: flush after waiting this long for any input at all.
  std::chrono::nanoseconds data_parallel_timeout_ns = std::chrono::nanoseconds::max();
  // Use batch_size_timeout_ns and data_parallel_timeout_ns in the timeout
  // callback (a finite batch_size_timeout_ns also enables it).
  bool is_batch_size_timeout_enabled = false;
  // Request time traces kept per replica for the statistics; 0: unbounded.
  std::size_t request_tracepoints_buffer_size = 1000;
  FlushCallback flush_callback = nullptr;
  // Which model of the PopEF files the path constructors load (as
  // SessionConfig::model_name: one model of a fused PopEF; empty: the only
  // one). Given a model, the name must be its own or empty.
  std::string model_name;
};

// Throws mrt::Error(InvalidArgument) naming the bad option and value.
// model_replicas: the model's own replication factor (replica ids run up to
// replication_factor x model_replicas).
void validate(const ModelRunnerConfig &config, unsigned model_replicas = 1);

// The options that shape serving, for the lifecycle log: "timeout 5000 ms,
// thread_safe, batching_dim 0, ...".
std::string describe(const ModelRunnerConfig &config);

// True if config asks for dynamic batch sizing.
inline bool batchingEnabled(const ModelRunnerConfig &config) {
  return config.batching_dim != std::numeric_limits<unsigned>::max();
}

}  // namespace mrt
