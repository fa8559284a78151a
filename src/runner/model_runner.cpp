#include "runner/model_runner.hpp"

#include "common/logging.hpp"
#include "device/device_manager.hpp"
#include "popef/executable_check.hpp"
#include "popef/reader.hpp"
#include "runner/replica.hpp"
#include "runner/runner_layout.hpp"
#include "runner/watchdog.hpp"

namespace mrt {

struct ModelRunner::Impl {
  Impl(std::shared_ptr<popef::Model> m, const ModelRunnerConfig &c)
      : model(std::move(m)),
        executable((popef::requireModelName(*model, c.model_name), checkedExecutable(*model))),
        config(withModelBatchingDim((validate(c, executable.replicationFactor()), c), model->metadata)),
        layout(model, config) {
    // Copy k of the model serves replica ids k x R .. k x R + R - 1, R being
    // the model's own replication factor (ModelRunnerConfig::replication_factor).
    const unsigned in_model = executable.replicationFactor();
    std::optional<DeviceManager> manager;
    replicas.reserve(std::size_t{config.replication_factor} * in_model);
    for (unsigned copy = 0; copy < config.replication_factor; ++copy) {
      const unsigned first = copy * in_model;
      std::shared_ptr<Device> device;
      if (auto it = config.replica_to_device.find(first); it != config.replica_to_device.end()) {
        device = it->second;
      } else {
        if (!manager) manager.emplace();
        device = manager->getDevice(model, config.device_wait_config);
      }
      const std::shared_ptr<Session> session = Replica::makeSession(copy, model, executable, config, layout);
      for (unsigned lane = 0; lane < in_model; ++lane) {
        replicas.push_back(std::make_unique<Replica>(first + lane, session, lane, config, layout, device));
      }
      session->bindToDevice(device);
    }
    // Before the first Load: a Load may hang.
    watchdog = detail::Watchdog::watch(Replica::watchPeriod(config), Replica::firstWatch(config),
                                       [this](RequestClock::time_point now) {
                                         for (auto &replica : replicas) replica->watch(now);
                                       });
    // The other replicas' device threads load while this thread loads the
    // first replica itself: a single replica's creation then waits for no
    // other thread (Replica::loadOnThisThread).
    for (std::size_t r = 1; r < replicas.size(); ++r) replicas[r]->start();
    replicas.front()->loadOnThisThread();
    replicas.front()->start();
    for (auto &replica : replicas) replica->awaitInitialLoad();
    logCreated();
  }

  // Described only when the message is logged: formatting the config for a
  // message nobody sees is part of every creation otherwise.
  void logCreated() const {
    if (!log::logger().should_log(spdlog::level::info)) return;
    const unsigned in_model = executable.replicationFactor();
    const std::string per_device = in_model > 1 ? fmt::format(" ({} per device)", in_model) : std::string();
    log::logger().info("runner for model '{}': {} replica(s){} on device(s) {}; {}", model->metadata.executable(),
                       replicas.size(), per_device, deviceIds(), describe(config));
  }

  // "0, 1": each copy's device, in replica order.
  std::string deviceIds() const {
    std::string ids;
    const unsigned in_model = executable.replicationFactor();
    for (std::size_t r = 0; r < replicas.size(); r += in_model) {
      ids += (ids.empty() ? "" : ", ") + std::to_string(replicas[r]->deviceId());
    }
    return ids;
  }

  ~Impl() {
    // Every replica stops first, then each cancels and saves (the watchdog
    // stops programs that would keep this waiting). All are marked first:
    // stopping one may stop the engine under the others of its device.
    for (auto &replica : replicas) replica->beginShutdown();
    for (auto &replica : replicas) replica->shutdown();
    watchdog = {};
    log::logger().info("runner for model '{}': stopped; its devices go back to the system", model->metadata.executable());
  }

  // Validates and enqueues a request with library-allocated outputs.
  Submission submitAllocating(const InputMemoryView &input_data, unsigned replica_id, bool wake_device);

  Replica &replica(unsigned id) {
    if (id >= replicas.size()) {
      throw Error(ErrorCode::InvalidArgument, "replica_id {} out of range: the runner has {} replica{}", id,
                  replicas.size(), replicas.size() == 1 ? "" : "s");
    }
    return *replicas[id];
  }

  // The config the runner serves with: a batching_dim recorded in the model
  // (popef Metadata::batchingDim) applies unless the config names one.
  static ModelRunnerConfig withModelBatchingDim(ModelRunnerConfig config, const popef::Metadata &metadata) {
    if (!batchingEnabled(config) && metadata.batchingDim()) config.batching_dim = *metadata.batchingDim();
    return config;
  }

  // The runner sizes its queues and picks devices from the metadata, so the
  // metadata must agree with the executable before anything else is done
  // with it. Read once, for every replica's Session.
  static hwsim::Executable checkedExecutable(const popef::Model &model) {
    hwsim::Executable executable = popef::readExecutable(model);
    popef::checkAgainstExecutable(model, executable);
    return executable;
  }

  std::shared_ptr<popef::Model> model;
  hwsim::Executable executable;
  ModelRunnerConfig config;
  RunnerLayout layout;
  std::vector<std::unique_ptr<Replica>> replicas;

  // Stops programs that never complete a request (runner/watchdog.hpp);
  // ended after the replicas have shut down, which it may have to help.
  detail::Watchdog::Watch watchdog;
};

namespace {

std::shared_ptr<popef::Model> requireModel(std::shared_ptr<popef::Model> model) {
  if (!model) throw Error(ErrorCode::InvalidArgument, "ModelRunner: the model must not be null");
  return model;
}

// The views of the request this thread is submitting, kept for its next
// request: once their vectors have grown, ordering a request's maps
// allocates nothing. One per thread suffices: from filling them to the end
// of Replica::submit no user code runs on this thread (a full queue makes it
// wait for the device thread), so no other request starts on it meanwhile.
RequestViews &threadRequestViews() {
  thread_local RequestViews views;
  return views;
}

void waitFor(const Completion &completion) {
  completion.wait(std::chrono::nanoseconds(-1));
  if (completion.code() != ErrorCode::Ok) throw Error(completion.code(), completion.message());
}

}  // namespace

ModelRunner::ModelRunner(const std::string &popef_path, const ModelRunnerConfig &config)
    : ModelRunner(std::vector<std::string>{popef_path}, config) {}

ModelRunner::ModelRunner(const std::vector<std::string> &popef_paths, const ModelRunnerConfig &config)
    : ModelRunner(std::shared_ptr<popef::Model>(popef::loadModel(popef_paths, config.model_name)), config) {}

ModelRunner::ModelRunner(std::shared_ptr<popef::Model> model, const ModelRunnerConfig &config)
    : impl_(std::make_unique<Impl>(requireModel(std::move(model)), config)) {}

ModelRunner::~ModelRunner() = default;
ModelRunner::ModelRunner(ModelRunner &&) noexcept = default;
ModelRunner &ModelRunner::operator=(ModelRunner &&) noexcept = default;

std::shared_ptr<Completion> ModelRunner::submit(const InputMemoryView &input_data, const OutputMemoryView &output_data,
                                                unsigned replica_id) {
  const auto received = RequestClock::now();
  Replica &replica = impl_->replica(replica_id);
  RequestViews &views = threadRequestViews();
  impl_->layout.setInputViews(views, input_data);
  impl_->layout.addOutputViews(views, output_data);
  return replica.submit(views, received, {});
}

Submission ModelRunner::submit(const InputMemoryView &input_data, unsigned replica_id) {
  return impl_->submitAllocating(input_data, replica_id, true);
}

Submission ModelRunner::Impl::submitAllocating(const InputMemoryView &input_data, unsigned replica_id,
                                               bool wake_device) {
  const auto received = RequestClock::now();
  Replica &replica = this->replica(replica_id);
  RequestViews &views = threadRequestViews();
  layout.setInputViews(views, input_data);
  const auto &outputs = layout.executeOutputs();
  Submission submission;
  std::vector<std::shared_ptr<void>> keep;
  keep.reserve(outputs.size());
  views.outputs.reserve(outputs.size());
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    TensorMemory memory(layout.outputBytes(views, i));
    views.outputs.push_back(memory.getView());
    keep.push_back(memory.data);
    submission.outputs.emplace(outputs[i].anchor->name(), std::move(memory));
  }
  submission.completion = replica.submit(views, received, std::move(keep), wake_device);
  return submission;
}

// Synchronous requests are enqueued like any other, then the caller serves
// them itself if the device is free (Replica::serveInline).
OutputMemory ModelRunner::execute(const InputMemoryView &input_data, unsigned replica_id) {
  Submission submission = impl_->submitAllocating(input_data, replica_id, false);
  impl_->replica(replica_id).serveInline(*submission.completion);
  waitFor(*submission.completion);
  return std::move(submission.outputs);
}

void ModelRunner::execute(const InputMemoryView &input_data, const OutputMemoryView &output_data,
                          unsigned replica_id) {
  const auto received = RequestClock::now();
  Replica &replica = impl_->replica(replica_id);
  RequestViews &views = threadRequestViews();
  impl_->layout.setInputViews(views, input_data);
  impl_->layout.addOutputViews(views, output_data);
  const std::shared_ptr<Completion> completion = replica.submit(views, received, {}, false);
  replica.serveInline(*completion);
  waitFor(*completion);
}

OutputFutureMemory ModelRunner::executeAsync(const InputMemoryView &input_data, unsigned replica_id) {
  Submission submission = submit(input_data, replica_id);
  OutputFutureMemory futures;
  for (auto &[name, memory] : submission.outputs) futures.emplace(name, OutputFuture<TensorMemory>(submission.completion, memory));
  return futures;
}

OutputFutureMemoryView ModelRunner::executeAsync(const InputMemoryView &input_data,
                                                 const OutputMemoryView &output_data, unsigned replica_id) {
  std::shared_ptr<Completion> completion = submit(input_data, output_data, replica_id);
  OutputFutureMemoryView futures;
  for (const auto &[name, view] : output_data) futures.emplace(name, OutputFuture<TensorMemoryView>(completion, view));
  return futures;
}

std::vector<InputDesc> ModelRunner::getExecuteInputs() const { return impl_->layout.executeInputDescs(); }
std::vector<OutputDesc> ModelRunner::getExecuteOutputs() const { return impl_->layout.executeOutputDescs(); }
std::vector<InputDesc> ModelRunner::getModelInputs() const { return impl_->layout.modelInputDescs(); }
std::vector<OutputDesc> ModelRunner::getModelOutputs() const { return impl_->layout.modelOutputDescs(); }

std::shared_ptr<popef::Model> ModelRunner::model() const { return impl_->model; }
const ModelRunnerConfig &ModelRunner::config() const { return impl_->config; }
unsigned ModelRunner::numReplicas() const { return static_cast<unsigned>(impl_->replicas.size()); }

void ModelRunner::getTimeTrace(std::map<std::string, float> &time_info, unsigned replica_id, int cur) {
  impl_->replica(replica_id).stats().timeTrace(time_info, cur);
}

void ModelRunner::getMonitoringStatisticsPercentile(std::map<std::string, double> &monitoring_info, double quantile,
                                                    unsigned replica_id) {
  impl_->replica(replica_id).stats().percentile(monitoring_info, quantile);
}

void ModelRunner::getMonitoringStatisticsMean(std::map<std::string, double> &monitoring_info, unsigned replica_id) {
  impl_->replica(replica_id).stats().mean(monitoring_info);
}

void ModelRunner::getMonitoringStatisticsTotalCount(std::map<std::string, double> &monitoring_info,
                                                    unsigned replica_id) {
  impl_->replica(replica_id).stats().totalCount(monitoring_info);
}

hwsim::TimerTimePoint ModelRunner::deviceTime(unsigned replica_id) const {
  return impl_->replica(replica_id).deviceTime();
}

void ModelRunner::insertSimulatedError(hwsim::DeviceErrorCode code, const std::string &step_name,
                                       unsigned replica_id) {
  impl_->replica(replica_id).insertSimulatedError(code, step_name);
}

}  // namespace mrt
