// mrt::ModelRunner (seed 001, 10.1.3): a model bound to one device per
// copy (ModelRunnerConfig::replication_factor), serving execute /
// executeAsync requests. A model compiled with replication factor R runs R
// replicas on each copy's device (see ModelRunnerConfig::replication_factor
// for the replica ids); each request goes to the replica its replica_id
// names.
//
// Data path (DESIGN.md 3): execute and executeAsync validate on the caller's
// thread, then push POINTERS to the caller's buffers into the replica's input
// and output queues and return. Each replica's device thread runs Load, then
// Main over and over; its stream callbacks copy each tensor once per
// direction between the caller's buffers and the device, and the last output
// written completes the request's Completion (the shared state behind every
// future). Buffers passed to executeAsync must stay valid until its future
// is ready.
//
// Errors (mrt::Error): InvalidArgument for bad sizes, null data, missing
// inputs or outputs and replica ids out of range; NotFound for unknown
// tensor names (the message names the value and what was expected). They
// leave the runner serving. A request fails with DeviceError when its
// replica's device fails (with auto_reset the replica is reset and serves
// the next requests; without it, the replica's pending requests fail and so
// do later calls on it), with DeadlineExceeded when, with timeout_ns set,
// the replica's programs run for Replica::hangTime() (timeout_ns, at least
// 1 s) without moving any data of the pending requests (an unbounded loop,
// stream copies on a path not taken: the run is stopped and the replica goes
// on as after a device error), and with Cancelled when the runner is
// destroyed first. Waiting for input never times out: timeouts flush.
//
// Threads: with config.thread_safe, execute* may be called concurrently from
// any number of threads. Futures may be waited on from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <hwsim/device_error.hpp>
#include <hwsim/engine.hpp>

#include "common/error.hpp"
#include "popef/model.hpp"
#include "runner/completion.hpp"
#include "runner/data_desc.hpp"
#include "runner/model_runner_config.hpp"
#include "runner/tensor_memory.hpp"

namespace mrt {

// The future of one output of an asynchronous request, with the interface of
// std::shared_future<T> (get, wait, wait_for, valid). Every output of a
// request shares the request's Completion, which completion() exposes (the C
// API's mrt_future wraps it). get() throws mrt::Error with the request's
// code and message if it failed.
template <typename T>
class OutputFuture {
 public:
  OutputFuture() = default;
  OutputFuture(std::shared_ptr<Completion> completion, T value)
      : completion_(std::move(completion)), value_(std::move(value)) {}

  bool valid() const noexcept { return completion_ != nullptr; }
  void wait() const { completion_->wait(std::chrono::nanoseconds(-1)); }
  template <typename Rep, typename Period>
  std::future_status wait_for(const std::chrono::duration<Rep, Period> &timeout) const {
    return completion_->wait(std::chrono::duration_cast<std::chrono::nanoseconds>(timeout))
               ? std::future_status::ready
               : std::future_status::timeout;
  }
  const T &get() const {
    wait();
    if (completion_->code() != ErrorCode::Ok) throw Error(completion_->code(), completion_->message());
    return value_;
  }
  const std::shared_ptr<Completion> &completion() const noexcept { return completion_; }

 private:
  std::shared_ptr<Completion> completion_;
  T value_{};
};

using OutputFutureMemoryView = std::unordered_map<std::string, OutputFuture<TensorMemoryView>>;
using OutputFutureMemory = std::unordered_map<std::string, OutputFuture<TensorMemory>>;

// One submitted request: its completion and, for library-allocated outputs,
// the memory the outputs are written to (empty for caller-provided outputs).
struct Submission {
  std::shared_ptr<Completion> completion;
  OutputMemory outputs;
};

class ModelRunner {
 public:
  explicit ModelRunner(const std::string &popef_path, const ModelRunnerConfig &config = ModelRunnerConfig{});
  explicit ModelRunner(const std::vector<std::string> &popef_paths,
                       const ModelRunnerConfig &config = ModelRunnerConfig{});
  explicit ModelRunner(std::shared_ptr<popef::Model> model, const ModelRunnerConfig &config = ModelRunnerConfig{});
  // Stops every replica (Save first, with run_save_programs, which may take
  // Replica::hangTime() per replica before its programs are stopped) and
  // completes the requests still pending with Cancelled.
  ~ModelRunner();

  ModelRunner(const ModelRunner &) = delete;
  ModelRunner &operator=(const ModelRunner &other) = delete;
  ModelRunner(ModelRunner &&) noexcept;
  ModelRunner &operator=(ModelRunner &&) noexcept;

  // Synchronous: returns (or throws) when the outputs are written.
  OutputMemory execute(const InputMemoryView &input_data, unsigned replica_id = 0);
  void execute(const InputMemoryView &input_data, const OutputMemoryView &output_data, unsigned replica_id = 0);

  // Asynchronous: one future per output, all sharing the request's Completion.
  // Returns at once unless one of the replica's queues is full: then the
  // caller runs the device itself while no other thread does, until there
  // is room (docs/runner.md, "Data path").
  OutputFutureMemory executeAsync(const InputMemoryView &input_data, unsigned replica_id = 0);
  OutputFutureMemoryView executeAsync(const InputMemoryView &input_data, const OutputMemoryView &output_data,
                                      unsigned replica_id = 0);

  // The low-level form of executeAsync (for the C API): validate, enqueue,
  // and return the request's Completion (plus library-allocated outputs).
  std::shared_ptr<Completion> submit(const InputMemoryView &input_data, const OutputMemoryView &output_data,
                                     unsigned replica_id = 0);
  Submission submit(const InputMemoryView &input_data, unsigned replica_id = 0);

  // What execute takes and returns: Main-program inputs without PopEF data
  // and not frozen, and Main-program outputs, in name order. Sizes are one
  // model batch.
  std::vector<InputDesc> getExecuteInputs() const;
  std::vector<OutputDesc> getExecuteOutputs() const;
  // Every input (output) anchor of the model, with popef_contains_tensor_data.
  std::vector<InputDesc> getModelInputs() const;
  std::vector<OutputDesc> getModelOutputs() const;

  std::shared_ptr<popef::Model> model() const;
  const ModelRunnerConfig &config() const;
  // Replicas serving requests (replica ids 0 .. numReplicas() - 1):
  // config().replication_factor x the model's own replication factor.
  unsigned numReplicas() const;

  // Phases of a recent request of the replica, in microseconds:
  // request_duration_us, read_preparation_duration_us, read_queue_duration_us,
  // computation_duration_us. cur = -1: the last one; otherwise the index in
  // the replica's trace buffer (0 = oldest kept). Empty if none.
  void getTimeTrace(std::map<std::string, float> &time_info, unsigned replica_id = 0, int cur = -1);
  // Over the kept traces: <phase>_monitoring_statistics_percentile_us,
  // ..._mean_us, and ..._count (every request ever traced).
  void getMonitoringStatisticsPercentile(std::map<std::string, double> &monitoring_info, double quantile = 0.9,
                                         unsigned replica_id = 0);
  void getMonitoringStatisticsMean(std::map<std::string, double> &monitoring_info, unsigned replica_id = 0);
  void getMonitoringStatisticsTotalCount(std::map<std::string, double> &monitoring_info, unsigned replica_id = 0);
  // The modelled device cycles of the replica since its device was last
  // loaded (creation, or a reset after a device error) and the clock they
  // run at: the difference of two samples over clockHz is the modelled
  // device time of the work between them. Any thread.
  hwsim::TimerTimePoint deviceTime(unsigned replica_id = 0) const;

  // For tests and diagnostics: the next Main run of the replica fails with a
  // simulated device error of `code` at the first program step named
  // `step_name` (a compute set, stream or codelet name; see
  // hwsim::Engine::getSimulatedErrorLocations). The error fires once.
  // NotFound if no step has that name.
  void insertSimulatedError(hwsim::DeviceErrorCode code, const std::string &step_name, unsigned replica_id = 0);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace mrt
