// The model runner part of the C API (include/mrt_c.h, "Model runner"),
// over mrt::ModelRunner.
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <hwsim/device_error.hpp>

#include "capi/callback_scope.hpp"
#include "capi/device.hpp"
#include "capi/durations.hpp"
#include "capi/flush_selection.hpp"
#include "capi/future.hpp"
#include "capi/guard.hpp"
#include "capi/model.hpp"
#include "capi/simulated_error.hpp"
#include "capi/sized_struct.hpp"
#include "capi/tensor_views.hpp"
#include "capi/user_data.hpp"
#include "common/logging.hpp"
#include "popef/reader.hpp"
#include "runner/model_runner.hpp"

namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::fillSized;
using mrt::capi::inputsOf;
using mrt::capi::outputsOf;
using mrt::capi::RequestViewMaps;
using mrt::capi::modelOf;
using mrt::capi::requireNotNull;

static_assert(static_cast<int>(hwsim::DeviceErrorCode::TileException) == MRT_SIMULATED_TILE_EXCEPTION);
static_assert(static_cast<int>(hwsim::DeviceErrorCode::MemoryParity) == MRT_SIMULATED_MEMORY_PARITY);
static_assert(static_cast<int>(hwsim::DeviceErrorCode::ExchangeError) == MRT_SIMULATED_EXCHANGE_ERROR);
static_assert(static_cast<int>(hwsim::DeviceErrorCode::HostLinkError) == MRT_SIMULATED_HOST_LINK_ERROR);

// The first published layouts: callers may pass these sizes or larger.

// DataDescs and their C views, built once per runner: the C arrays point
// into the C++ descriptions.
struct DescList {
  std::vector<mrt::DataDesc> descs;
  std::vector<mrt_data_desc> views;

  explicit DescList(std::vector<mrt::DataDesc> d) : descs(std::move(d)) {
    views.reserve(descs.size());
    for (const auto &desc : descs) {
      views.push_back({desc.name.c_str(), desc.size_in_bytes, desc.shape.empty() ? nullptr : desc.shape.data(),
                       desc.shape.size(), static_cast<int32_t>(desc.data_type), desc.popef_contains_tensor_data});
    }
  }
};

}  // namespace

struct mrt_model_runner {
  std::unique_ptr<mrt::ModelRunner> runner;
  DescList executeInputs, executeOutputs, modelInputs, modelOutputs;

  explicit mrt_model_runner(std::unique_ptr<mrt::ModelRunner> r)
      : runner(std::move(r)),
        executeInputs(runner->getExecuteInputs()),
        executeOutputs(runner->getExecuteOutputs()),
        modelInputs(runner->getModelInputs()),
        modelOutputs(runner->getModelOutputs()) {}
};

struct mrt_tensor_memory {
  std::vector<std::pair<std::string, mrt::TensorMemory>> outputs;  // in name order

  explicit mrt_tensor_memory(const mrt::OutputMemory &memory) : outputs(memory.begin(), memory.end()) {
    std::sort(outputs.begin(), outputs.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
  }
  mrt_tensor_view view(std::size_t index) const {
    const auto &[name, tensor] = outputs[index];
    return {name.c_str(), tensor.data.get(), tensor.data_size_bytes};
  }
};

namespace {

mrt::ModelRunner &runnerOf(const mrt_model_runner *handle) {
  requireNotNull(handle, "runner");
  return *handle->runner;
}

const mrt_tensor_memory &memoryOf(const mrt_tensor_memory *handle) {
  requireNotNull(handle, "memory");
  return *handle;
}

// The C defaults: ModelRunnerConfig's, with the C spellings of "none".
mrt_model_runner_config defaultConfig() {
  const mrt::ModelRunnerConfig defaults;
  mrt_model_runner_config c{};
  c.replication_factor = defaults.replication_factor;
  c.run_save_programs = defaults.run_save_programs;
  c.thread_safe = defaults.thread_safe;
  c.check_package_hash = defaults.check_package_hash;
  c.timeout_ns = mrt::capi::callbackPeriodToC(defaults.timeout_ns);
  c.validate_io_params = defaults.validate_io_params;
  c.batching_dim = MRT_BATCHING_DISABLED;
  c.auto_reset = defaults.auto_reset;
  c.max_look_ahead = -1;
  c.ring_buffer_size_multiplier = defaults.ring_buffer_size_multiplier;
  c.flush_on_waiting_outputs = defaults.flush_on_waiting_outputs;
  c.batch_size_timeout_ns = MRT_FOREVER;
  c.data_parallel_timeout_ns = MRT_FOREVER;
  c.is_batch_size_timeout_enabled = defaults.is_batch_size_timeout_enabled;
  c.request_tracepoints_buffer_size = defaults.request_tracepoints_buffer_size;
  return c;
}

// < 0 in C means "never" / "unlimited"; the C++ config says max().
std::chrono::nanoseconds optionalTimeout(int64_t ns) {
  return ns < 0 ? std::chrono::nanoseconds::max() : std::chrono::nanoseconds(ns);
}

mrt::ModelRunnerConfig configOf(const mrt_model_runner_config *config,
                                std::shared_ptr<mrt::capi::UserData> flushUserData) {
  mrt::ModelRunnerConfig result;
  if (config == nullptr) return result;
  const mrt_model_runner_config c =
      mrt::capi::readSized(config, defaultConfig(), MRT_MODEL_RUNNER_CONFIG_V1_SIZE, "config");
  result.replication_factor = c.replication_factor;
  result.run_save_programs = c.run_save_programs;
  result.thread_safe = c.thread_safe;
  result.frozen_inputs = inputsOf(c.frozen_inputs, c.num_frozen_inputs, "config->frozen_inputs");
  if (c.num_save_programs_outputs > 0) requireNotNull(c.save_programs_outputs, "config->save_programs_outputs");
  for (std::size_t i = 0; i < c.num_save_programs_outputs; ++i) {
    const mrt_replica_outputs &replica = c.save_programs_outputs[i];
    result.replica_to_save_programs_outputs[replica.replica_id] =
        outputsOf(replica.outputs, replica.num_outputs, "config->save_programs_outputs[].outputs");
  }
  if (c.num_replica_devices > 0) requireNotNull(c.replica_devices, "config->replica_devices");
  for (std::size_t i = 0; i < c.num_replica_devices; ++i) {
    if (c.replica_devices[i] != nullptr)
      result.replica_to_device[static_cast<unsigned>(i)] = c.replica_devices[i]->device;
  }
  result.device_wait_config = mrt::capi::waitConfigOf(c.device_wait_config, "config->device_wait_config");
  result.check_package_hash = c.check_package_hash;
  result.timeout_ns = mrt::capi::callbackPeriodOf(c.timeout_ns, "config->timeout_ns");
  result.validate_io_params = c.validate_io_params;
  result.batching_dim = c.batching_dim;
  result.auto_reset = c.auto_reset;
  result.max_look_ahead = c.max_look_ahead < 0 ? "unlimited" : std::to_string(c.max_look_ahead);
  result.ring_buffer_size_multiplier = c.ring_buffer_size_multiplier;
  result.flush_on_waiting_outputs = c.flush_on_waiting_outputs;
  result.batch_size_timeout_ns = optionalTimeout(c.batch_size_timeout_ns);
  result.data_parallel_timeout_ns = optionalTimeout(c.data_parallel_timeout_ns);
  result.is_batch_size_timeout_enabled = c.is_batch_size_timeout_enabled;
  result.request_tracepoints_buffer_size = c.request_tracepoints_buffer_size;
  if (c.flush_callback != nullptr && c.flush_select_callback != nullptr) {
    throw Error(ErrorCode::InvalidArgument,
                "config->flush_callback and config->flush_select_callback are both set; set at most one");
  }
  if (mrt_flush_fn fn = c.flush_callback) {
    // Leaving inputs/outputs untouched asks the runner to flush every queue.
    result.flush_callback = [fn, owner = std::move(flushUserData)](const std::string &tensor_id,
                                                                    const mrt::InputMemoryView *&,
                                                                    const mrt::OutputMemoryView *&) {
      const mrt::capi::LibraryCallbackScope scope;
      fn(tensor_id.c_str(), owner->get());
    };
  } else if (mrt_flush_select_fn select = c.flush_select_callback) {
    result.flush_callback = mrt::capi::flushSelectionAdapter(select, std::move(flushUserData));
  }
  if (c.model_name != nullptr) result.model_name = c.model_name;
  return result;
}

// Owned before anything can fail, so flush_user_data_free runs exactly once.
std::shared_ptr<mrt::capi::UserData> ownFlushUserData(const mrt_model_runner_config *config) {
  if (config == nullptr || config->struct_size < MRT_MODEL_RUNNER_CONFIG_V1_SIZE) return nullptr;
  return mrt::capi::ownUserData(config->flush_user_data, config->flush_user_data_free);
}

void createRunner(std::shared_ptr<mrt::popef::Model> model, const mrt::ModelRunnerConfig &config,
                  mrt_model_runner **out) {
  requireNotNull(out, "out");
  auto runner = std::make_unique<mrt::ModelRunner>(std::move(model), config);
  *out = new mrt_model_runner(std::move(runner));
}

// The body of the four description exports: one of the runner's lists.
mrt_status giveDescs(const char *function, const mrt_model_runner *runner, DescList mrt_model_runner::*list,
                     const mrt_data_desc **outDescs, size_t *outCount) noexcept {
  return mrt::capi::guard(function, [&] {
    runnerOf(runner);
    requireNotNull(outDescs, "out_descs");
    requireNotNull(outCount, "out_count");
    const DescList &descs = runner->*list;
    *outDescs = descs.views.empty() ? nullptr : descs.views.data();
    *outCount = descs.views.size();
  });
}

// Phase keys of the runner's statistics maps, in mrt_request_times order.
constexpr const char *kPhases[] = {"request", "read_preparation", "read_queue", "computation"};

template <typename Map>
void fillTimes(const Map &values, const std::string &suffix, mrt_request_times *out) {
  mrt_request_times times{};
  double *fields[] = {&times.request_us, &times.read_preparation_us, &times.read_queue_us, &times.computation_us};
  for (std::size_t i = 0; i < 4; ++i) {
    auto it = values.find(std::string(kPhases[i]) + suffix);
    if (it != values.end()) *fields[i] = it->second;
  }
  fillSized(out, times, MRT_REQUEST_TIMES_V1_SIZE, "out");
}

}  // namespace

extern "C" {

MRT_API mrt_status mrt_model_runner_config_init_sized(mrt_model_runner_config *config, size_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::initSized(config, defaultConfig(), size, MRT_MODEL_RUNNER_CONFIG_V1_SIZE,
                         MRT_STRUCT_SIZE(mrt_model_runner_config, model_name), "config");
  });
}

// The symbol of callers built before mrt_model_runner_config_init_sized: V1 fields.
MRT_API void(mrt_model_runner_config_init)(mrt_model_runner_config *config) noexcept {
  if (config != nullptr) mrt_model_runner_config_init_sized(config, MRT_MODEL_RUNNER_CONFIG_V1_SIZE);
}


MRT_API mrt_status mrt_model_runner_create(const mrt_model *model, const mrt_model_runner_config *config,
                                           mrt_model_runner **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto flushUserData = ownFlushUserData(config);
    createRunner(modelOf(model, "model"), configOf(config, std::move(flushUserData)), out);
  });
}

MRT_API mrt_status mrt_model_runner_create_from_files(const char *const *paths, size_t num_paths,
                                                      const mrt_model_runner_config *config,
                                                      mrt_model_runner **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto flushUserData = ownFlushUserData(config);
    const mrt::ModelRunnerConfig runnerConfig = configOf(config, std::move(flushUserData));
    createRunner(mrt::popef::loadModel(mrt::capi::pathsOf(paths, num_paths), runnerConfig.model_name), runnerConfig,
                 out);
  });
}

MRT_API void mrt_model_runner_destroy(mrt_model_runner *runner) noexcept {
  if (runner == nullptr) return;
  try {
    if (mrt::capi::insideLibraryCallback()) {
      // This thread may be one the runner must join: destroy it from a
      // thread of its own once the callback has returned.
      std::thread([runner] { delete runner; }).detach();
      return;
    }
    delete runner;
  } catch (const std::exception &e) {
    // Destruction cannot fail; Save-program errors are logged by the runner.
    // Only a thread that cannot be started gets here: the runner is leaked.
    mrt::log::logger().error("mrt_model_runner_destroy: {}; the runner is leaked", e.what());
  }
}

MRT_API mrt_status mrt_model_runner_execute_inputs(const mrt_model_runner *runner, const mrt_data_desc **out_descs,
                                                   size_t *out_count) noexcept {
  return giveDescs(__func__, runner, &mrt_model_runner::executeInputs, out_descs, out_count);
}

MRT_API mrt_status mrt_model_runner_execute_outputs(const mrt_model_runner *runner, const mrt_data_desc **out_descs,
                                                    size_t *out_count) noexcept {
  return giveDescs(__func__, runner, &mrt_model_runner::executeOutputs, out_descs, out_count);
}

MRT_API mrt_status mrt_model_runner_model_inputs(const mrt_model_runner *runner, const mrt_data_desc **out_descs,
                                                 size_t *out_count) noexcept {
  return giveDescs(__func__, runner, &mrt_model_runner::modelInputs, out_descs, out_count);
}

MRT_API mrt_status mrt_model_runner_model_outputs(const mrt_model_runner *runner, const mrt_data_desc **out_descs,
                                                  size_t *out_count) noexcept {
  return giveDescs(__func__, runner, &mrt_model_runner::modelOutputs, out_descs, out_count);
}

MRT_API mrt_status mrt_model_runner_execute(mrt_model_runner *runner, const mrt_tensor_view *inputs,
                                            size_t num_inputs, const mrt_tensor_view *outputs, size_t num_outputs,
                                            uint32_t replica_id) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto &r = runnerOf(runner);
    RequestViewMaps views;
    const auto &in = views.inputs(inputs, num_inputs);  // inputs are checked (and reported) first
    r.execute(in, views.outputs(outputs, num_outputs), replica_id);
  });
}

MRT_API mrt_status mrt_model_runner_execute_async(mrt_model_runner *runner, const mrt_tensor_view *inputs,
                                                  size_t num_inputs, const mrt_tensor_view *outputs,
                                                  size_t num_outputs, uint32_t replica_id, mrt_future **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto &r = runnerOf(runner);
    requireNotNull(out, "out");
    auto future = std::make_unique<mrt_future>();
    RequestViewMaps views;
    const auto &in = views.inputs(inputs, num_inputs);
    future->completion = r.submit(in, views.outputs(outputs, num_outputs), replica_id);
    *out = future.release();
  });
}

MRT_API mrt_status mrt_model_runner_execute_alloc(mrt_model_runner *runner, const mrt_tensor_view *inputs,
                                                  size_t num_inputs, uint32_t replica_id,
                                                  mrt_tensor_memory **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto &r = runnerOf(runner);
    requireNotNull(out, "out");
    RequestViewMaps views;
    auto memory = std::make_unique<mrt_tensor_memory>(r.execute(views.inputs(inputs, num_inputs), replica_id));
    *out = memory.release();
  });
}

MRT_API mrt_status mrt_model_runner_execute_async_alloc(mrt_model_runner *runner, const mrt_tensor_view *inputs,
                                                        size_t num_inputs, uint32_t replica_id,
                                                        mrt_future **out_future,
                                                        mrt_tensor_memory **out_outputs) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto &r = runnerOf(runner);
    requireNotNull(out_future, "out_future");
    requireNotNull(out_outputs, "out_outputs");
    auto future = std::make_unique<mrt_future>();
    RequestViewMaps views;
    mrt::Submission submission = r.submit(views.inputs(inputs, num_inputs), replica_id);
    auto memory = std::make_unique<mrt_tensor_memory>(submission.outputs);
    future->completion = std::move(submission.completion);
    *out_future = future.release();
    *out_outputs = memory.release();
  });
}

MRT_API mrt_status mrt_tensor_memory_count(const mrt_tensor_memory *memory, size_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = memoryOf(memory);
    requireNotNull(out_count, "out_count");
    *out_count = m.outputs.size();
  });
}

MRT_API mrt_status mrt_tensor_memory_get(const mrt_tensor_memory *memory, size_t index,
                                         mrt_tensor_view *out_view) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = memoryOf(memory);
    requireNotNull(out_view, "out_view");
    if (index >= m.outputs.size())
      throw Error(ErrorCode::InvalidArgument, "output index {} is out of range ({} outputs)", index, m.outputs.size());
    *out_view = m.view(index);
  });
}

MRT_API mrt_status mrt_tensor_memory_find(const mrt_tensor_memory *memory, const char *name,
                                          mrt_tensor_view *out_view) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &m = memoryOf(memory);
    requireNotNull(name, "name");
    requireNotNull(out_view, "out_view");
    for (std::size_t i = 0; i < m.outputs.size(); ++i) {
      if (m.outputs[i].first == name) {
        *out_view = m.view(i);
        return;
      }
    }
    throw Error(ErrorCode::NotFound, "no output named '{}' ({} outputs)", name, m.outputs.size());
  });
}

MRT_API void mrt_tensor_memory_destroy(mrt_tensor_memory *memory) noexcept { delete memory; }

MRT_API mrt_status mrt_model_runner_time_trace(mrt_model_runner *runner, uint32_t replica_id, int32_t cur,
                                               mrt_request_times *out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    std::map<std::string, float> trace;
    runnerOf(runner).getTimeTrace(trace, replica_id, cur);
    if (trace.empty())
      throw Error(ErrorCode::NotFound, "replica {} has no request trace {}", replica_id,
                  cur == -1 ? std::string("yet") : "at index " + std::to_string(cur));
    fillTimes(trace, "_duration_us", out);
  });
}

MRT_API mrt_status mrt_model_runner_statistics_percentile(mrt_model_runner *runner, double quantile,
                                                          uint32_t replica_id, mrt_request_times *out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    if (!(quantile >= 0.0 && quantile <= 1.0))
      throw Error(ErrorCode::InvalidArgument, "quantile {} is not in 0..1", quantile);
    std::map<std::string, double> stats;
    runnerOf(runner).getMonitoringStatisticsPercentile(stats, quantile, replica_id);
    fillTimes(stats, "_monitoring_statistics_percentile_us", out);
  });
}

MRT_API mrt_status mrt_model_runner_statistics_mean(mrt_model_runner *runner, uint32_t replica_id,
                                                    mrt_request_times *out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    std::map<std::string, double> stats;
    runnerOf(runner).getMonitoringStatisticsMean(stats, replica_id);
    fillTimes(stats, "_monitoring_statistics_mean_us", out);
  });
}

MRT_API mrt_status mrt_model_runner_statistics_count(mrt_model_runner *runner, uint32_t replica_id,
                                                     mrt_request_times *out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    std::map<std::string, double> stats;
    runnerOf(runner).getMonitoringStatisticsTotalCount(stats, replica_id);
    fillTimes(stats, "_monitoring_statistics_count", out);
  });
}

MRT_API mrt_status mrt_model_runner_device_cycles(const mrt_model_runner *runner, uint32_t replica_id,
                                                  uint64_t *out_cycles, double *out_clock_hz) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt::ModelRunner &r = runnerOf(runner);
    requireNotNull(out_cycles, "out_cycles");
    const hwsim::TimerTimePoint time = r.deviceTime(replica_id);
    *out_cycles = time.deviceCycles;
    if (out_clock_hz != nullptr) *out_clock_hz = time.clockHz;
  });
}

MRT_API mrt_status mrt_model_runner_num_replicas(const mrt_model_runner *runner, uint32_t *out_count) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt::ModelRunner &r = runnerOf(runner);
    requireNotNull(out_count, "out_count");
    *out_count = r.numReplicas();
  });
}

MRT_API mrt_status mrt_model_runner_model(const mrt_model_runner *runner, mrt_model **out) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt::ModelRunner &r = runnerOf(runner);
    requireNotNull(out, "out");
    *out = new mrt_model{r.model()};
  });
}

MRT_API mrt_status mrt_model_runner_get_config(const mrt_model_runner *runner,
                                               mrt_model_runner_config *out_config) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const mrt::ModelRunnerConfig &c = runnerOf(runner).config();
    mrt_model_runner_config config = defaultConfig();  // pointer fields stay NULL, counts 0
    config.replication_factor = c.replication_factor;
    config.run_save_programs = c.run_save_programs;
    config.thread_safe = c.thread_safe;
    config.check_package_hash = c.check_package_hash;
    config.timeout_ns = mrt::capi::callbackPeriodToC(c.timeout_ns);
    config.validate_io_params = c.validate_io_params;
    config.batching_dim = c.batching_dim;
    config.auto_reset = c.auto_reset;
    config.max_look_ahead = c.max_look_ahead == "unlimited" ? -1 : std::stoll(c.max_look_ahead);
    config.ring_buffer_size_multiplier = c.ring_buffer_size_multiplier;
    config.flush_on_waiting_outputs = c.flush_on_waiting_outputs;
    auto optional = [](std::chrono::nanoseconds ns) {
      return ns == std::chrono::nanoseconds::max() ? int64_t{-1} : static_cast<int64_t>(ns.count());
    };
    config.batch_size_timeout_ns = optional(c.batch_size_timeout_ns);
    config.data_parallel_timeout_ns = optional(c.data_parallel_timeout_ns);
    config.is_batch_size_timeout_enabled = c.is_batch_size_timeout_enabled;
    config.request_tracepoints_buffer_size = c.request_tracepoints_buffer_size;
    fillSized(out_config, config, MRT_MODEL_RUNNER_CONFIG_V1_SIZE, "out_config");
  });
}

MRT_API mrt_status mrt_model_runner_insert_simulated_error(mrt_model_runner *runner, int32_t error,
                                                           const char *step_name, uint32_t replica_id) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::ModelRunner &r = runnerOf(runner);
    requireNotNull(step_name, "step_name");
    r.insertSimulatedError(mrt::capi::simulatedErrorOf(error), step_name, replica_id);
  });
}

}  // extern "C"
