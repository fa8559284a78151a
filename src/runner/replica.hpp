// Replica: one replica of the model serving a ModelRunner's requests - its
// device, Session, QueueManager, device thread (Load, then Main over and
// over) and the requests it has in flight.
//
// In-model replication (a model compiled with replication factor R): the R
// replicas of one copy share its device and Session; each is replica
// `lane` of the executable, with its own queues and device thread running
// its programs alone (Session::runMainPrograms(lane)). What acts on the
// whole device stays whole: a device error or hang puts every replica of
// the device out of service (auto_reset does not reset a device whose other
// replicas serve on), stop() stops them all, and simulated errors cannot be
// inserted (the replicas run concurrently on one engine).
//
// Producer side (any thread, under producer_mutex_): submit() registers the
// request as pending and pushes pointers to its buffers into the queues.
// Device side (the replica's thread): stream callbacks copy the bytes; the
// last output written completes the request. A device error fails the
// requests whose data the failed run had started to move; with auto_reset
// the replica is then reloaded and the requests queued behind them are
// enqueued again, otherwise the replica stays failed and every pending
// request fails. shutdown() stops the thread and cancels what is still
// pending.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <hwsim/device_error.hpp>
#include <hwsim/engine.hpp>

#include "common/adaptive_spin.hpp"
#include "common/reused_thread.hpp"
#include "common/thread_cpus.hpp"
#include "device/device.hpp"
#include "queue/queue_manager.hpp"
#include "runner/completion.hpp"
#include "runner/model_runner_config.hpp"
#include "runner/recycling_allocator.hpp"
#include "runner/request_stats.hpp"
#include "runner/runner_layout.hpp"
#include "session/session.hpp"

namespace mrt {

// On cache lines of its own (alignas): the replicas of a runner serve on
// different CPUs, each changing its own state at every request.
class alignas(64) Replica {
 public:
  // The Session of copy `copy` of the model (not yet bound to a device),
  // shared by that copy's replicas. `executable`: the model's, read and
  // checked by the runner.
  static std::shared_ptr<Session> makeSession(unsigned copy, std::shared_ptr<const popef::Model> model,
                                              const hwsim::Executable &executable, const ModelRunnerConfig &config,
                                              const RunnerLayout &layout);
  // Replica `id` of the runner: in-model replica `lane` of `session`, whose
  // device is `device`. The runner binds the session to the device once
  // every replica of it is made, before start().
  Replica(unsigned id, std::shared_ptr<Session> session, unsigned lane, const ModelRunnerConfig &config,
          const RunnerLayout &layout, std::shared_ptr<Device> device);
  ~Replica();

  Replica(const Replica &) = delete;
  Replica &operator=(const Replica &) = delete;

  // Runs the Load programs on the calling thread: the device thread's first
  // step, or before start() (the runner's constructor does for one replica:
  // its creation then hands nothing to the device thread and back, a time
  // slice each way while the CPUs are busy with other processes). False if
  // Load failed: the replica is then out of service.
  bool loadOnThisThread();
  // Starts the device thread, which runs the Load programs first unless
  // loadOnThisThread() did. A replica loaded already leaves the start to
  // the first request left to the thread (wakeDevice) or to the watchdog
  // just ahead of the idle device's first timeout (watch): while only
  // synchronous callers serve it, not before its first timeout.
  void start();
  // Blocks until the Load programs have run (or failed to: the replica is
  // then out of service, as after any device error), so the model is loaded
  // when the runner's constructor returns, as the seeds say, and
  // deviceTime() read then already counts Load.
  void awaitInitialLoad();

  // The id of the device this replica runs on, for messages.
  std::int64_t deviceId() const { return device_->id(); }

  // Enqueues one request whose views were checked by the layout. `keep`
  // holds library-allocated outputs alive until the device is done with them.
  // With wake_device, a device thread asleep for want of work is woken; a
  // caller about to serveInline() passes false (it may serve itself).
  std::shared_ptr<Completion> submit(const RequestViews &views, RequestClock::time_point received,
                                     std::vector<std::shared_ptr<void>> keep, bool wake_device = true);

  // For a synchronous request: if no other thread is running the device, the
  // caller runs the Main programs itself until `completion` is ready, which
  // saves the two thread hand-offs (to the device thread and back) that
  // otherwise dominate a small request. If the device is busy, it makes sure
  // the device thread will serve the request and returns at once. (A thread
  // waiting without a bound for an asynchronous request does the same while
  // the device thread sleeps: Link::serveWaiter.)
  void serveInline(const Completion &completion);

  // Marks the replica as stopping (no new request, a stopped run is no
  // error), before shutdown() of a replica sharing its device stops the
  // engine under it.
  void beginShutdown() { stopping_.store(true); }

  // Stops the device thread: with run_save_programs it finishes the Main run
  // in progress (flushing dummy data) and runs Save, for at most hangTime()
  // (see watch()); otherwise it stops at once. Pending requests complete
  // with Cancelled. Idempotent.
  void shutdown();

  // How long programs may run without moving any data of the pending
  // requests before they are taken for hung: timeout_ns, but at least 1 s.
  static std::chrono::nanoseconds hangTime(const ModelRunnerConfig &config);

  // Called from a watchdog thread every watchPeriod() or so, the first time
  // after firstWatch(). Starts a device thread start() left for later when
  // the idle device's first timeout comes before the next watch. With
  // timeout_ns set, stops a run when requests are pending and for hangTime()
  // none of their data moved nor did the device wait for the caller (an
  // unbounded loop, stream copies on a path not taken): its requests fail
  // with DeadlineExceeded and the replica goes on as after a device error
  // (reset with auto_reset, else out of service). During shutdown() with
  // run_save_programs, stops the programs it waits for once they have had
  // hangTime().
  void watch(RequestClock::time_point now);
  // How often watch() is called: hangTime() / 4.
  static std::chrono::nanoseconds watchPeriod(const ModelRunnerConfig &config);
  // When the first watch() is due after creation: watchPeriod(), or the
  // first timeout if sooner (a device thread may wait for it to start).
  static std::chrono::nanoseconds firstWatch(const ModelRunnerConfig &config);

  void insertSimulatedError(hwsim::DeviceErrorCode code, const std::string &step_name);

  RequestStats &stats() noexcept { return stats_; }
  // The modelled cycles of this replica (its lane of the device, with
  // in-model replication) since its device's last load, and its clock. Any
  // thread (the engine's counters are atomic).
  hwsim::TimerTimePoint deviceTime() const {
    hwsim::TimerTimePoint time = session_->engine().getTimeStamp();
    time.deviceCycles = session_->engine().deviceCycles(lane_);
    return time;
  }

 private:
  struct Request;
  class Link;
  // Requests, their nodes and Completions are made and freed at every
  // request: from recycled blocks, not the heap.
  using PendingList = std::list<std::shared_ptr<Request>, RecyclingAllocator<std::shared_ptr<Request>>>;

  void enqueueRequest(const RequestViews &views, const std::shared_ptr<Request> &request);
  // Throws what the queues would refuse in views, before anything is pushed.
  void checkEntries(const RequestViews &views) const;
  // Pushes the request's buffers into the queues (producer_mutex_ held).
  void pushEntries(const RequestViews &views, Request *request);
  void deviceLoop();
  // The device, if no thread runs it and this thread runs no device's
  // programs (a callback of a run must not serve: its thread holds a device
  // already); else an empty lock.
  std::unique_lock<std::mutex> tryTakeDevice();
  // Holding the device: runs Main until `completion` is ready (or the
  // replica stops serving), then lets the device go, waking the device
  // thread for the requests queued behind. Touches nothing of the replica
  // after the lock is released (a waiter's replica may then be destroyed).
  // With defer_after, a serve that ran something then defers the device
  // thread (deferDeviceThreadToClients).
  template <typename Done>
  void serveHolding(std::unique_lock<std::mutex> device, Done done, bool defer_after);
  // Before a producer pushes a request: while one of the queues is full (the
  // push would wait for the device) and no thread runs the device, runs Main
  // on this thread until none is. Only for a Main that copies each stream at
  // most once per run (serves_at_full_queues_): a run reading a stream more
  // often could wait for a transfer only this thread would push.
  void serveWhileFull();
  // Any thread: one of the queues is full (a snapshot).
  bool anyQueueFull() const;
  // A client about to serve the device: the device thread leaves it the
  // requests for kDeferToServingClients (clients_serve_until_).
  void deferDeviceThreadToClients();
  // Holding device_mutex_: runs the Load programs or one Main run, handling
  // device errors; false once this replica stops serving (shutdown, or out
  // of service). A pipelined Main run starts a new run only if may_start.
  bool runProgram(bool load, bool may_start = true);
  // Holding device_mutex_: the next Main run has data to start on.
  bool hasWork() const;
  // Any thread: a request is enqueued that no run has started on.
  bool workVisible() const;
  // Any thread: a client serves the device (waiter_serving_) or did so
  // lately at a full queue (clients_serve_until_): the device thread leaves
  // the requests to it.
  bool deferToClients() const;
  // Nanoseconds from now (RequestClock) to a deadline in RequestClock ticks.
  static std::int64_t nanosUntil(std::int64_t deadline);
  // Any thread: work visible and not left to the clients.
  bool workForDeviceThread() const;
  // Device thread, not holding device_mutex_: polls while that pays, then sleeps
  // until woken or, with timeouts in use, for one period, after which it
  // runs the timeout logic the queues would run for a waiting device.
  void waitForWork();
  // Wakes the device thread if it sleeps in waitForWork, or starts it if
  // start() left that to the first wake-up; a thread that cannot be started
  // puts the replica out of service (ResourceExhausted).
  void wakeDevice();
  // Starts the device thread unless it runs or the replica stops;
  // std::system_error if it cannot be started.
  void startDeviceThread();
  // Starts a device thread start() left to start later, once, from any
  // thread; idle_since (if set): when the device began to wait for work,
  // from which its first timeout counts. A thread that cannot be started
  // puts the replica out of service.
  void startDeferredThread(RequestClock::time_point idle_since);
  // Arms the inserted errors for the next run; true if there were any.
  bool applyInjectedErrors();
  // Fails the requests of the failed run, reloads the session and enqueues
  // the other pending requests again. False if the replica must stop
  // (shutting down, or the reload failed).
  bool recover(const Error &reason);
  // Fails the pending requests whose data the failed run had started to move
  // and returns the others, in order (producer_mutex_ held).
  std::vector<std::shared_ptr<Request>> failRunRequests(const Error &reason);
  void failReplica(const Error &reason);
  // True (once) if the run that just ended Cancelled was stopped by watch().
  bool takeHangStop();
  std::string hangMessage() const;
  void failPending(const Error &reason);
  void finishOne(Request *request);
  void onTimeout(const std::string &anchor, popef::TensorType direction, std::int64_t bytes_done);
  void flushForTimeout(const std::string &anchor);
  // Fills the deferred flush lists with what flush_callback names, or with
  // every queue when it names none, throws, or names a queue this replica
  // does not have (padding the wrong queues would corrupt later results).
  void selectTimeoutFlush(const std::string &anchor);
  // The code and message of a request the queues refused (disconnected).
  Error refusalReason();
  // A device error as a runner's user reads it: the device's message and
  // recovery action without the Session's advice (reload(), which is the
  // replica's to call), then `advice` if not empty.
  Error deviceError(const Error &error, const std::string &advice = {}) const;
  void bindSideStreams(const RunnerLayout &layout);

  // Other replicas share this one's device (in-model replication).
  bool sharesDevice() const { return session_->replicationFactor() > 1; }

  const unsigned id_;
  const unsigned lane_;  // the executable's replica this one runs
  const ModelRunnerConfig &config_;
  std::shared_ptr<Device> device_;
  std::shared_ptr<Session> session_;
  QueueManager *queues_ = nullptr;
  std::vector<InputQueue *> input_queues_;    // execute-input order
  std::vector<OutputQueue *> output_queues_;  // execute-output order
  std::chrono::nanoseconds timeout_period_{0};

  // Producers enqueue whole requests under it; the device thread takes it to
  // flush on timeouts and to reset the queues after an error.
  std::mutex producer_mutex_;

  // Guards pending_, failure_, recovering_ and watch()'s state below.
  std::mutex state_mutex_;
  PendingList pending_;
  std::optional<Error> failure_;     // set: the replica is out of service
  std::optional<Error> recovering_;  // set while a device error is being handled
  std::atomic<bool> failed_{false};

  // Bumped by the device side when data of a request moved or the device
  // waited for the caller; watch() looks for runs that do neither.
  std::atomic<std::uint64_t> progress_{0};
  std::uint64_t watched_progress_ = 0;
  RequestClock::time_point watched_since_{};
  bool hang_stopped_ = false;                   // watch() stopped the engine
  RequestClock::time_point shutdown_started_{};  // set by shutdown() with run_save_programs

  // Held by whichever thread runs the programs: the device thread, or a
  // synchronous caller in serveInline. Guards the engine, the queues'
  // consumer side and the device-side state below.
  std::mutex device_mutex_;
  // The device thread sleeps on doorbell_ (with device_sleeping_ set) when
  // there is no work; producers ring it only when it sleeps, and the first
  // one clears device_sleeping_.
  std::atomic<std::uint32_t> doorbell_{0};
  static constexpr std::uint32_t kSleeping = 1;              // until woken
  static constexpr std::uint32_t kSleepingUntilDeadline = 2;  // looks again by itself soon
  static constexpr std::uint32_t kNotStarted = 3;            // start() left the start to the first wake-up
  std::atomic<std::uint32_t> device_sleeping_{0};
  // How long the device thread polls for work before it sleeps.
  detail::AdaptiveSpin work_spin_;
  // What the requests' Completions hold of this replica: whether the device
  // thread runs (false while it sleeps or before it starts: waiters then
  // serve the device themselves, or park without polling), and the way in
  // for a waiter to serve, which shutdown() closes.
  const std::shared_ptr<Link> link_;
  // When the replica was made: its device idles from about then, until a
  // first request (watch() starts a deferred device thread from it).
  const RequestClock::time_point created_;
  // The CPUs of the thread creating the runner: its device thread's, from
  // whichever thread it starts (common/thread_cpus.hpp).
  const detail::ThreadCpus creator_cpus_;
  std::atomic<bool> serving_{true};  // false once runProgram gave up
  // A thread other than the device thread holds the device and runs Main
  // (serveHolding): the device thread waits for it to let go.
  std::atomic<bool> waiter_serving_{false};
  // A client that found a queue full and served it will most likely find
  // it full again at its next request, and one that served the request it
  // waited for will most likely wait for its next one: until this time
  // (RequestClock ticks) the device thread leaves the device to it and
  // sleeps with this deadline, which producers do not ring. Taking it in that gap would
  // make the client wait for the device thread, which on CPUs shared by
  // more threads than there are may not run for a whole time slice.
  std::atomic<std::int64_t> clients_serve_until_{0};
  static constexpr std::chrono::microseconds kDeferToServingClients{100};
  bool serves_at_full_queues_ = false;  // set once, at construction (serveWhileFull)
  bool loaded_ = false;              // a Load or Main run has succeeded (device_mutex_)
  std::mutex initial_load_mutex_;
  std::condition_variable initial_load_cv_;
  bool initial_load_done_ = false;  // the first Load has ended, on either thread (initial_load_mutex_)
  bool pipelined_ = false;           // Main streams through pipeline stages (Session::mainIsPipelined)

  std::atomic<bool> stopping_{false};
  bool shut_down_ = false;
  std::mutex thread_mutex_;       // guards the start of thread_ against shutdown()
  detail::ReusedThread thread_;  // the device thread (common/reused_thread.hpp)
  RequestClock::time_point idle_since_{};  // set before a deferred start, read by the thread (waitForWork)

  // Simulated errors to insert before the next Main run, one per location.
  std::mutex inject_mutex_;
  std::map<hwsim::ErrorLocation, hwsim::DeviceErrorCode> to_inject_;
  std::atomic<bool> has_injection_{false};

  // Device-thread state of the timeout callback.
  std::uint64_t main_runs_ = 0;
  struct WaitKey {
    std::uint64_t runs;
    std::string anchor;
    std::int64_t bytes;
    bool operator==(const WaitKey &) const = default;
  };
  WaitKey wait_key_{~std::uint64_t{0}, {}, -1};
  // The queues of a timeout flush not done yet because a ring was full
  // (flushed together, all or none).
  std::vector<InputQueue *> deferred_input_flushes_;
  std::vector<OutputQueue *> deferred_output_flushes_;
  RequestClock::time_point wait_start_{};

  RequestStats stats_;
};

}  // namespace mrt
