#include "driver.hpp"

#include "common/error.hpp"

namespace mrt::benchtool {

Driver::Driver(const std::shared_ptr<const popef::Model> &model, const DriverOptions &options, std::size_t slots)
    : options_(options),
      session_(model),
      io_(session_.getUserInputAnchors(), session_.getUserOutputAnchors(), slots, options.real_data, options.seed) {}

void Driver::bindAndLoad(std::shared_ptr<Device> device) {
  session_.bindToDevice(std::move(device));
  session_.runLoadPrograms();
  start_cycles_ = session_.engine().deviceCycles();
}

double Driver::deviceSeconds() {
  const auto stamp = session_.engine().getTimeStamp();
  return static_cast<double>(stamp.deviceCycles - start_cycles_) / stamp.clockHz;
}

std::unique_ptr<Driver> makeDriver(const std::string &mode, const std::shared_ptr<const popef::Model> &model,
                                   std::shared_ptr<Device> device, const DriverOptions &options) {
  if (mode == "callbacks") return std::make_unique<CallbacksDriver>(model, std::move(device), options);
  if (mode == "queues") return std::make_unique<QueuesDriver>(model, std::move(device), options);
  throw Error(ErrorCode::InvalidArgument, "unknown benchmark '{}': expected 'callbacks' or 'queues'", mode);
}

}  // namespace mrt::benchtool
