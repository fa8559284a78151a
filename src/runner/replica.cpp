#include "runner/replica.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <system_error>
#include <utility>

#include "common/batch_scheduling.hpp"
#include "common/logging.hpp"
#include "common/futex.hpp"
#include "common/thread_cpus.hpp"
#include "queue/ring_size_multiplier.hpp"

namespace mrt {

// Futures may outlive the runner, so the Completions reach their replica
// only through this link, which shutdown() disconnects before it takes the
// device for good: a waiter racing it either took the device first (and
// shutdown() waits for it to let go) or finds no replica.
// On cache lines of its own (alignas): every request copies the link, so its
// reference count changes at every request of this replica's clients.
class alignas(64) Replica::Link final : public Completer {
 public:
  explicit Link(Replica *replica) : replica_(replica) {}

  bool running() const noexcept override { return running_(); }
  void setRunning(bool running) noexcept { running_.set(running); }

  // Serves whenever the device is free, even while its thread is awake and
  // polling for work: measured on an idle 2-CPU VM, leaving the request to
  // that thread cost a cross-CPU hand-off each way (async mlp 30-32 us
  // against 9-10 us for execute; taking the device: 10.5-12.5 us). The
  // device thread then finds the device taken or the queues empty.
  void serveWaiter(const Completion &completion) override {
    Replica *replica = nullptr;
    std::unique_lock<std::mutex> device;
    {
      std::lock_guard lock(mutex_);
      if (replica_ == nullptr) return;
      device = replica_->tryTakeDevice();
      if (!device.owns_lock()) return;  // its holder, or the device thread, serves the request
      replica = replica_;
    }
    // A client that waits for one request most likely waits for its next
    // one too (submit, then wait): the device thread, left asleep until the
    // deferral ends, costs that submit no futex wake-up.
    replica->serveHolding(std::move(device), [&completion] { return completion.isReady(); }, true);
  }

  void disconnect() {
    std::lock_guard lock(mutex_);
    replica_ = nullptr;
  }

 private:
  detail::RunningFlag running_;
  std::mutex mutex_;
  Replica *replica_;  // null once disconnected (mutex_)
};

struct Replica::Request {
  explicit Request(std::shared_ptr<Completer> completer)
      : completion(std::allocate_shared<Completion>(RecyclingAllocator<Completion>(), std::move(completer))) {}

  std::shared_ptr<Completion> completion;
  // Outputs (or, without outputs, inputs) still to be transferred. Only the
  // device thread changes it after the request is enqueued.
  std::uint32_t remaining = 0;
  RequestTimes times;
  PendingList::iterator self;
  std::vector<std::shared_ptr<void>> keep;
  // With auto_reset only: what to enqueue again if a device error hits a
  // run before this request's data moved (the reset empties the queues).
  RequestViews views;
};

namespace {

constexpr auto kNever = std::chrono::nanoseconds::max();

// The transfers that complete a request: its outputs, or without outputs
// its inputs.
std::uint32_t transfersToComplete(const RequestViews &views) {
  return static_cast<std::uint32_t>(views.outputs.empty() ? views.inputs.size() : views.outputs.size());
}

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

void complete(Completion &completion, const Error &reason) {
  completion.complete(reason.code(), reason.what(), reason.recoveryAction());
}

// What a runner's user can do about a replica out of service: not
// Session::reload(), which only the replica can call.
std::string outOfServiceAdvice(bool autoReset, RecoveryAction action) {
  constexpr const char *kRecreate = "destroy this runner and create a new one to serve again";
  if (!autoReset) {
    return fmt::format("auto_reset is off: {} (with auto_reset a replica resets its device itself after an "
                       "IPU_RESET error or a hang)",
                       kRecreate);
  }
  return fmt::format("auto_reset recovers from IPU_RESET errors only, this one needs {}: {} (the new runner "
                     "resets the device when it loads)",
                     hwsim::toString(static_cast<hwsim::RecoveryAction>(action)), kRecreate);
}

// The same for a device whose in-model replicas all fail together.
std::string sharedDeviceAdvice(unsigned model_replicas) {
  return fmt::format("the device serves the model's {} in-model replicas, which all go out of service with it "
                     "(auto_reset does not reset it under the others): destroy this runner and create a new one to "
                     "serve again",
                     model_replicas);
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

std::shared_ptr<Session> Replica::makeSession(unsigned copy, std::shared_ptr<const popef::Model> model,
                                              const hwsim::Executable &executable, const ModelRunnerConfig &config,
                                              const RunnerLayout &layout) {
  // Each copy's engine writes its own profile reports (autoReport.*): in
  // replica<N> (N: the copy's first replica id) under the model's directory
  // when there are several.
  const auto &engineOptions = model->metadata.engineOptions();
  if (const auto dir = engineOptions.find("autoReport.directory");
      config.replication_factor > 1 && dir != engineOptions.end()) {
    const unsigned first = copy * executable.replicationFactor();
    model = popef::withEngineOptions(*model, {{"autoReport.directory", fmt::format("{}/replica{}", dir->second, first)}});
  }
  SessionConfig session_config = sessionConfigFor(config, layout);
  session_config.executable = executable;
  return std::make_shared<Session>(model, session_config);
}

Replica::Replica(unsigned id, std::shared_ptr<Session> session, unsigned lane, const ModelRunnerConfig &config,
                 const RunnerLayout &layout, std::shared_ptr<Device> device)
    : id_(id),
      lane_(lane),
      config_(config),
      device_(std::move(device)),
      session_(std::move(session)),
      link_(std::make_shared<Link>(this)),
      created_(RequestClock::now()),
      creator_cpus_(detail::ThreadCpus::ofThisThread()),
      stats_(config.request_tracepoints_buffer_size) {
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
  queues_ = session_->createQueueManagerForReplica(
      lane_, anchors, ring_size_multiplier_factory::constantRingSizeMult(config.ring_buffer_size_multiplier),
      timeout_period_, std::move(on_timeout), layout.queueBatchingDim());
  for (const QueuedTensor &t : layout.executeInputs()) input_queues_.push_back(&queues_->inputQueue(t.anchor->name()));
  for (const QueuedTensor &t : layout.executeOutputs()) output_queues_.push_back(&queues_->outputQueue(t.anchor->name()));
  // A replicated model's Main runs whole on this replica's lane
  // (Session::mainIsPipelined is false for it).
  pipelined_ = session_->mainIsPipelined();
  serves_at_full_queues_ = session_->mainCopiesEachStreamAtMostOnce();
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
    session_->setCallbackForAnchor(frozen.anchor->handle(), lane_, [bytes](void *device_buffer) {
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
    session_->setCallbackForAnchor(anchor->handle(), lane_, std::move(callback));
  }
}

Replica::~Replica() { shutdown(); }

bool Replica::loadOnThisThread() {
  bool load_ok = true;
  {
    std::lock_guard device(device_mutex_);
    // Load at once, as a device would: Save at destruction finds the state
    // loaded even if no request ever came. (A synchronous caller may have
    // been first: its Main run loaded the state, which must not be reset.)
    if (!loaded_) load_ok = runProgram(true);
  }
  {
    std::lock_guard lock(initial_load_mutex_);
    initial_load_done_ = true;
  }
  initial_load_cv_.notify_all();
  return load_ok;
}

void Replica::start() {
  // Loaded already: the thread is started by the first wakeDevice(), or by
  // watch() just ahead of the idle device's first timeout. A runner served
  // only by synchronous callers (who run the device themselves) starts it
  // at its first timeout, and creation wakes no thread: waking one parked
  // on an idle CPU cost the waker 12-17 us on the 2-vCPU VMs measured, and
  // the thread polling for work beside the rest of the creation slowed
  // that by a third (bench_runner_creation: add_one 39 -> 19 us).
  const bool loaded = [this] {
    std::lock_guard lock(initial_load_mutex_);
    return initial_load_done_;
  }();
  if (loaded) {
    // From here on the first wakeDevice() or watch() starts it; not before:
    // the watchdog must not start a thread that would run Load again while
    // the creating thread runs it.
    device_sleeping_.store(kNotStarted);
    return;
  }
  startDeviceThread();
}

void Replica::startDeviceThread() {
  std::lock_guard lock(thread_mutex_);
  // shutdown() sets stopping_ before it looks at thread_ under this lock.
  if (stopping_.load() || !serving_.load() || thread_.joinable()) return;
  thread_ = detail::ReusedThread([this] { deviceLoop(); });
}

void Replica::startDeferredThread(RequestClock::time_point idle_since) {
  std::uint32_t expected = kNotStarted;
  if (!device_sleeping_.compare_exchange_strong(expected, 0)) return;  // started, or being started
  idle_since_ = idle_since;  // read by the thread started below
  try {
    startDeviceThread();
  } catch (const std::exception &error) {  // std::system_error, std::bad_alloc
    serving_.store(false);
    failReplica(
        Error(ErrorCode::ResourceExhausted, "replica {}: its device thread could not be started: {}", id_, error.what()));
  }
}

void Replica::awaitInitialLoad() {
  std::unique_lock lock(initial_load_mutex_);
  initial_load_cv_.wait(lock, [this] { return initial_load_done_; });
}

// ---- producer side ----------------------------------------------------------

std::shared_ptr<Completion> Replica::submit(const RequestViews &views, RequestClock::time_point received,
                                            std::vector<std::shared_ptr<void>> keep, bool wake_device) {
  auto request = std::allocate_shared<Request>(RecyclingAllocator<Request>(), link_);
  Request *raw = request.get();
  raw->times.received = received;
  raw->keep = std::move(keep);
  raw->remaining = transfersToComplete(views);
  if (config_.auto_reset) raw->views = views;
  std::shared_ptr<Completion> completion = raw->completion;
  enqueueRequest(views, request);
  if (wake_device) wakeDevice();
  return completion;
}

void Replica::enqueueRequest(const RequestViews &views, const std::shared_ptr<Request> &request) {
  // Without validate_io_params nothing has checked the sizes yet. A request
  // the queues refuse halfway would leave its first entries queued, pointing
  // at the freed request, so everything is checked before the first push.
  if (!config_.validate_io_params) checkEntries(views);
  Request *raw = request.get();
  const std::shared_ptr<Completion> completion = raw->completion;  // finishOne may move the request's
  serveWhileFull();
  std::lock_guard producer(producer_mutex_);
  if (failed_.load(std::memory_order_acquire)) {
    std::lock_guard state(state_mutex_);
    throw Error(ErrorCode::DeviceError, "replica {} is out of service: {}", id_, failure_->what())
        .withRecoveryAction(failure_->recoveryAction());
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
    pushEntries(views, raw);
  } catch (const Error &error) {
    // Disconnected by a device error or shutdown (Cancelled); what was
    // pushed is dropped when the queues are reset or never read.
    const Error reason = error.code() == ErrorCode::Cancelled ? refusalReason() : error;
    {
      std::lock_guard state(state_mutex_);
      // The device side may already have failed and dropped it.
      if (std::find(pending_.begin(), pending_.end(), request) != pending_.end()) pending_.erase(raw->self);
    }
    completion->complete(reason.code(), reason.what(), reason.recoveryAction());
  }
}

void Replica::checkEntries(const RequestViews &views) const {
  for (std::size_t i = 0; i < views.inputs.size(); ++i) {
    input_queues_[i]->checkEntry(views.inputs[i].data, static_cast<std::int64_t>(views.inputs[i].data_size_bytes));
  }
  for (std::size_t i = 0; i < views.outputs.size(); ++i) {
    output_queues_[i]->checkEntry(views.outputs[i].data, static_cast<std::int64_t>(views.outputs[i].data_size_bytes));
  }
}

void Replica::pushEntries(const RequestViews &views, Request *request) {
  const bool count_inputs = views.outputs.empty();
  for (std::size_t i = 0; i < views.inputs.size(); ++i) {
    ReadStartCallback on_start;
    if (i == 0) on_start = [request] { request->times.read_start = RequestClock::now(); };
    ReadCompleteCallback on_read;
    if (count_inputs) on_read = [this, request] { finishOne(request); };
    input_queues_[i]->enqueue(views.inputs[i].data, static_cast<std::int64_t>(views.inputs[i].data_size_bytes),
                              std::move(on_start), std::move(on_read));
  }
  for (std::size_t i = 0; i < views.outputs.size(); ++i) {
    output_queues_[i]->enqueue(views.outputs[i].data, static_cast<std::int64_t>(views.outputs[i].data_size_bytes),
                               [this, request] { finishOne(request); });
  }
}

Error Replica::deviceError(const Error &error, const std::string &advice) const {
  const std::string failure = session_->deviceFailure();
  std::string message = fmt::format("replica {}: device error: {}", id_, failure.empty() ? error.what() : failure);
  if (!advice.empty()) message += "; " + advice;
  return Error(ErrorCode::DeviceError, message).withRecoveryAction(error.recoveryAction());
}

Error Replica::refusalReason() {
  std::lock_guard state(state_mutex_);
  if (recovering_) return *recovering_;
  if (failure_) return *failure_;
  return Error(ErrorCode::Cancelled, "replica {}: the runner was destroyed before the request ran", id_);
}

// ---- device side ------------------------------------------------------------

void Replica::finishOne(Request *request) {
  progress_.fetch_add(1, std::memory_order_relaxed);
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
  // Woken by a client's submit on a CPU they share, the device thread must
  // not preempt it (common/batch_scheduling.hpp): the client then goes on,
  // queueing more requests or serving its own while it waits (caller-runs).
  detail::useBatchScheduling();
  creator_cpus_.applyToThisThread();
  link_->setRunning(true);
  struct Parked {  // once the thread ends, nobody should wait for it polling
    Link &link;
    ~Parked() { link.setRunning(false); }
  } parked_at_exit{*link_};
  bool loaded_before = false;  // by the runner's constructor
  {
    std::lock_guard lock(initial_load_mutex_);
    loaded_before = initial_load_done_;
  }
  if (!loaded_before && !loadOnThisThread()) return;
  while (!stopping_.load() && serving_.load()) {
    if (!deferToClients()) {
      std::unique_lock device(device_mutex_, std::try_to_lock);
      // A client serving its requests itself wakes this thread when it
      // lets go with work left; blocking on the mutex would cost it a
      // wake-up at every let-go instead.
      if (!device.owns_lock() && !waiter_serving_.load()) device.lock();
      // A pipelined Main ends the runs in flight before the device is let go.
      while (device.owns_lock() && !stopping_.load() && serving_.load() &&
             (hasWork() || session_->mainPipelineBusy())) {
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

bool Replica::runProgram(bool load, bool may_start) {
  struct Running {
    const Replica *previous;
    explicit Running(const Replica *replica) : previous(t_running_replica) { t_running_replica = replica; }
    ~Running() { t_running_replica = previous; }
  } running(this);
  try {
    if (load) {
      session_->runLoadPrograms(lane_);
    } else {
      const bool armed = applyInjectedErrors();
      // Runs Load first after a (re)load. A pipelined Main starts a run
      // only when a request is there to feed it, else it moves the runs in
      // flight on (a new run would wait for data while they hold results).
      if (pipelined_) {
        session_->runMainProgramsPipelined(may_start && hasWork());
      } else {
        session_->runMainPrograms(lane_);
      }
      ++main_runs_;
      // An inserted error is for this run only: one whose step did not run
      // must neither fire later nor collide with the next insertion there.
      if (armed) session_->engine().clearSimulatedErrors();
    }
    loaded_ = true;
    return true;
  } catch (const Error &error) {
    if (stopping_.load()) return false;
    // A run watch() stopped is handled as a device error, with its
    // requests failing with DeadlineExceeded: the stop left the device state
    // undefined, so only a reset lets the replica serve on.
    const bool hung = error.code() == ErrorCode::Cancelled && takeHangStop();
    // A replica sharing its device finds the error another one hit.
    const bool device_failed =
        error.code() == ErrorCode::DeviceError || (sharesDevice() && !session_->deviceFailure().empty());
    if (!hung && !device_failed) {
      failReplica(error);
    } else if (config_.auto_reset && !sharesDevice() &&
               (hung || error.recoveryAction() == RecoveryAction::IpuReset)) {
      const Error reason = hung ? Error(ErrorCode::DeadlineExceeded, hangMessage()) : deviceError(error);
      log::logger().warn("{}; resetting the device (auto_reset)", reason.what());
      if (recover(reason)) return true;
    } else {
      const std::string advice = sharesDevice() ? sharedDeviceAdvice(session_->replicationFactor())
                                                : outOfServiceAdvice(config_.auto_reset, error.recoveryAction());
      failReplica(hung ? Error(ErrorCode::DeadlineExceeded, "{}; {}", hangMessage(), advice)
                       : deviceError(error, advice));
    }
  } catch (const std::exception &error) {
    failReplica(Error(ErrorCode::Internal, error.what()));
  }
  serving_.store(false);
  wakeDevice();  // the device thread leaves its loop too
  return false;
}

bool Replica::hasWork() const {
  // A request's inputs prepared ahead (max_look_ahead) have left the queues
  // already but still wait for the run that consumes them.
  if (session_->preparedAhead() > 0) return true;
  if (!input_queues_.empty()) return input_queues_.front()->hasPendingData();
  if (!output_queues_.empty()) return output_queues_.front()->hasPendingData();
  return true;  // nothing to wait for: run on
}

bool Replica::workVisible() const {
  if (session_->preparedAhead() > 0) return true;
  if (!input_queues_.empty()) return input_queues_.front()->ringBuffer().readAvailable();
  if (!output_queues_.empty()) return output_queues_.front()->ringBuffer().readAvailable();
  return true;
}

std::int64_t Replica::nanosUntil(std::int64_t deadline) {
  return deadline - std::chrono::duration_cast<std::chrono::nanoseconds>(RequestClock::now().time_since_epoch()).count();
}

bool Replica::deferToClients() const {
  return waiter_serving_.load() || nanosUntil(clients_serve_until_.load(std::memory_order_relaxed)) > 0;
}

bool Replica::workForDeviceThread() const { return !deferToClients() && workVisible(); }

void Replica::waitForWork() {
  // Requests often come back to back: poll while that pays
  // (common/adaptive_spin.hpp) before sleeping, which costs a futex wake to
  // undo. Never on a CPU shared with the clients: polling would only delay
  // the request it waits for.
  const auto work_or_stop = [this] {
    return workForDeviceThread() || stopping_.load(std::memory_order_relaxed) ||
           !serving_.load(std::memory_order_relaxed);
  };
  // Started by watch() ahead of the idle device's first timeout: the device
  // has waited since then, so its first period ends sooner.
  const RequestClock::time_point idle_since = std::exchange(idle_since_, RequestClock::time_point{});
  // While clients serve, nothing to poll for: they keep the device, and
  // one letting go with work left wakes this thread.
  if (!deferToClients() && work_spin_.spin(work_or_stop)) return;
  const std::uint32_t seen = doorbell_.load(std::memory_order_seq_cst);
  // Until a deadline of the clients' (deferToClients), this thread looks
  // again by itself, so producers need not wake it.
  const bool deferring = nanosUntil(clients_serve_until_.load(std::memory_order_relaxed)) > 0;
  // Store the flag, then look for work; producers enqueue, then look at the
  // flag (wakeDevice). With a full fence on both sides one of us sees the
  // other, so a request is never left with the device asleep.
  device_sleeping_.store(deferring ? kSleepingUntilDeadline : kSleeping, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  // The deadline as it is now: a client may have served (and moved it)
  // since the flag was chosen, and a request it then queued saw this
  // thread awake and rang nothing. Work left to the clients is looked at
  // again when their deadline passes (or a deferral later, if one of them
  // still holds the device: letting go, it rings only a thread sleeping
  // with kSleeping); so is everything while producers do not ring.
  const std::int64_t left = nanosUntil(clients_serve_until_.load(std::memory_order_relaxed));
  auto timeout = std::chrono::nanoseconds(-1);
  RequestClock::time_point waiting_since{};
  if (timeout_period_.count() > 0) {
    const auto now = RequestClock::now();
    waiting_since = idle_since != RequestClock::time_point{} ? idle_since : now;
    timeout = std::max<std::chrono::nanoseconds>(timeout_period_ - (now - waiting_since), std::chrono::nanoseconds(1));
  }
  const auto bound = [&](std::chrono::nanoseconds t) {
    if (timeout.count() < 0 || t < timeout) timeout = t;
  };
  if (deferring) bound(std::chrono::nanoseconds(std::max<std::int64_t>(left, 0)));
  if (workVisible()) bound(left > 0 ? std::chrono::nanoseconds(left) : kDeferToServingClients);
  bool slept_a_period = false;
  if (!workForDeviceThread() && !stopping_.load() && serving_.load() && timeout.count() != 0) {
    link_->setRunning(false);  // clients waiting for us serve themselves or park at once
    detail::futexWait(doorbell_, seen, timeout);
    link_->setRunning(true);
    slept_a_period = timeout_period_.count() > 0 && RequestClock::now() - waiting_since >= timeout_period_;
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
  // The first waker clears the flag: one wake-up per sleep. A device thread
  // woken but not yet running (it does not preempt its waker, see
  // deviceLoop) costs the requests after it no syscall; it looks for work
  // before it sleeps again.
  // One sleeping until a deadline looks again by itself.
  const std::uint32_t state = device_sleeping_.load(std::memory_order_relaxed);
  if (state == kNotStarted) {
    startDeferredThread({});
  } else if (state == kSleeping && device_sleeping_.exchange(0) == kSleeping) {
    doorbell_.fetch_add(1, std::memory_order_seq_cst);
    detail::futexWake(doorbell_);
  }
}

std::unique_lock<std::mutex> Replica::tryTakeDevice() {
  // A callback (on_ready, flush_callback) of a run that executes
  // synchronously or waits already holds a device: this one's (locking it
  // again would be undefined), or another's (serving this one from inside
  // it could lead back to the first).
  if (t_running_replica != nullptr) return {};
  return std::unique_lock(device_mutex_, std::try_to_lock);
}

void Replica::serveInline(const Completion &completion) {
  std::unique_lock device = tryTakeDevice();
  if (!device.owns_lock()) {
    wakeDevice();  // whoever holds it looks for work before sleeping; this covers a sleeper
    return;
  }
  serveHolding(std::move(device), [&completion] { return completion.isReady(); }, false);
}

bool Replica::anyQueueFull() const {
  return std::any_of(input_queues_.begin(), input_queues_.end(), [](const InputQueue *q) { return q->isFull(); }) ||
         std::any_of(output_queues_.begin(), output_queues_.end(), [](const OutputQueue *q) { return q->isFull(); });
}

void Replica::serveWhileFull() {
  if (!serves_at_full_queues_ || !anyQueueFull()) return;
  std::unique_lock device = tryTakeDevice();
  if (!device.owns_lock()) return;
  serveHolding(std::move(device), [this] { return !anyQueueFull() || !hasWork(); }, true);
}

void Replica::deferDeviceThreadToClients() {
  const auto until = RequestClock::now() + kDeferToServingClients;
  clients_serve_until_.store(until.time_since_epoch().count(), std::memory_order_relaxed);
}

template <typename Done>
void Replica::serveHolding([[maybe_unused]] std::unique_lock<std::mutex> device, Done done, bool defer_after) {
  // `device` is held until this returns.
  waiter_serving_.store(true);
  bool ran = false;
  while (!done() && !stopping_.load() && serving_.load()) {
    ran = true;
    if (!runProgram(false)) break;
  }
  // The runs of a pipelined Main still in flight end before the device is
  // let go; the requests queued behind them are the device thread's, woken
  // while this thread still holds the device (once it lets go, shutdown()
  // may free the replica under a waiter).
  while (session_->mainPipelineBusy() && !stopping_.load() && serving_.load()) {
    if (!runProgram(false, false)) break;
  }
  // From the let-go, and only after a serve that ran something.
  if (defer_after && ran) deferDeviceThreadToClients();
  waiter_serving_.store(false);
  // The store before the look at the queues, as producers enqueue before
  // they look at the device thread's flag (wakeDevice).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!stopping_.load() && serving_.load() && hasWork()) wakeDevice();
}

bool Replica::applyInjectedErrors() {
  if (!has_injection_.load(std::memory_order_acquire)) return false;
  std::lock_guard lock(inject_mutex_);
  for (const auto &[location, code] : to_inject_) session_->engine().insertSimulatedError(code, location);
  to_inject_.clear();
  has_injection_.store(false);
  return true;
}

void Replica::failPending(const Error &reason) {
  PendingList failed;
  {
    std::lock_guard state(state_mutex_);
    failed.swap(pending_);
  }
  for (const auto &request : failed) complete(*request->completion, reason);
}

bool Replica::recover(const Error &reason) {
  {
    std::lock_guard state(state_mutex_);
    recovering_ = reason;
  }
  // Wakes producers blocked on full queues so they release the mutex; what
  // they enqueue from now on is refused with the device error.
  queues_->disconnectAll();
  std::optional<Error> reset_error;
  std::size_t requeued = 0;
  {
    std::lock_guard producer(producer_mutex_);
    const std::vector<std::shared_ptr<Request>> queued = failRunRequests(reason);
    requeued = queued.size();
    try {
      session_->engine().clearSimulatedErrors();  // a simulated fault happens once
      session_->reload();                         // resets the device and the queues
      deferred_input_flushes_.clear();
      deferred_output_flushes_.clear();
      // The reset emptied the queues; these requests were whole in them
      // before, so they fit again and enqueueing them cannot block.
      for (const auto &request : queued) {
        request->remaining = transfersToComplete(request->views);
        request->times.read_start = {};
        pushEntries(request->views, request.get());
      }
    } catch (const Error &error) {
      reset_error = error;
    }
  }
  // Shutting down (which may have stopped the reload): shutdown() cancels
  // what is pending.
  if (stopping_.load()) return false;
  if (reset_error) {
    failReplica(Error(reset_error->code(), "{}; then the reset failed: {}", reason.what(), reset_error->what()));
    return false;
  }
  log::logger().info("replica {}: device {} reset, serving again ({} request(s) queued again)", id_, deviceId(),
                     requeued);
  std::lock_guard state(state_mutex_);
  recovering_.reset();
  return true;
}

std::vector<std::shared_ptr<Replica::Request>> Replica::failRunRequests(const Error &reason) {
  // A request the device started to read belongs to the failed run (or an
  // earlier run of it, for a request split over several). Without execute
  // inputs nothing tells, so every pending request counts as started. After
  // a hang too: the run may have hung before reading any, and would hang
  // again on the same requests.
  const bool all = input_queues_.empty() || reason.code() == ErrorCode::DeadlineExceeded;
  PendingList failed;
  std::vector<std::shared_ptr<Request>> queued;
  {
    std::lock_guard state(state_mutex_);
    for (auto it = pending_.begin(); it != pending_.end();) {
      const auto next = std::next(it);
      if (all || (*it)->times.read_start != RequestClock::time_point{}) {
        failed.splice(failed.end(), pending_, it);
      } else {
        queued.push_back(*it);
      }
      it = next;
    }
  }
  for (const auto &request : failed) complete(*request->completion, reason);
  return queued;
}

void Replica::failReplica(const Error &reason) {
  {
    std::lock_guard state(state_mutex_);
    failure_ = reason;
  }
  failed_.store(true, std::memory_order_release);
  queues_->disconnectAll();
  std::lock_guard producer(producer_mutex_);
  failPending(reason);
}

void Replica::onTimeout(const std::string &anchor, popef::TensorType, std::int64_t bytes_done) {
  progress_.fetch_add(1, std::memory_order_relaxed);  // waiting for the caller is not hanging
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

void Replica::selectTimeoutFlush(const std::string &anchor) {
  const InputMemoryView *inputs = nullptr;
  const OutputMemoryView *outputs = nullptr;
  if (config_.flush_callback) {
    try {
      config_.flush_callback(anchor, inputs, outputs);
    } catch (const std::exception &error) {
      log::logger().error("replica {}: flush_callback threw: {}; flushing every queue", id_, error.what());
      inputs = nullptr;
      outputs = nullptr;
    }
  }
  if (inputs != nullptr || outputs != nullptr) {
    try {
      if (inputs) {
        for (const auto &[name, view] : *inputs) deferred_input_flushes_.push_back(&queues_->inputQueue(name));
      }
      if (outputs) {
        for (const auto &[name, view] : *outputs) deferred_output_flushes_.push_back(&queues_->outputQueue(name));
      }
      return;
    } catch (const Error &error) {
      log::logger().error("replica {}: flush_callback's choice is wrong: {}; flushing every queue instead", id_, error.what());
      deferred_input_flushes_.clear();
      deferred_output_flushes_.clear();
    }
  }
  for (auto &[name, queue] : queues_->inputs) deferred_input_flushes_.push_back(&queue);
  for (auto &[name, queue] : queues_->outputs) deferred_output_flushes_.push_back(&queue);
}

void Replica::flushForTimeout(const std::string &anchor) {
  // A producer holding the mutex is mid-request; the callback comes back
  // after another period.
  std::unique_lock producer(producer_mutex_, std::try_to_lock);
  if (!producer.owns_lock()) return;
  if (deferred_input_flushes_.empty() && deferred_output_flushes_.empty()) selectTimeoutFlush(anchor);
  // Never block here: this thread is the one that drains the rings, so a
  // full ring would never empty (and the mutex would stay held). And flush
  // every queue or none: the padding must sit at the same place in each
  // queue's sequence. An input padded now and its output later (after the
  // next request's entry) would hand that request the padding's results.
  // If a ring is full (or a queue's first flush finds no memory for its
  // dummy entry) the whole flush waits for the next callback. (When
  // the device really waits for data, the rings it is not waiting on hold
  // less than one transfer of entries, so they have room.)
  const bool room = std::all_of(deferred_input_flushes_.begin(), deferred_input_flushes_.end(),
                                [](InputQueue *queue) { return queue->canFlushNow(); }) &&
                    std::all_of(deferred_output_flushes_.begin(), deferred_output_flushes_.end(),
                                [](OutputQueue *queue) { return queue->canFlushNow(); });
  if (!room) return;
  for (InputQueue *queue : deferred_input_flushes_) queue->flush();
  for (OutputQueue *queue : deferred_output_flushes_) queue->flush();
  deferred_input_flushes_.clear();
  deferred_output_flushes_.clear();
  wait_key_.bytes = -1;  // what follows is a new wait
}

// ---- hangs -----------------------------------------------------------------

namespace {
// Timeouts of a few milliseconds keep flushes prompt, but a Main run may
// legitimately compute for longer than that between two transfers (a big
// model, a loaded host), so a hang takes at least this long to be declared.
constexpr std::chrono::seconds kMinHangTime{1};

double millis(std::chrono::nanoseconds d) { return std::chrono::duration<double, std::milli>(d).count(); }
}  // namespace

std::chrono::nanoseconds Replica::hangTime(const ModelRunnerConfig &config) {
  return enabled(config.timeout_ns) ? std::max<std::chrono::nanoseconds>(config.timeout_ns, kMinHangTime)
                                    : kMinHangTime;
}

void Replica::watch(RequestClock::time_point now) {
  // A device thread left to start at the first wake-up (start()) starts
  // before the next watch if the idle device's first timeout comes before
  // it, and flushes then as it would have had it run from creation.
  if (device_sleeping_.load(std::memory_order_relaxed) == kNotStarted && timeout_period_.count() > 0 &&
      now - created_ + watchPeriod(config_) >= timeout_period_) {
    startDeferredThread(created_);
  }
  const std::uint64_t progress = progress_.load(std::memory_order_relaxed);
  bool stop_session = false;
  {
    std::lock_guard state(state_mutex_);
    if (shutdown_started_ != RequestClock::time_point{}) {
      stop_session = now - shutdown_started_ >= hangTime(config_);
    } else if (!enabled(config_.timeout_ns) || pending_.empty()) {
      watched_since_ = {};  // an idle replica is not hung: the clock starts when requests are seen
    } else if (watched_since_ == RequestClock::time_point{} || progress != watched_progress_) {
      watched_progress_ = progress;
      watched_since_ = now;
    } else if (now - watched_since_ >= hangTime(config_)) {
      watched_since_ = now;  // the run ends at its next step; stop again only after another hangTime()
      hang_stopped_ = true;
      // The engine alone, not Session::stop(): the queues stay connected, so
      // requests arriving meanwhile are refused by recover() with the hang,
      // not as if the runner were shutting down. A run waiting in a queue
      // for the caller's data is not hung (onTimeout counts as progress).
      session_->engine().stop();
    }
  }
  // Outside the lock: Session::stop() wakes threads blocked in the queues.
  if (stop_session) session_->stop();
}

std::chrono::nanoseconds Replica::watchPeriod(const ModelRunnerConfig &config) { return hangTime(config) / 4; }

std::chrono::nanoseconds Replica::firstWatch(const ModelRunnerConfig &config) {
  const std::chrono::nanoseconds period = watchPeriod(config), timeout = timeoutPeriod(config);
  return timeout.count() > 0 ? std::min(period, timeout) : period;
}

bool Replica::takeHangStop() {
  std::lock_guard state(state_mutex_);
  return std::exchange(hang_stopped_, false);
}

std::string Replica::hangMessage() const {
  return fmt::format(
      "deadline exceeded: the model's programs on replica {} ran for {} ms without moving any data of the pending "
      "requests, so the run was stopped (the programs may loop for ever or skip their stream copies; the limit is "
      "timeout_ns, {} ms, but at least {} ms)",
      id_, millis(hangTime(config_)), millis(config_.timeout_ns), millis(kMinHangTime));
}

// ---- control ---------------------------------------------------------------

void Replica::insertSimulatedError(hwsim::DeviceErrorCode code, const std::string &step_name) {
  if (sharesDevice()) {
    throw Error(ErrorCode::FailedPrecondition,
                "replica {}: simulated errors cannot be inserted into a model with in-model replication (its {} "
                "replicas run concurrently on one engine)",
                id_, session_->replicationFactor());
  }
  if (step_name.empty()) {
    throw Error(ErrorCode::InvalidArgument, "replica {}: the step name to insert a simulated error at is empty", id_);
  }
  const std::vector<hwsim::ErrorLocation> locations = session_->engine().getSimulatedErrorLocations(step_name);
  if (locations.empty()) {
    throw Error(ErrorCode::NotFound, "replica {}: no program step named '{}' to insert a simulated error at", id_,
                step_name);
  }
  std::lock_guard lock(inject_mutex_);
  // A step fails once per run: a second error there replaces the first.
  to_inject_.insert_or_assign(locations.front(), code);
  has_injection_.store(true, std::memory_order_release);
}

void Replica::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  stopping_.store(true);
  // From here on no waiter takes the device; one that already has it ends
  // its serving at the stop below and lets go before the device is ours.
  link_->disconnect();
  if (config_.run_save_programs) {
    // The programs waited for below (the Main run in progress, Save) get
    // hangTime(); then watch() stops them, so destruction always returns.
    std::lock_guard state(state_mutex_);
    shutdown_started_ = RequestClock::now();
  }
  doorbell_.fetch_add(1, std::memory_order_seq_cst);
  detail::futexWake(doorbell_);
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
  // After stopping_: a first wakeDevice() racing this either started the
  // thread already or will not start it.
  const bool started = [this] {
    std::lock_guard lock(thread_mutex_);
    return thread_.joinable();
  }();
  if (started) thread_.join();
  // A synchronous caller may be running a Main run (it ends at the stop or
  // the flush above); from here on the device is ours.
  std::lock_guard device(device_mutex_);
  queues_->disconnectAll();
  failPending(Error(ErrorCode::Cancelled, "replica {}: the runner was destroyed before the request ran", id_));
  if (config_.run_save_programs && !failed_.load() && !session_->isStopped()) {
    try {
      session_->runSavePrograms(lane_);
    } catch (const std::exception &error) {
      log::logger().error("replica {}: Save programs failed: {}", id_, error.what());
    }
  }
}

}  // namespace mrt
