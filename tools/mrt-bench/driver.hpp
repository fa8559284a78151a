// The two benchmarks of the seeds' Tools chapter as reusable drivers (used by
// mrt-bench and by bench/queue_manager, so the benchmark measures exactly the
// code the tool runs). Each driver is one Session bound to one device, feeding
// the model's user input anchors from IoSlots and draining its outputs into
// them (see io_slots.hpp for what --real-data changes).
//
//   CallbacksDriver  the callbacks benchmark: every user anchor is served by a
//                    session callback that memcpys straight between the
//                    device and the user's buffer; the calling thread runs
//                    Main once per run (session.runMainPrograms()).
//   QueuesDriver     the queues benchmark: a QueueManager made by
//                    Session::createQueueManager; a device thread runs Main
//                    over and over while the calling thread enqueues input
//                    and output buffers, several runs ahead.
//
// A run is one execution of the Main programs: one model batch per anchor,
// on every replica of a model compiled with replication factor R (each
// replica fed from its own slot, with its own input set under --real-data,
// through its own callbacks or QueueManager).
// The drivers feed and drain only the anchors of the Main programs (an
// output only a Save program writes, like the stateful model's acc_save, is
// never written by a run: queueing it would wait forever).
// Threads: calls on one driver must not overlap (any thread may make them).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "device/device.hpp"
#include "io_slots.hpp"
#include "popef/model.hpp"
#include "queue/ring_size_multiplier.hpp"
#include "session/session.hpp"

namespace mrt::benchtool {

using Clock = std::chrono::steady_clock;

struct DriverOptions {
  bool real_data = false;
  std::uint32_t seed = 1;
  bool record_latencies = true;  // one steady_clock pair per run
  // Queues only: ring entries per queue = multiplier x model batch (the
  // QueueManager's ring_size_multiplier; ModelRunner's default is 2). The
  // producer keeps that many runs plus two in flight.
  std::int64_t ring_size_multiplier = kDefaultRingSizeMultiplier;
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
  // Simulated device time of the runs (the engine's cycle counter since the
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
  Driver(const std::shared_ptr<const popef::Model> &model, const DriverOptions &options, std::size_t slots);
  // Binds the session, runs the Load programs and starts the cycle count;
  // the derived constructor calls it once its anchors are connected.
  void bindAndLoad(std::shared_ptr<Device> device);
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
  std::vector<const popef::Anchor *> main_inputs_, main_outputs_;
  IoSlots io_;
  std::uint64_t runs_ = 0;
  std::vector<double> latencies_us_;

 private:
  std::uint64_t start_cycles_ = 0;
  std::string outputs_not_checked_;
};

class CallbacksDriver final : public Driver {
 public:
  CallbacksDriver(const std::shared_ptr<const popef::Model> &model, std::shared_ptr<Device> device,
                  const DriverOptions &options);
  std::uint64_t run(std::uint64_t max_runs, Clock::time_point deadline = Clock::time_point::max()) override;
};

class QueuesDriver final : public Driver {
 public:
  QueuesDriver(const std::shared_ptr<const popef::Model> &model, std::shared_ptr<Device> device,
               const DriverOptions &options);
  ~QueuesDriver() override;
  std::uint64_t run(std::uint64_t max_runs, Clock::time_point deadline = Clock::time_point::max()) override;
  void stop() override;

  struct State;  // what the device thread shares with the producer

 private:
  void waitForRun(std::uint64_t run);
  void finishRun(std::uint64_t run);

  std::unique_ptr<State> state_;
};

// "callbacks" or "queues"; InvalidArgument naming the modes otherwise.
std::unique_ptr<Driver> makeDriver(const std::string &mode, const std::shared_ptr<const popef::Model> &model,
                                   std::shared_ptr<Device> device, const DriverOptions &options);

}  // namespace mrt::benchtool
