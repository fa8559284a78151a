// The callbacks benchmark (seeds' Tools chapter, 7.1): session callbacks copy
// straight between the user's buffers and the device; this thread runs Main.
#include <cstring>

#include "driver.hpp"

namespace mrt::benchtool {

CallbacksDriver::CallbacksDriver(const std::shared_ptr<const popef::Model> &model, std::shared_ptr<Device> device,
                                 const DriverOptions &options)
    : Driver(model, options, 1) {
  // Replica r's anchors: slot r.
  for (unsigned r = 0; r < replicas_; ++r) {
    const auto &inputs = main_inputs_;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const std::byte *from = io_.input(r, i);
      const std::size_t size = io_.inputSize(i);
      session_.setCallbackForAnchor(inputs[i]->handle(), r, [from, size](void *device_buffer) {
        std::memcpy(device_buffer, from, size);
      });
    }
    const auto &outputs = main_outputs_;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      std::byte *to = io_.output(r, i);
      const std::size_t size = io_.outputSize(i);
      session_.setCallbackForAnchor(outputs[i]->handle(), r, [to, size](void *device_buffer) {
        std::memcpy(to, device_buffer, size);
      });
    }
  }
  bindAndLoad(std::move(device));
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
