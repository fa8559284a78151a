#include "runner/replica.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "common/logging.hpp"
#include "queue/futex.hpp"
#include "queue/ring_size_multiplier.hpp"

namespace mrt {

struct Replica::Request {
  std::shared_ptr<Completion> completion = std::make_shared<Completion>();
  // Outputs (or, without outputs, inputs) still to be transferred. Only the
  // device thread changes it after the request is enqueued.
  std::uint32_t remaining = 0;
  RequestTimes times;
  PendingList::iterator self;
  std::vector<std::shared_ptr<void>> keep;
};

namespace {

constexpr auto kNever = std::chrono::nanoseconds::max();

bool enabled(std::chrono::nanoseconds timeout) { return timeout.count() > 0 && timeout != kNever; }

// The period of the queues' timeout callback: the shortest timeout in use.
std::chrono::nanoseconds timeoutPeriod(const ModelRunnerConfig &config) {
  std::chrono::nanoseconds period = kNever;
  if (enabled(config.timeout_ns)) period = config.timeout_ns;
  const bool batch_timeouts = batchingEnabled(config) &&
                              (config.is_batch_size_timeout_enabled || enabled(config.batch_size_timeout_ns));
  if (batch_timeouts) {
    if (enabled(config.batch_size_timeout_ns)) period = std::min(period, config.batch_size_timeout_ns);
    if (enabled(config.data_parallel_timeout_ns)) period = std::min(period, config.data_parallel_timeout_ns);
  }
  return period == kNever ? std::chrono::nanoseconds::zero() : period;
}

SessionConfig sessionConfigFor(const ModelRunnerConfig &config, const RunnerLayout &layout) {
  SessionConfig session;
  session.policy = LaunchPolicy::Deferred;
  session.check_package_hash = config.check_package_hash;
  session.wait_config = config.device_wait_config;
  session.max_look_ahead = config.max_look_ahead;
  // Frozen inputs override the model's TensorData.
  session.pred_tensor_data = [&layout](const popef::Anchor &anchor) {
    return layout.isFrozen(anchor.name()) ? PopefDataUsagePolicy::USE_USER_DATA
                                          : PopefDataUsagePolicy::USE_POPEF_DATA_IF_ANY;
  };
  return session;
}

}  // namespace

Replica::Replica(unsigned id, std::shared_ptr<const popef::Model> model, const ModelRunnerConfig &config,
                 const RunnerLayout &layout, std::shared_ptr<Device> device)
    : id_(id), config_(config), device_(std::move(device)), stats_(config.request_tracepoints_buffer_size) {
  session_ = std::make_unique<Session>(model, sessionConfigFor(config, layout));
  bindSideStreams(layout);

  std::vector<const popef::Anchor *> anchors;
  for (const QueuedTensor &t : layout.executeInputs()) anchors.push_back(t.anchor);
  for (const QueuedTensor &t : layout.executeOutputs()) anchors.push_back(t.anchor);
  timeout_period_ = timeoutPeriod(config);
  QueueTimeoutCallback on_timeout;
  if (timeout_period_.count() > 0) {
    on_timeout = [this](const std::string &anchor, popef::TensorType direction, std::int64_t bytes_done) {
      onTimeout(anchor, direction, bytes_done);
    };
  }
  queues_ = session_->createQueueManager(
      anchors, ring_size_multiplier_factory::constantRingSizeMult(config.ring_buffer_size_multiplier),
      timeout_period_, std::move(on_timeout), layout.queueBatchingDim());
  for (const QueuedTensor &t : layout.executeInputs()) input_queues_.push_back(&queues_->inputQueue(t.anchor->name()));
  for (const QueuedTensor &t : layout.executeOutputs()) output_queues_.push_back(&queues_->outputQueue(t.anchor->name()));
  session_->bindToDevice(device_);
}

void Replica::bindSideStreams(const RunnerLayout &layout) {
  for (const FrozenTensor &frozen : layout.frozenInputs()) {
    const TensorMemory bytes = frozen.bytes;  // shares the layout's copy
    if (frozen.anchor->useRemoteBuffers()) {
      session_->setRemoteBufferData(
          frozen.anchor->handle(),
          popef::SharedBytes(bytes.data, {static_cast<const std::byte *>(bytes.data.get()), bytes.data_size_bytes}));
      continue;
    }
    session_->setCallbackForAnchor(frozen.anchor->handle(), [bytes](void *device_buffer) {
      std::memcpy(device_buffer, bytes.data.get(), bytes.data_size_bytes);
    });
  }
  const OutputMemoryView *save_outputs = nullptr;
  if (auto it = config_.replica_to_save_programs_outputs.find(id_); it != config_.replica_to_save_programs_outputs.end()) {
    save_outputs = &it->second;
  }
  for (const popef::Anchor *anchor : layout.otherOutputs()) {
    CallbackHandle callback;  // empty: the data is dropped
    if (save_outputs) {
      if (auto it = save_outputs->find(anchor->name()); it != save_outputs->end()) {
        const TensorMemoryView view = it->second;
        callback = [view](void *device_buffer) { std::memcpy(view.data, device_buffer, view.data_size_bytes); };
      }
    }
    session_->setCallbackForAnchor(anchor->handle(), std::move(callback));
  }
}

Replica::~Replica() { shutdown(); }

void Replica::start() { thread_ = std::thread([this] { deviceLoop(); }); }

// ---- producer side ----------------------------------------------------------

std::shared_ptr<Completion> Replica::submit(const RequestViews &views, RequestClock::time_point received,
                                            std::vector<std::shared_ptr<void>> keep, bool wake_device) {
  auto request = std::make_shared<Request>();
  Request *raw = request.get();
  raw->times.received = received;
  raw->keep = std::move(keep);
  raw->remaining = static_cast<std::uint32_t>(views.outputs.empty() ? views.inputs.size() : views.outputs.size());
  std::shared_ptr<Completion> completion = raw->completion;
  enqueueRequest(views, request);
  if (wake_device) wakeDevice();
  return completion;
}

void Replica::enqueueRequest(const RequestViews &views, const std::shared_ptr<Request> &request) {
  Request *raw = request.get();
  const std::shared_ptr<Completion> completion = raw->completion;  // finishOne may move the request's
  std::lock_guard producer(producer_mutex_);
  if (failed_.load(std::memory_order_acquire)) {
    std::lock_guard state(state_mutex_);
    throw Error(ErrorCode::DeviceError, "replica {} is out of service after a device error (auto_reset is off): {}",
                id_, failure_);
  }
  if (stopping_.load(std::memory_order_relaxed)) {
    throw Error(ErrorCode::Cancelled, "replica {}: the runner is shutting down", id_);
  }
  {
    std::lock_guard state(state_mutex_);
    pending_.push_back(request);
    raw->self = std::prev(pending_.end());
  }
  raw->times.enqueued = RequestClock::now();
  try {
    const bool count_inputs = views.outputs.empty();
    for (std::size_t i = 0; i < views.inputs.size(); ++i) {
      ReadStartCallback on_start;
      if (i == 0) on_start = [raw] { raw->times.read_start = RequestClock::now(); };
      ReadCompleteCallback on_read;
      if (count_inputs) on_read = [this, raw] { finishOne(raw); };
      input_queues_[i]->enqueue(views.inputs[i].data, static_cast<std::int64_t>(views.inputs[i].data_size_bytes),
                                std::move(on_start), std::move(on_read));
    }
    for (std::size_t i = 0; i < views.outputs.size(); ++i) {
      output_queues_[i]->enqueue(views.outputs[i].data, static_cast<std::int64_t>(views.outputs[i].data_size_bytes),
                                 [this, raw] { finishOne(raw); });
    }
  } catch (const Error &error) {
    // Disconnected by a device error or shutdown (Cancelled), or a bad size
    // the layout did not check (validate_io_params off).
    auto [code, message] = error.code() == ErrorCode::Cancelled ? refusalReason()
                                                                 : std::pair{error.code(), std::string(error.what())};
    {
      std::lock_guard state(state_mutex_);
      // The device side may already have failed and dropped it.
      if (std::find(pending_.begin(), pending_.end(), request) != pending_.end()) pending_.erase(raw->self);
    }
    completion->complete(code, message);
  }
}

std::pair<ErrorCode, std::string> Replica::refusalReason() {
  std::lock_guard state(state_mutex_);
  if (!recovering_.empty()) return {ErrorCode::DeviceError, recovering_};
  if (!failure_.empty()) return {ErrorCode::DeviceError, failure_};
  return {ErrorCode::Cancelled, fmt::format("replica {}: the runner was destroyed before the request ran", id_)};
}

// ---- device side ------------------------------------------------------------

void Replica::finishOne(Request *request) {
  if (--request->remaining != 0) return;
  request->times.completed = RequestClock::now();
  stats_.record(request->times);
  std::shared_ptr<Completion> completion = std::move(request->completion);
  {
    std::lock_guard state(state_mutex_);
    pending_.erase(request->self);  // frees the request
  }
  completion->complete(ErrorCode::Ok);
}

void Replica::deviceLoop() {
  {
    std::lock_guard device(device_mutex_);
    // Load at once, as a device would: Save at destruction finds the state
    // loaded even if no request ever came. (A synchronous caller may have
    // been first: its Main run loaded the state, which must not be reset.)
    if (!loaded_ && !runProgram(true)) return;
  }
  while (!stopping_.load() && serving_.load()) {
    {
      std::lock_guard device(device_mutex_);
      while (!stopping_.load() && serving_.load() && hasWork()) {
        if (!runProgram(false)) break;
      }
    }
    if (stopping_.load() || !serving_.load()) break;
    waitForWork();
  }
}

namespace {
// The replica whose programs this thread is running (callbacks run inside).
thread_local const Replica *t_running_replica = nullptr;
}  // namespace

bool Replica::runProgram(bool load) {
  struct Running {
    const Replica *previous;
    explicit Running(const Replica *replica) : previous(t_running_replica) { t_running_replica = replica; }
    ~Running() { t_running_replica = previous; }
  } running(this);
  try {
    if (load) {
      session_->runLoadPrograms();
    } else {
      applyInjectedErrors();
      session_->runMainPrograms();  // runs Load first after a (re)load
      ++main_runs_;
    }
    loaded_ = true;
    return true;
  } catch (const Error &error) {
    if (stopping_.load()) return false;
    if (error.code() == ErrorCode::DeviceError && config_.auto_reset) {
      log::logger().warn("replica {}: {}; resetting the device (auto_reset)", id_, error.what());
      if (recover(error.what())) return true;
    } else {
      failReplica(error.code(), error.what());
    }
  } catch (const std::exception &error) {
    failReplica(ErrorCode::Internal, error.what());
  }
  serving_.store(false);
  wakeDevice();  // the device thread leaves its loop too
  return false;
}

bool Replica::hasWork() const {
  if (!input_queues_.empty()) return input_queues_.front()->hasPendingData();
  if (!output_queues_.empty()) return output_queues_.front()->hasPendingData();
  return true;  // nothing to wait for: run on
}

bool Replica::workVisible() const {
  if (!input_queues_.empty()) return input_queues_.front()->ringBuffer().readAvailable();
  if (!output_queues_.empty()) return output_queues_.front()->ringBuffer().readAvailable();
  return true;
}

void Replica::waitForWork() {
  // Requests often come back to back: poll a little before sleeping, which
  // costs a futex wake to undo. The same budget as a ring's reader (plain
  // polls, then a few paused ones: some microseconds), not longer, since a
  // spinning device thread takes a core from the clients on a small host.
  constexpr unsigned kTightPolls = 2048, kPausedPolls = 512;
  for (unsigned i = 0; i < kTightPolls + kPausedPolls; ++i) {
    if (workVisible() || stopping_.load(std::memory_order_relaxed) || !serving_.load(std::memory_order_relaxed)) return;
    if (i >= kTightPolls) detail::cpuRelax();
  }
  const std::uint32_t seen = doorbell_.load(std::memory_order_seq_cst);
  // Store the flag, then look for work; producers enqueue, then look at the
  // flag (wakeDevice). With a full fence on both sides one of us sees the
  // other, so a request is never left with the device asleep.
  device_sleeping_.store(1, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  bool slept_a_period = false;
  if (!workVisible() && !stopping_.load() && serving_.load()) {
    const auto before = RequestClock::now();
    detail::futexWait(doorbell_, seen, timeout_period_.count() > 0 ? timeout_period_ : std::chrono::nanoseconds(-1));
    slept_a_period = timeout_period_.count() > 0 && RequestClock::now() - before >= timeout_period_;
  }
  device_sleeping_.store(0, std::memory_order_relaxed);
  if (slept_a_period && !stopping_.load() && serving_.load() && !workVisible()) {
    // What the queue's timeout callback does for a device waiting for its
    // first input: timeout_ns flushes, data_parallel_timeout_ns, retries.
    std::lock_guard device(device_mutex_);
    if (!input_queues_.empty()) {
      onTimeout(input_queues_.front()->name(), popef::TensorType::INPUT, 0);
    } else if (!output_queues_.empty()) {
      onTimeout(output_queues_.front()->name(), popef::TensorType::OUTPUT, 0);
    }
  }
}

void Replica::wakeDevice() {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // our enqueue before the look at the flag
  if (device_sleeping_.load(std::memory_order_relaxed) != 0) {
    doorbell_.fetch_add(1, std::memory_order_seq_cst);
    detail::futexWake(doorbell_);
  }
}

void Replica::serveInline(const Completion &completion) {
  // A callback (on_ready, flush_callback) of this replica's own run that
  // executes synchronously cannot serve itself: it already holds the device.
  if (t_running_replica == this) return;
  std::unique_lock device(device_mutex_, std::try_to_lock);
  if (!device.owns_lock()) {
    wakeDevice();  // whoever holds it looks for work before sleeping; this covers a sleeper
    return;
  }
  while (!completion.isReady() && !stopping_.load() && serving_.load()) {
    if (!runProgram(false)) break;
  }
  const bool more = !stopping_.load() && serving_.load() && hasWork();
  device.unlock();
  if (more) wakeDevice();  // requests queued behind ours are the device thread's
}

void Replica::applyInjectedErrors() {
  if (!has_injection_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(inject_mutex_);
  for (const auto &[code, location] : to_inject_) session_->engine().insertSimulatedError(code, location);
  to_inject_.clear();
  has_injection_.store(false);
}

void Replica::failPending(ErrorCode code, const std::string &message) {
  PendingList failed;
  {
    std::lock_guard state(state_mutex_);
    failed.swap(pending_);
  }
  for (const auto &request : failed) request->completion->complete(code, message);
}

bool Replica::recover(const std::string &message) {
  {
    std::lock_guard state(state_mutex_);
    recovering_ = message;
  }
  // Wakes producers blocked on full queues so they release the mutex; what
  // they enqueue from now on is refused with the device error.
  queues_->disconnectAll();
  std::lock_guard producer(producer_mutex_);
  failPending(ErrorCode::DeviceError, message);
  try {
    session_->engine().clearSimulatedErrors();  // a simulated fault happens once
    session_->reload();                         // resets the device and the queues
    deferred_input_flushes_.clear();
    deferred_output_flushes_.clear();
  } catch (const Error &error) {
    failReplica(error.code(), fmt::format("{}; then the reset failed: {}", message, error.what()));
    return false;
  }
  if (stopping_.load()) return false;
  std::lock_guard state(state_mutex_);
  recovering_.clear();
  return true;
}

void Replica::failReplica(ErrorCode code, const std::string &message) {
  {
    std::lock_guard state(state_mutex_);
    failure_ = message;
  }
  failed_.store(true, std::memory_order_release);
  queues_->disconnectAll();
  std::lock_guard producer(producer_mutex_);
  failPending(code, message);
}

void Replica::onTimeout(const std::string &anchor, popef::TensorType, std::int64_t bytes_done) {
  if (stopping_.load(std::memory_order_relaxed)) return;
  const auto now = RequestClock::now();
  WaitKey key{main_runs_, anchor, bytes_done};
  if (!(key == wait_key_)) {
    wait_key_ = std::move(key);
    wait_start_ = now - timeout_period_;  // the queue waited one period before calling
  }
  const auto waited = now - wait_start_;
  bool flush = false;
  const bool batch_timeouts = batchingEnabled(config_) &&
                              (config_.is_batch_size_timeout_enabled || enabled(config_.batch_size_timeout_ns));
  if (batch_timeouts) {
    // A partial batch is padded after batch_size_timeout_ns; an empty one
    // after data_parallel_timeout_ns.
    const auto limit = bytes_done > 0 ? config_.batch_size_timeout_ns : config_.data_parallel_timeout_ns;
    if (enabled(limit) && waited >= limit) flush = true;
  }
  if (!flush && enabled(config_.timeout_ns) && waited >= config_.timeout_ns) {
    if (config_.flush_on_waiting_outputs) {
      std::lock_guard state(state_mutex_);
      flush = !pending_.empty();
    } else {
      flush = true;
    }
  }
  // Flushes a full ring put off are retried at every callback.
  if (flush || !deferred_input_flushes_.empty() || !deferred_output_flushes_.empty()) flushForTimeout(anchor);
}

void Replica::flushForTimeout(const std::string &anchor) {
  // A producer holding the mutex is mid-request; the callback comes back
  // after another period.
  std::unique_lock producer(producer_mutex_, std::try_to_lock);
  if (!producer.owns_lock()) return;
  if (deferred_input_flushes_.empty() && deferred_output_flushes_.empty()) {
    const InputMemoryView *inputs = nullptr;
    const OutputMemoryView *outputs = nullptr;
    if (config_.flush_callback) {
      try {
        config_.flush_callback(anchor, inputs, outputs);
      } catch (const std::exception &error) {
        log::logger().error("replica {}: flush_callback threw: {}", id_, error.what());
      }
    }
    if (inputs == nullptr && outputs == nullptr) {
      for (auto &[name, queue] : queues_->inputs) deferred_input_flushes_.push_back(&queue);
      for (auto &[name, queue] : queues_->outputs) deferred_output_flushes_.push_back(&queue);
    } else {
      if (inputs) {
        for (const auto &[name, view] : *inputs) deferred_input_flushes_.push_back(&queues_->inputQueue(name));
      }
      if (outputs) {
        for (const auto &[name, view] : *outputs) deferred_output_flushes_.push_back(&queues_->outputQueue(name));
      }
    }
  }
  // Never block here: this thread is the one that drains the rings, so a
  // full ring would never empty (and the mutex would stay held). A queue
  // whose ring is full keeps its flush for the next callback.
  std::erase_if(deferred_input_flushes_, [](InputQueue *queue) { return queue->tryFlush(); });
  std::erase_if(deferred_output_flushes_, [](OutputQueue *queue) { return queue->tryFlush(); });
  if (deferred_input_flushes_.empty() && deferred_output_flushes_.empty()) {
    wait_key_.bytes = -1;  // what follows is a new wait
  }
}

// ---- control ---------------------------------------------------------------

void Replica::insertSimulatedError(hwsim::DeviceErrorCode code, const std::string &step_name) {
  const std::vector<hwsim::ErrorLocation> locations = session_->engine().getSimulatedErrorLocations(step_name);
  if (locations.empty()) {
    throw Error(ErrorCode::NotFound, "replica {}: no program step named '{}' to insert a simulated error at", id_,
                step_name);
  }
  std::lock_guard lock(inject_mutex_);
  to_inject_.emplace_back(code, locations.front());
  has_injection_.store(true, std::memory_order_release);
}

void Replica::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  stopping_.store(true);
  doorbell_.fetch_add(1, std::memory_order_seq_cst);
  detail::futexWake(doorbell_);
  if (thread_.joinable()) {
    if (config_.run_save_programs && !failed_.load()) {
      // Let the Main run in progress finish on dummy data, keeping the state.
      // (A queue whose ring is full already holds the data such a run needs.)
      std::lock_guard producer(producer_mutex_);
      for (auto &[name, queue] : queues_->inputs) queue.tryFlush();
      for (auto &[name, queue] : queues_->outputs) queue.tryFlush();
    } else {
      session_->stop();
      queues_->disconnectAll();
    }
    thread_.join();
  }
  // A synchronous caller may be running a Main run (it ends at the stop or
  // the flush above); from here on the device is ours.
  std::lock_guard device(device_mutex_);
  queues_->disconnectAll();
  failPending(ErrorCode::Cancelled, fmt::format("replica {}: the runner was destroyed before the request ran", id_));
  if (config_.run_save_programs && !failed_.load() && !session_->isStopped()) {
    try {
      session_->runSavePrograms();
    } catch (const std::exception &error) {
      log::logger().error("replica {}: Save programs failed: {}", id_, error.what());
    }
  }
}

}  // namespace mrt
