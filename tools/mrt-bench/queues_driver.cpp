// The queues benchmark (seeds' Tools chapter, 7.2): a Session with a
// QueueManager per replica; a device thread runs Main over and over while
// this thread enqueues pointers to its buffers into the input and output
// queues.
//
// The producer keeps up to numSlots() runs in flight, one IoSlots slot each:
// twice what the queues' rings hold (multiplier x batch entries, one per run),
// plus two. It reuses a slot only after that slot's run has completed
// (every output written), which the device thread publishes in
// completed_runs; when it has to wait, it waits for half the slots at once,
// with std::atomic wait/notify (which spins briefly, then sleeps on a futex).
// Twice: so that the producer, once the device has drained the rings, has
// the slots to fill them up again while it checks the outputs of the runs
// just done. With one ring's worth (plus two), it had to sleep until runs it
// had only just queued completed, and on a shared CPU each hand-off to the
// device carried about three quarters of a ring instead of a whole one.
// A replicated model has a QueueManager per replica; each run feeds every
// replica (Main runs them together), so a run completes when every
// replica's outputs are written.
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <thread>

#include "driver.hpp"

namespace mrt::benchtool {

namespace {

constexpr std::uint64_t kFailed = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kNobody = std::numeric_limits<std::uint64_t>::max();

// Slots for the runs in flight: twice the rings' depth in runs, plus two.
std::size_t slotsFor(const Model &model, std::int64_t ring_size_multiplier) {
  std::int64_t batch = 1;
  for (const AnchorInfo &anchor : queueAnchors(model)) batch = std::max(batch, batchOf(anchor));
  return static_cast<std::size_t>(2 * ring_size_multiplier * batch + 2);
}

// The device thread and the producer (the thread calling run()) run under
// SCHED_BATCH, as include/mrt_c.h advises for the threads of a queue
// manager sharing CPUs: a SCHED_BATCH thread woken by the other does not
// preempt it, so the producer goes on queueing runs until the rings are
// full, and the device thread drains them until they are empty, and one
// context switch carries several runs (under SCHED_NORMAL each enqueue, and
// each entry freed in a full ring, hands the CPU over, and back). A refusal
// only costs speed: say so once.
void useBatchScheduling() {
  const sched_param param{};
  static std::atomic<bool> reported{false};
  if (sched_setscheduler(0, SCHED_BATCH, &param) != 0 && !reported.exchange(true)) {
    std::fprintf(stderr, "mrt-bench: the queues benchmark's threads keep their scheduling policy (SCHED_BATCH "
                 "refused: %s)\n", std::strerror(errno));
  }
}

}  // namespace

struct QueuesDriver::State {
  std::vector<QueueManager> managers;  // per replica
  // [replica][anchor]
  std::vector<std::vector<InputQueue>> inputs;
  std::vector<std::vector<mrt_output_queue *>> outputs;
  // Per slot: what the output callback needs (the C callback's user_data).
  struct SlotRef {
    QueuesDriver *driver;
    std::size_t slot;
  };
  std::vector<SlotRef> slot_refs;
  std::vector<Clock::time_point> enqueued_at, completed_at;  // per slot

  std::thread device;
  std::atomic<bool> stopping{false};
  // Runs whose outputs are all written; kFailed after a device failure.
  std::atomic<std::uint64_t> completed_runs{0};
  // The run the producer sleeps until it completes (kNobody: it does not
  // sleep), so that the device thread wakes it once, for that run, rather
  // than at every run. wake_word is the word it sleeps on (32 bits: a futex
  // of its own, where std::atomic<uint64_t> would share a waiter pool).
  std::atomic<std::uint64_t> awaited_run{kNobody};
  std::atomic<std::uint32_t> wake_word{0};
  // Written by the replicas' threads of the Main run (one run at a time).
  std::atomic<std::uint64_t> outputs_written{0};
  std::string failure;                // set before completed_runs = kFailed
  std::uint64_t finished = 0;         // runs checked by the producer

  // Device thread: `runs` runs are complete (kFailed: the thread failed);
  // wakes the producer if it sleeps for one of them.
  void publishCompleted(std::uint64_t runs);
};

void QueuesDriver::State::publishCompleted(std::uint64_t runs) {
  // seq_cst, a release too: the run's outputs are written before the
  // producer checks them.
  completed_runs.store(runs, std::memory_order_seq_cst);
  const std::uint64_t awaited = awaited_run.load(std::memory_order_seq_cst);
  if (awaited != kNobody && runs > awaited) {
    awaited_run.store(kNobody, std::memory_order_relaxed);  // one wake per sleep
    wake_word.fetch_add(1, std::memory_order_seq_cst);
    wake_word.notify_one();
  }
}

QueuesDriver::QueuesDriver(const Model &model, const Device &device, const DriverOptions &options)
    : Driver(model, options, slotsFor(model, options.ring_size_multiplier)), state_(std::make_unique<State>()) {
  State &s = *state_;
  if (main_outputs_.empty())
    throw Error(MRT_INVALID_ARGUMENT,
                "the queues benchmark needs a model with an output anchor; '" + model.info().executable + "' has none");
  if (options.ring_size_multiplier < 1)
    throw Error(MRT_INVALID_ARGUMENT, "the ring size multiplier must be at least 1 (got " +
                                          std::to_string(options.ring_size_multiplier) + ")");
  QueueManagerConfig config;
  config.ring_size_multiplier = options.ring_size_multiplier;
  s.inputs.resize(replicas_);
  s.outputs.resize(replicas_);
  for (unsigned r = 0; r < replicas_; ++r) {
    // Every user anchor gets a queue; only the Main programs' are fed.
    const QueueManager &queues = s.managers.emplace_back(session_.createQueueManagerForReplica(r, config));
    for (const AnchorInfo &anchor : main_inputs_) s.inputs[r].push_back(queues.input(anchor.name));
    for (const AnchorInfo &anchor : main_outputs_) s.outputs[r].push_back(queues.output(anchor.name).get());
  }
  const std::size_t slots = io_.numSlots() / replicas_;
  s.enqueued_at.resize(slots);
  s.completed_at.resize(slots);
  for (std::size_t slot = 0; slot < slots; ++slot) s.slot_refs.push_back({this, slot});
  bindAndLoad(device);

  s.device = std::thread([this] {
    State &st = *state_;
    useBatchScheduling();
    try {
      while (!st.stopping.load(std::memory_order_relaxed)) session_.runMainPrograms();
    } catch (const std::exception &e) {
      if (!st.stopping.load()) {
        st.failure = e.what();
        st.publishCompleted(kFailed);
      }
    }
  });
}

QueuesDriver::~QueuesDriver() { stop(); }

void QueuesDriver::stop() {
  State &s = *state_;
  if (!s.device.joinable()) return;
  s.stopping.store(true);
  session_.stop();  // disconnects the queues: a blocked device thread returns
  s.device.join();
}

void QueuesDriver::waitForRun(std::uint64_t run) {
  auto &completed = state_->completed_runs;
  std::uint64_t seen = completed.load(std::memory_order_acquire);
  if (seen <= run) {
    // Sleep until the device thread has completed `run` (std::atomic's wait
    // spins a little first, which catches a run that is nearly done).
    auto &word = state_->wake_word;
    for (;;) {
      const std::uint32_t epoch = word.load(std::memory_order_seq_cst);
      // seq_cst store, then seq_cst load: with publishCompleted's store and
      // load, either it sees our run and wakes us, or we see its count.
      state_->awaited_run.store(run, std::memory_order_seq_cst);
      if ((seen = completed.load(std::memory_order_seq_cst)) > run) break;
      word.wait(epoch, std::memory_order_seq_cst);
    }
    state_->awaited_run.store(kNobody, std::memory_order_relaxed);
  }
  if (seen == kFailed) throw Error(MRT_DEVICE_ERROR, "the device thread failed: " + state_->failure);
}

void QueuesDriver::finishRun(std::uint64_t run) {
  const std::size_t slot = run % state_->completed_at.size();
  if (options_.record_latencies) {
    latencies_us_.push_back(
        std::chrono::duration<double, std::micro>(state_->completed_at[slot] - state_->enqueued_at[slot]).count());
  }
  for (unsigned r = 0; r < replicas_; ++r) io_.checkOutputs(slotOf(slot, r), setOf(run, r));
  state_->finished = run + 1;
}

void QueuesDriver::outputWritten(void *slot_ref) noexcept {
  // Device thread: the last output of a run completes it.
  const auto &ref = *static_cast<const State::SlotRef *>(slot_ref);
  State &st = *ref.driver->state_;
  const std::uint64_t outputs_per_run = st.outputs.front().size() * ref.driver->replicas_;
  const std::uint64_t written = st.outputs_written.fetch_add(1) + 1;
  if (written % outputs_per_run != 0) return;
  if (ref.driver->options_.record_latencies) st.completed_at[ref.slot] = Clock::now();
  st.publishCompleted(written / outputs_per_run);
}

std::uint64_t QueuesDriver::run(std::uint64_t max_runs, Clock::time_point deadline) {
  State &s = *state_;
  useBatchScheduling();  // the producer: this thread
  const bool timed = deadline != Clock::time_point::max();
  const std::size_t slots = s.completed_at.size();
  std::uint64_t done = 0;
  for (; done < max_runs; ++done) {
    if (timed && Clock::now() >= deadline) break;
    const std::uint64_t run = runs_;
    const std::size_t slot = run % slots;
    if (s.finished + slots <= run) {
      // The slot's previous run must be out of the device. Wait for half
      // the runs in flight, not just that one, so that the producer sleeps
      // once per slots/2 runs instead of once per run (a wake-up per run
      // makes the pipeline no faster than the scheduler).
      const std::uint64_t last = std::min<std::uint64_t>(s.finished + std::max<std::size_t>(1, slots / 2), run) - 1;
      waitForRun(last);
      while (s.finished <= last) finishRun(s.finished);
    }
    for (unsigned r = 0; r < replicas_; ++r) io_.prepareInputs(slotOf(slot, r), setOf(run, r));
    if (options_.record_latencies) s.enqueued_at[slot] = Clock::now();
    for (unsigned r = 0; r < replicas_; ++r) {
      const std::size_t replica_slot = slotOf(slot, r);
      for (std::size_t i = 0; i < s.inputs[r].size(); ++i)
        s.inputs[r][i].enqueue(io_.input(replica_slot, i), static_cast<std::int64_t>(io_.inputSize(i)));
      for (std::size_t i = 0; i < s.outputs[r].size(); ++i) {
        // The C call, with a plain function and the slot as user data: no
        // allocation per enqueue.
        check(mrt_output_queue_enqueue(s.outputs[r][i], io_.output(replica_slot, i),
                                       static_cast<std::int64_t>(io_.outputSize(i)), &QueuesDriver::outputWritten,
                                       &s.slot_refs[slot], nullptr));
      }
    }
    ++runs_;
  }
  for (std::uint64_t run = s.finished; run < runs_; ++run) {
    waitForRun(run);
    finishRun(run);
  }
  return done;
}

}  // namespace mrt::benchtool
