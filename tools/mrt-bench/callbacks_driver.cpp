// The callbacks benchmark (seeds' Tools chapter, 7.1): session callbacks copy
// straight between the user's buffers and the device; this thread runs Main.
#include <cstring>

#include "driver.hpp"

namespace mrt::benchtool {

CallbacksDriver::CallbacksDriver(const Model &model, const Device &device, const DriverOptions &options)
    : Driver(model, options, 1) {
  // Replica r's anchors: slot r.
  for (unsigned r = 0; r < replicas_; ++r) {
    for (std::size_t i = 0; i < main_inputs_.size(); ++i) {
      const std::byte *from = io_.input(r, i);
      const std::size_t size = io_.inputSize(i);
      session_.setCallbackForAnchor(main_inputs_[i].handle, r,
                                    [from, size](void *device_buffer, uint64_t) { std::memcpy(device_buffer, from, size); });
    }
    for (std::size_t i = 0; i < main_outputs_.size(); ++i) {
      std::byte *to = io_.output(r, i);
      const std::size_t size = io_.outputSize(i);
      session_.setCallbackForAnchor(main_outputs_[i].handle, r,
                                    [to, size](void *device_buffer, uint64_t) { std::memcpy(to, device_buffer, size); });
    }
  }
  bindAndLoad(device);
}

std::uint64_t CallbacksDriver::run(std::uint64_t max_runs, Clock::time_point deadline) {
  const bool timed = deadline != Clock::time_point::max();
  std::uint64_t done = 0;
  for (; done < max_runs; ++done) {
    if (timed && Clock::now() >= deadline) break;
    for (unsigned r = 0; r < replicas_; ++r) io_.prepareInputs(slotOf(0, r), setOf(runs_, r));
    const auto start = options_.record_latencies ? Clock::now() : Clock::time_point{};
    session_.runMainPrograms();
    if (options_.record_latencies)
      latencies_us_.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    for (unsigned r = 0; r < replicas_; ++r) io_.checkOutputs(slotOf(0, r), setOf(runs_, r));
    ++runs_;
  }
  return done;
}

}  // namespace mrt::benchtool
