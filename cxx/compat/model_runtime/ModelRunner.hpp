// model_runtime::ModelRunner and ModelRunnerConfig with the Model Runtime
// API's signatures, over mrt::ModelRunner (cxx/mrt.hpp) and the C API.
//
// Replicas: the runner serves config.replication_factor copies of the
// model, each bringing the model's own popef::Metadata::replicationFactor()
// replicas (a PopEF compiled replicated), so replica_id is below their
// product.
//
// Errors: bad input (unknown tensor name, wrong size, replica id out of
// range) throws mrt::Error, a std::runtime_error whose message names the bad
// value, on the calling thread, and the runner keeps serving; a request that
// fails on the device throws mrt::Error from the futures' get(). A config
// value libmrt cannot read (max_look_ahead not "unlimited" or a number)
// throws std::invalid_argument from the constructor.
//
// Threads: execute/executeAsync may overlap only with config.thread_safe;
// futures are completed on the replica's device thread; descriptions, model()
// and config() may be read from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model_runtime/DeviceManager.hpp"
#include "model_runtime/Tensor.hpp"
#include "popef/ModelBuilder.hpp"

namespace model_runtime {

using InputMemoryView = std::unordered_map<std::string, ConstTensorMemoryView>;
using OutputMemoryView = std::unordered_map<std::string, TensorMemoryView>;
using OutputMemory = std::unordered_map<std::string, TensorMemory>;
using OutputFutureMemoryView = std::unordered_map<std::string, std::shared_future<TensorMemoryView>>;
using OutputFutureMemory = std::unordered_map<std::string, std::shared_future<TensorMemory>>;

struct DataDesc {
  DataDesc(std::string p_name, int64_t p_size_in_bytes, std::vector<int64_t> p_shape, popef::DataType p_data_type,
           bool p_popef_contains_tensor_data = false)
      : name(std::move(p_name)),
        size_in_bytes(p_size_in_bytes),
        shape(std::move(p_shape)),
        data_type(p_data_type),
        popef_contains_tensor_data(p_popef_contains_tensor_data) {}

  std::string name;
  int64_t size_in_bytes;  // of one model batch
  std::vector<int64_t> shape;
  popef::DataType data_type;
  bool popef_contains_tensor_data;
};
using InputDesc = DataDesc;
using OutputDesc = DataDesc;

using ReplicaIdToOutputMemoryView = std::unordered_map<unsigned, OutputMemoryView>;
using ReplicaIdToDevice = std::unordered_map<unsigned, std::shared_ptr<Device>>;

struct ModelRunnerConfig {
  unsigned replication_factor = 1;
  bool run_save_programs = false;
  bool thread_safe = false;
  // Copied when the runner is created.
  InputMemoryView frozen_inputs = {};
  // The buffers must outlive the runner (Save runs at its destruction).
  ReplicaIdToOutputMemoryView replica_to_save_programs_outputs = {};
  ReplicaIdToDevice replica_to_device = {};
  DeviceWaitConfig device_wait_config = {};
  bool check_package_hash = true;
  // 0: wait forever for input.
  std::chrono::nanoseconds timeout_ns = std::chrono::seconds(5);
  bool validate_io_params = true;
  unsigned batching_dim = std::numeric_limits<unsigned>::max();
  bool auto_reset = false;
  // "unlimited" or an unsigned integer.
  std::string max_look_ahead = "unlimited";
  unsigned ring_buffer_size_multiplier = 2;
  bool flush_on_waiting_outputs = false;
  std::chrono::nanoseconds batch_size_timeout_ns = std::chrono::nanoseconds::max();
  std::chrono::nanoseconds data_parallel_timeout_ns = std::chrono::nanoseconds::max();
  bool is_batch_size_timeout_enabled = false;
  size_t request_tracepoints_buffer_size = 1000;
  // Called on a replica's device thread when it timed out waiting for input
  // tensor_id, before the runner flushes. Pointing inputs or outputs at maps
  // chooses the queues to flush (their names; the memory is not used);
  // left nullptr, every queue is flushed. A throw is swallowed.
  std::function<void(const std::string &tensor_id, const InputMemoryView *&inputs, const OutputMemoryView *&outputs)>
      flush_callback = nullptr;
};

class ModelRunner {
 public:
  ModelRunner(const ModelRunner &) = delete;
  ModelRunner &operator=(const ModelRunner &other) = delete;
  ModelRunner(ModelRunner &&) = default;
  ModelRunner &operator=(ModelRunner &&) = default;

  explicit ModelRunner(const std::string &popef_path, const ModelRunnerConfig &config = ModelRunnerConfig{})
      : ModelRunner(std::vector<std::string>{popef_path}, config) {}
  explicit ModelRunner(const std::vector<std::string> &popef_paths,
                       const ModelRunnerConfig &config = ModelRunnerConfig{})
      : ModelRunner(std::shared_ptr<popef::Model>(popef::createModel(popef_paths)), config) {}
  explicit ModelRunner(std::shared_ptr<popef::Model> model, const ModelRunnerConfig &config = ModelRunnerConfig{})
      : model_(checked(std::move(model))), config_(config), runner_(model_->mrtModel(), toMrt(config)) {}
  ~ModelRunner() = default;

  OutputMemory execute(const InputMemoryView &input_data, unsigned replica_id = 0) {
    return outputMemory(std::make_shared<mrt::TensorMemory>(runner_.execute(views(input_data), replica_id)));
  }
  void execute(const InputMemoryView &input_data, const OutputMemoryView &output_data, unsigned replica_id = 0) {
    runner_.execute(views(input_data), views(output_data), replica_id);
  }

  OutputFutureMemory executeAsync(const InputMemoryView &input_data, unsigned replica_id = 0) {
    const auto in = views(input_data);
    std::vector<mrt_tensor_view> c;
    for (const auto &v : in) c.push_back({v.name, const_cast<void *>(v.data), v.size_bytes});
    mrt_future *future = nullptr;
    mrt_tensor_memory *memory = nullptr;
    mrt::check(mrt_model_runner_execute_async_alloc(runner_.get(), c.data(), c.size(), replica_id, &future, &memory));
    auto holder = std::make_shared<mrt::TensorMemory>(mrt::TensorMemory::adopt(memory));
    return completeOnReady<TensorMemory>(mrt::Future::adopt(future), outputNames(),
                                         [holder](const std::string &name) { return tensorMemory(holder, name); });
  }
  OutputFutureMemoryView executeAsync(const InputMemoryView &input_data, const OutputMemoryView &output_data,
                                      unsigned replica_id = 0) {
    std::vector<std::string> names;
    for (const auto &kv : output_data) names.push_back(kv.first);
    return completeOnReady<TensorMemoryView>(runner_.submit(views(input_data), views(output_data), replica_id), names,
                                             [output_data](const std::string &name) { return output_data.at(name); });
  }

  std::vector<InputDesc> getExecuteInputs() const { return descs(runner_.getExecuteInputs()); }
  std::vector<OutputDesc> getExecuteOutputs() const { return descs(runner_.getExecuteOutputs()); }
  std::vector<InputDesc> getModelInputs() const { return descs(runner_.getModelInputs()); }
  std::vector<OutputDesc> getModelOutputs() const { return descs(runner_.getModelOutputs()); }

  std::shared_ptr<popef::Model> model() const { return model_; }
  // The config the runner was created with, as given.
  const ModelRunnerConfig &config() const { return config_; }

  // Microseconds of the phases of a recent request (cur < 0: the last one).
  void getTimeTrace(std::map<std::string, float> &time_info, unsigned replica_id = 0, int cur = -1) {
    const mrt::RequestTimes t = runner_.getTimeTrace(replica_id, cur);
    time_info["request_duration_us"] = static_cast<float>(t.request_us);
    time_info["read_preparation_duration_us"] = static_cast<float>(t.read_preparation_us);
    time_info["read_queue_duration_us"] = static_cast<float>(t.read_queue_us);
    time_info["computation_duration_us"] = static_cast<float>(t.computation_us);
  }
  void getMonitoringStatisticsPercentile(std::map<std::string, double> &monitoring_info, double quantile = 0.9,
                                         unsigned replica_id = 0) {
    statistics(monitoring_info, runner_.getMonitoringStatisticsPercentile(quantile, replica_id), "percentile_us");
  }
  void getMonitoringStatisticsMean(std::map<std::string, double> &monitoring_info, unsigned replica_id = 0) {
    statistics(monitoring_info, runner_.getMonitoringStatisticsMean(replica_id), "mean_us");
  }
  void getMonitoringStatisticsTotalCount(std::map<std::string, double> &monitoring_info, unsigned replica_id = 0) {
    statistics(monitoring_info, runner_.getMonitoringStatisticsTotalCount(replica_id), "count");
  }

  // libmrt extension: the mrt.hpp runner underneath (simulated errors, raw futures).
  mrt::ModelRunner &mrtRunner() { return runner_; }

 private:
  static std::shared_ptr<popef::Model> checked(std::shared_ptr<popef::Model> model) {
    if (!model) throw std::invalid_argument("model_runtime::ModelRunner: the model is null");
    return model;
  }

  static int64_t lookAhead(const std::string &value) {
    if (value == "unlimited") return -1;
    std::size_t used = 0;
    unsigned long long n = 0;
    try {
      if (!value.empty() && value[0] != '-') n = std::stoull(value, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used == 0 || used != value.size() || n > static_cast<unsigned long long>(std::numeric_limits<int64_t>::max())) {
      throw std::invalid_argument("ModelRunnerConfig::max_look_ahead: expected \"unlimited\" or an unsigned integer, got '" +
                                  value + "'");
    }
    return static_cast<int64_t>(n);
  }

  // The mrt.hpp config; the devices and buffers it points to are the ones in
  // `config`, which the caller keeps alive (the runner takes its own
  // device references and copies frozen inputs).
  static mrt::ModelRunnerConfig toMrt(const ModelRunnerConfig &config) {
    mrt::ModelRunnerConfig c;
    c.replication_factor = config.replication_factor;
    c.run_save_programs = config.run_save_programs;
    c.thread_safe = config.thread_safe;
    c.frozen_inputs = views(config.frozen_inputs);
    for (const auto &replica : config.replica_to_save_programs_outputs) {
      c.replica_to_save_programs_outputs.push_back({replica.first, views(replica.second)});
    }
    for (const auto &replica : config.replica_to_device) {
      if (c.replica_to_device.size() <= replica.first) c.replica_to_device.resize(replica.first + 1, nullptr);
      c.replica_to_device[replica.first] = replica.second ? &replica.second->mrtDevice() : nullptr;
    }
    c.device_wait_config = config.device_wait_config.toMrt();
    c.check_package_hash = config.check_package_hash;
    // The seed's 0 ("never call the timeout") is libmrt's MRT_FOREVER.
    c.timeout_ns = config.timeout_ns == std::chrono::nanoseconds::zero() ? std::chrono::nanoseconds(MRT_FOREVER)
                                                                         : config.timeout_ns;
    c.validate_io_params = config.validate_io_params;
    c.batching_dim = config.batching_dim;
    c.auto_reset = config.auto_reset;
    c.max_look_ahead = lookAhead(config.max_look_ahead);
    c.ring_buffer_size_multiplier = config.ring_buffer_size_multiplier;
    c.flush_on_waiting_outputs = config.flush_on_waiting_outputs;
    c.batch_size_timeout_ns = config.batch_size_timeout_ns;
    c.data_parallel_timeout_ns = config.data_parallel_timeout_ns;
    c.is_batch_size_timeout_enabled = config.is_batch_size_timeout_enabled;
    c.request_tracepoints_buffer_size = config.request_tracepoints_buffer_size;
    if (config.flush_callback) {
      c.flush_select_callback = [callback = config.flush_callback](std::string_view tensor_id,
                                                                   mrt::FlushSelection &selection) {
        const InputMemoryView *inputs = nullptr;
        const OutputMemoryView *outputs = nullptr;
        callback(std::string(tensor_id), inputs, outputs);
        if (inputs) {
          for (const auto &input : *inputs) selection.addInput(input.first.c_str());
        }
        if (outputs) {
          for (const auto &output : *outputs) selection.addOutput(output.first.c_str());
        }
      };
    }
    return c;
  }

  static std::vector<mrt::ConstTensorView> views(const InputMemoryView &inputs) {
    std::vector<mrt::ConstTensorView> result;
    for (const auto &kv : inputs) result.emplace_back(kv.first, kv.second.data, kv.second.data_size_bytes);
    return result;
  }
  static std::vector<mrt::TensorView> views(const OutputMemoryView &outputs) {
    std::vector<mrt::TensorView> result;
    for (const auto &kv : outputs) result.emplace_back(kv.first, kv.second.data, kv.second.data_size_bytes);
    return result;
  }

  // One output of library-allocated memory, sharing ownership of the block.
  static TensorMemory tensorMemory(const std::shared_ptr<mrt::TensorMemory> &holder, const std::string &name) {
    const mrt::TensorMemoryView view = holder->find(name);
    TensorMemory memory;
    memory.data_size_bytes = view.bytes.size();
    memory.data = std::shared_ptr<void>(holder, view.bytes.data());
    return memory;
  }
  static OutputMemory outputMemory(const std::shared_ptr<mrt::TensorMemory> &holder) {
    OutputMemory result;
    for (std::size_t i = 0; i < holder->size(); ++i) {
      const std::string name((*holder)[i].name);
      result.emplace(name, tensorMemory(holder, name));
    }
    return result;
  }
  std::vector<std::string> outputNames() const {
    std::vector<std::string> names;
    for (const auto &desc : runner_.getExecuteOutputs()) names.push_back(desc.name);
    return names;
  }

  // One shared_future per output name, completed together when the request
  // is done: with value(name) on success, with mrt::Error otherwise.
  template <class Value, class Make>
  static std::unordered_map<std::string, std::shared_future<Value>> completeOnReady(
      mrt::Future future, const std::vector<std::string> &names, Make value) {
    struct Pending {
      mrt::Future future;
      std::vector<std::pair<std::string, std::promise<Value>>> promises;
    };
    auto pending = std::make_shared<Pending>();
    pending->future = std::move(future);
    std::unordered_map<std::string, std::shared_future<Value>> result;
    for (const auto &name : names) {
      pending->promises.emplace_back(name, std::promise<Value>());
      result.emplace(name, pending->promises.back().second.get_future().share());
    }
    const mrt::Future &raw = pending->future;
    raw.onReady([pending, value](mrt_status status) {
      for (auto &entry : pending->promises) {
        try {
          if (status != MRT_OK) throw mrt::Error(status, pending->future.errorMessage());
          entry.second.set_value(value(entry.first));
        } catch (...) {
          entry.second.set_exception(std::current_exception());
        }
      }
    });
    return result;
  }

  static std::vector<DataDesc> descs(const std::vector<mrt::DataDesc> &from) {
    std::vector<DataDesc> result;
    for (const auto &d : from) {
      result.emplace_back(d.name, d.size_in_bytes, d.shape, static_cast<popef::DataType>(d.data_type),
                          d.popef_contains_tensor_data);
    }
    return result;
  }

  static void statistics(std::map<std::string, double> &info, const mrt::RequestTimes &t, const std::string &suffix) {
    info["request_monitoring_statistics_" + suffix] = t.request_us;
    info["read_preparation_monitoring_statistics_" + suffix] = t.read_preparation_us;
    info["read_queue_monitoring_statistics_" + suffix] = t.read_queue_us;
    info["computation_monitoring_statistics_" + suffix] = t.computation_us;
  }

  std::shared_ptr<popef::Model> model_;
  ModelRunnerConfig config_;
  mrt::ModelRunner runner_;
};

}  // namespace model_runtime
