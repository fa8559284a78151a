#include "driver.hpp"

#include <algorithm>

namespace mrt::benchtool {

namespace {

// The anchors a Main program streams.
std::vector<AnchorInfo> ofMain(const Model &model, std::vector<AnchorInfo> anchors) {
  const std::vector<std::uint64_t> main = model.programFlow(ProgramPhase::Main);
  std::erase_if(anchors, [&](const AnchorInfo &anchor) {
    return std::none_of(anchor.programs.begin(), anchor.programs.end(), [&](std::uint64_t program) {
      return std::find(main.begin(), main.end(), program) != main.end();
    });
  });
  return anchors;
}

bool hasSavePrograms(const Model &model) { return !model.programFlow(ProgramPhase::Save).empty(); }

}  // namespace

Driver::Driver(const Model &model, const DriverOptions &options, std::size_t slots)
    : options_(options),
      session_(model),
      replicas_(static_cast<unsigned>(model.info().replication_factor)),
      main_inputs_(ofMain(model, session_.getUserInputAnchors())),
      main_outputs_(ofMain(model, session_.getUserOutputAnchors())),
      io_(main_inputs_, main_outputs_, slots * replicas_, options.real_data, !hasSavePrograms(model), options.seed) {
  if (options.real_data && hasSavePrograms(model)) {
    outputs_not_checked_ =
        "the model keeps state across runs (it has Save programs), so the same inputs need not give the same "
        "outputs: --real-data fed fresh inputs but compared no outputs";
  }
}

void Driver::bindAndLoad(const Device &device) {
  session_.bindToDevice(device);
  session_.runLoadPrograms();
  loaded_ = session_.deviceTime();
}

double Driver::deviceSeconds() { return session_.deviceTime().secondsSince(loaded_); }

std::vector<AnchorInfo> queueAnchors(const Model &model) {
  std::vector<AnchorInfo> anchors = model.anchors();
  std::erase_if(anchors, [](const AnchorInfo &anchor) {
    const bool user_input = anchor.tensor_type == TensorType::INPUT && anchor.data_source == DataSource::NONE;
    return !user_input && anchor.tensor_type != TensorType::OUTPUT;
  });
  return anchors;
}

std::int64_t batchOf(const AnchorInfo &anchor) {
  return anchor.shape.empty() || anchor.shape.front() <= 0 ? 1 : anchor.shape.front();
}

std::unique_ptr<Driver> makeDriver(const std::string &mode, const Model &model, const Device &device,
                                   const DriverOptions &options) {
  if (mode == "callbacks") return std::make_unique<CallbacksDriver>(model, device, options);
  if (mode == "queues") return std::make_unique<QueuesDriver>(model, device, options);
  throw Error(MRT_INVALID_ARGUMENT, "unknown benchmark '" + mode + "': expected 'callbacks' or 'queues'");
}

}  // namespace mrt::benchtool
