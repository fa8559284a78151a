#include "driver.hpp"

#include <algorithm>

#include "common/error.hpp"

namespace mrt::benchtool {

namespace {

// The anchors a Main program streams.
std::vector<const popef::Anchor *> ofMain(const popef::Model &model, std::vector<const popef::Anchor *> anchors) {
  const auto &main = model.metadata.programFlow().main();
  std::erase_if(anchors, [&](const popef::Anchor *anchor) {
    return std::none_of(anchor->programs().begin(), anchor->programs().end(), [&](auto program) {
      return std::find(main.begin(), main.end(), program) != main.end();
    });
  });
  return anchors;
}

}  // namespace

Driver::Driver(const std::shared_ptr<const popef::Model> &model, const DriverOptions &options, std::size_t slots)
    : options_(options),
      session_(model),
      replicas_(session_.replicationFactor()),
      main_inputs_(ofMain(*model, session_.getUserInputAnchors())),
      main_outputs_(ofMain(*model, session_.getUserOutputAnchors())),
      io_(main_inputs_, main_outputs_, slots * replicas_, options.real_data, model->metadata.programFlow().save().empty(),
          options.seed) {
  if (options.real_data && !model->metadata.programFlow().save().empty()) {
    outputs_not_checked_ =
        "the model keeps state across runs (it has Save programs), so the same inputs need not give the same "
        "outputs: --real-data fed fresh inputs but compared no outputs";
  }
}

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
