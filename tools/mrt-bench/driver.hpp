// The two benchmarks of the seeds' Tools chapter as reusable drivers (used by
// mrt-bench and by bench/queue_manager, so the benchmark measures exactly the
// code the tool runs), on the public API only (mrt.hpp over libmrt.so). Each
// driver is one Session bound to one device, feeding
// the model's user input anchors from IoSlots and draining its outputs into
// them (see io_slots.hpp for what --real-data changes).
//
//   CallbacksDriver  the callbacks benchmark: every user anchor is served by a
//                    session callback that memcpys straight between the
//                    device and the user's buffer; the calling thread runs
//                    Main once per run (session.runMainPrograms()).
//   QueuesDriver     the queues benchmark: a QueueManager per replica made
//                    by Session::createQueueManagerForReplica; a device thread runs Main
//                    over and over while the calling thread enqueues input
//                    and output buffers, several runs ahead. Both threads
//                    run under SCHED_BATCH (run() sets it on its caller), as
//                    include/mrt_c.h advises when they share CPUs.
//
// A run is one execution of the Main programs: one model batch per anchor,
// on every replica of a model compiled with replication factor R (each
// replica fed from its own slot, with its own input set under --real-data,
// through its own callbacks or QueueManager).
// The drivers feed and drain only the anchors of the Main programs (an
// output only a Save program writes, like the stateful model's acc_save, is
// never written by a run: queueing it would wait forever; its queue stays
// empty, and the drivers never run Save).
// Threads: calls on one driver must not overlap (any thread may make them).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io_slots.hpp"
#include "mrt.hpp"

namespace mrt::benchtool {

using Clock = std::chrono::steady_clock;

struct DriverOptions {
  bool real_data = false;
  std::uint32_t seed = 1;
  bool record_latencies = true;  // one steady_clock pair per run
  // Queues only: ring entries per queue = multiplier x model batch (the
  // QueueManager's ring_size_multiplier, default 64; ModelRunner's is 2). The
  // producer keeps twice that many runs, plus two, in flight.
  std::int64_t ring_size_multiplier = QueueManagerConfig().ring_size_multiplier;
};

class Driver {
 public:
  virtual ~Driver() = default;
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  // Runs Main max_runs times, or fewer if `deadline` passes first (checked
  // before each run), and returns when every run started has completed.
  // Returns the runs done. Throws mrt::Error if the device fails.
  virtual std::uint64_t run(std::uint64_t max_runs, Clock::time_point deadline = Clock::time_point::max()) = 0;
  // Ends device activity (the queues driver's device thread); after it,
  // deviceSeconds() is final and run() must not be called.
  virtual void stop() {}

  std::uint64_t runs() const noexcept { return runs_; }
  // Latency of each run in microseconds (callbacks: runMainPrograms();
  // queues: from enqueueing the inputs to the last output written).
  const std::vector<double> &latenciesUs() const noexcept { return latencies_us_; }
  // Simulated device time of the runs (replica 0's cycle counter since the
  // Load programs, over its clock rate). Call after stop().
  double deviceSeconds();
  const IoSlots &io() const noexcept { return io_; }
  // Replicas each run feeds (the model's replication factor).
  unsigned replicas() const noexcept { return replicas_; }
  // Why --real-data does not compare outputs across runs (the model keeps
  // state: Main writes tensors the Save programs read back); empty when it does.
  const std::string &outputsNotChecked() const noexcept { return outputs_not_checked_; }

 protected:
  // `slots`: per replica.
  Driver(const Model &model, const DriverOptions &options, std::size_t slots);
  // Binds the session, runs the Load programs and starts the cycle count;
  // the derived constructor calls it once its anchors are connected.
  void bindAndLoad(const Device &device);
  // The IoSlots slot of replica `replica` in run slot `slot`, and the run
  // number IoSlots picks its input set by: distinct for the replicas of a
  // run, and shifting from run to run so that each set is seen on every
  // replica (outputs delivered to the wrong replica then differ from the
  // set's first outputs).
  std::size_t slotOf(std::size_t slot, unsigned replica) const { return slot * replicas_ + replica; }
  std::uint64_t setOf(std::uint64_t run, unsigned replica) const {
    return replicas_ == 1 ? run : run * (replicas_ + 1) + replica;
  }

  DriverOptions options_;
  Session session_;
  unsigned replicas_;
  // The user input and output anchors of the Main programs, IoSlots' order.
  std::vector<AnchorInfo> main_inputs_, main_outputs_;
  IoSlots io_;
  std::uint64_t runs_ = 0;
  std::vector<double> latencies_us_;

 private:
  DeviceTime loaded_;
  std::string outputs_not_checked_;
};

class CallbacksDriver final : public Driver {
 public:
  CallbacksDriver(const Model &model, const Device &device, const DriverOptions &options);
  std::uint64_t run(std::uint64_t max_runs, Clock::time_point deadline = Clock::time_point::max()) override;
};

class QueuesDriver final : public Driver {
 public:
  QueuesDriver(const Model &model, const Device &device, const DriverOptions &options);
  ~QueuesDriver() override;
  std::uint64_t run(std::uint64_t max_runs, Clock::time_point deadline = Clock::time_point::max()) override;
  void stop() override;

  struct State;  // what the device thread shares with the producer

 private:
  void waitForRun(std::uint64_t run);
  void finishRun(std::uint64_t run);
  // The write-complete callback of every output enqueued (a C callback:
  // user_data is the run slot's State::SlotRef).
  static void outputWritten(void *slot_ref) noexcept;

  std::unique_ptr<State> state_;
};

// The anchors a queue manager serves (user inputs without PopEF data, and
// outputs), and the batch of one (its first dimension; 1 for a scalar).
std::vector<AnchorInfo> queueAnchors(const Model &model);
std::int64_t batchOf(const AnchorInfo &anchor);

// "callbacks" or "queues"; mrt::Error(MRT_INVALID_ARGUMENT) naming the modes otherwise.
std::unique_ptr<Driver> makeDriver(const std::string &mode, const Model &model, const Device &device,
                                   const DriverOptions &options);

}  // namespace mrt::benchtool
