#include "runner/runner_layout.hpp"

#include <algorithm>
#include <cstring>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "queue/sample_layout.hpp"

namespace mrt {
namespace {

bool inAny(const popef::Anchor &anchor, const std::vector<popef::ProgramFlow::ProgramIndexType> &programs) {
  return std::any_of(anchor.programs().begin(), anchor.programs().end(), [&](auto index) {
    return std::find(programs.begin(), programs.end(), index) != programs.end();
  });
}

bool hasPopefData(const popef::Anchor &anchor) { return anchor.dataSource() != popef::DataSource::None; }

bool byName(const QueuedTensor &a, const QueuedTensor &b) { return a.anchor->name() < b.anchor->name(); }

const char *directionOf(const popef::Anchor &anchor) {
  return anchor.type() == popef::TensorType::INPUT ? "input" : "output";
}

// An execute tensor, its samples counted along the queues' dimension.
QueuedTensor queued(const popef::Anchor &anchor, unsigned batching_dim) {
  const SampleLayout samples(anchor.tensorInfo(), batching_dim, [&] {
    return fmt::format("batching_dim {}: {} '{}'", batching_dim, directionOf(anchor), anchor.name());
  });
  return {&anchor, anchor.tensorInfo().sizeInBytes(), samples.sampleBytes(), samples.batchSize()};
}

std::string namesOf(const std::vector<QueuedTensor> &tensors) {
  std::vector<std::string> names;
  for (const QueuedTensor &t : tensors) names.push_back(t.anchor->name());
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

// The names a caller gave, sorted: a misspelt one shows next to the needed.
template <typename Map>
std::string givenNames(const Map &given) {
  std::vector<std::string> names;
  for (const auto &[name, view] : given) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names.empty() ? std::string("none given") : fmt::format("given: {}", fmt::join(names, ", "));
}

// The first name the caller gave that is none of `tensors`, or null.
template <typename Map>
const std::string *unknownName(const Map &given, const std::vector<QueuedTensor> &tensors) {
  for (const auto &[name, view] : given) {
    if (std::none_of(tensors.begin(), tensors.end(), [&key = name](const QueuedTensor &t) { return t.anchor->name() == key; })) {
      return &name;
    }
  }
  return nullptr;
}

// NotFound for a name the caller gave that is none of `tensors` (`missing`:
// the needed tensor it presumably stands for).
[[noreturn]] void throwUnknown(const char *direction, const std::string &name,
                               const std::vector<QueuedTensor> &tensors, const QueuedTensor *missing = nullptr) {
  throw Error(ErrorCode::NotFound, "unknown {} '{}': execute {}s are {}{}", direction, name, direction, namesOf(tensors),
              missing ? fmt::format(" (missing: {})", missing->anchor->name()) : std::string());
}

// A needed tensor the caller did not give: NotFound if the caller gave an
// unknown name instead (a misspelt name is the error to report), otherwise
// InvalidArgument (too few tensors).
template <typename Map>
[[noreturn]] void throwMissing(const char *direction, const QueuedTensor &tensor,
                               const std::vector<QueuedTensor> &tensors, const Map &given) {
  if (const std::string *unknown = unknownName(given, tensors)) throwUnknown(direction, *unknown, tensors, &tensor);
  throw Error(ErrorCode::InvalidArgument, "missing {} '{}': execute needs {} ({})", direction, tensor.anchor->name(),
              namesOf(tensors), givenNames(given));
}

}  // namespace

RunnerLayout::RunnerLayout(std::shared_ptr<const popef::Model> model, const ModelRunnerConfig &config)
    : model_(std::move(model)),
      validate_(config.validate_io_params),
      batching_(batchingEnabled(config)),
      queue_batching_dim_(batching_ ? config.batching_dim : 0) {
  const auto &flow = model_->metadata.programFlow();
  std::set<std::string> known_inputs;
  for (const popef::Anchor &anchor : model_->metadata.anchors()) {
    const std::int64_t transfer_bytes = anchor.tensorInfo().sizeInBytes();
    if (anchor.type() == popef::TensorType::INPUT) {
      known_inputs.insert(anchor.name());
      if (auto frozen = config.frozen_inputs.find(anchor.name()); frozen != config.frozen_inputs.end()) {
        const ConstTensorMemoryView &view = frozen->second;
        if (static_cast<std::int64_t>(view.data_size_bytes) != transfer_bytes) {
          throw Error(ErrorCode::InvalidArgument, "frozen input '{}': expected {} bytes, got {}", anchor.name(),
                      transfer_bytes, view.data_size_bytes);
        }
        TensorMemory copy(transfer_bytes);
        if (transfer_bytes > 0) std::memcpy(copy.data.get(), view.data, view.data_size_bytes);
        frozen_.push_back({&anchor, std::move(copy)});
      } else if (hasPopefData(anchor) || anchor.useRemoteBuffers()) {
        // The Session feeds it from the model.
      } else if (inAny(anchor, flow.main())) {
        inputs_.push_back(queued(anchor, queue_batching_dim_));
      } else {
        throw Error(ErrorCode::InvalidArgument,
                    "input '{}' is needed by the Load or Save programs and the model has no data for it: "
                    "give it in frozen_inputs",
                    anchor.name());
      }
    } else if (anchor.type() == popef::TensorType::OUTPUT) {
      if (inAny(anchor, flow.main())) {
        outputs_.push_back(queued(anchor, queue_batching_dim_));
      } else {
        other_outputs_.push_back(&anchor);
      }
    }
  }
  for (const auto &[name, view] : config.frozen_inputs) {
    if (!known_inputs.contains(name)) {
      throw Error(ErrorCode::NotFound, "frozen input '{}': the model has no input of that name", name);
    }
  }
  for (const auto &[replica, outputs] : config.replica_to_save_programs_outputs) {
    for (const auto &[name, view] : outputs) {
      auto it = std::find_if(other_outputs_.begin(), other_outputs_.end(),
                             [&key = name](const popef::Anchor *a) { return a->name() == key; });
      if (it == other_outputs_.end()) {
        throw Error(ErrorCode::NotFound,
                    "replica_to_save_programs_outputs[{}]: '{}' is not an output of the Save programs", replica, name);
      }
      if (view.data == nullptr || static_cast<std::int64_t>(view.data_size_bytes) != (*it)->tensorInfo().sizeInBytes()) {
        throw Error(ErrorCode::InvalidArgument,
                    "replica_to_save_programs_outputs[{}]: output '{}': expected {} bytes, got {}{}", replica, name,
                    (*it)->tensorInfo().sizeInBytes(), view.data_size_bytes, view.data ? "" : " (null data)");
      }
    }
  }
  std::sort(inputs_.begin(), inputs_.end(), byName);
  std::sort(outputs_.begin(), outputs_.end(), byName);
  if (batching_) requireOneBatchSize(config.batching_dim);
}

void RunnerLayout::requireOneBatchSize(unsigned batching_dim) const {
  // A request's samples go through every queue: n samples in must make n
  // samples out, so each tensor must hold the model's batch in that dimension.
  const QueuedTensor *first = nullptr;
  for (const auto *tensors : {&inputs_, &outputs_}) {
    for (const QueuedTensor &tensor : *tensors) {
      if (first == nullptr) {
        first = &tensor;
      } else if (tensor.batch_size != first->batch_size) {
        throw Error(ErrorCode::InvalidArgument,
                    "batching_dim {}: {} '{}' is {}, {} in that dimension, but {} '{}' is {}, {}: dynamic batch "
                    "sizing needs the model's batch size in dimension {} of every execute input and output",
                    batching_dim, directionOf(*first->anchor), first->anchor->name(),
                    first->anchor->tensorInfo().toString(), first->batch_size, directionOf(*tensor.anchor),
                    tensor.anchor->name(), tensor.anchor->tensorInfo().toString(), tensor.batch_size, batching_dim);
      }
    }
  }
}

bool RunnerLayout::isFrozen(const std::string &name) const {
  return std::any_of(frozen_.begin(), frozen_.end(), [&](const FrozenTensor &f) { return f.anchor->name() == name; });
}

std::vector<DataDesc> RunnerLayout::executeInputDescs() const {
  std::vector<DataDesc> descs;
  for (const QueuedTensor &t : inputs_) descs.push_back(DataDesc::fromAnchor(*t.anchor));
  return descs;
}

std::vector<DataDesc> RunnerLayout::executeOutputDescs() const {
  std::vector<DataDesc> descs;
  for (const QueuedTensor &t : outputs_) descs.push_back(DataDesc::fromAnchor(*t.anchor));
  return descs;
}

std::vector<DataDesc> RunnerLayout::modelInputDescs() const {
  std::vector<DataDesc> descs;
  for (const popef::Anchor &anchor : model_->metadata.anchors()) {
    if (anchor.type() == popef::TensorType::INPUT) {
      descs.push_back(DataDesc::fromAnchor(anchor, anchor.dataSource() == popef::DataSource::TensorData));
    }
  }
  std::sort(descs.begin(), descs.end(), [](const DataDesc &a, const DataDesc &b) { return a.name < b.name; });
  return descs;
}

std::vector<DataDesc> RunnerLayout::modelOutputDescs() const {
  std::vector<DataDesc> descs;
  for (const popef::Anchor &anchor : model_->metadata.anchors()) {
    if (anchor.type() == popef::TensorType::OUTPUT) descs.push_back(DataDesc::fromAnchor(anchor));
  }
  std::sort(descs.begin(), descs.end(), [](const DataDesc &a, const DataDesc &b) { return a.name < b.name; });
  return descs;
}

std::int64_t RunnerLayout::unitBytes(const QueuedTensor &tensor) const {
  return batching_ ? tensor.sample_bytes : tensor.transfer_bytes;
}

void RunnerLayout::setInputViews(RequestViews &views, const InputMemoryView &inputs) const {
  views.inputs.clear();
  views.outputs.clear();
  views.inputs.reserve(inputs_.size());
  for (const QueuedTensor &tensor : inputs_) {
    auto it = inputs.find(tensor.anchor->name());
    if (it == inputs.end()) throwMissing("input", tensor, inputs_, inputs);
    views.inputs.push_back(it->second);
  }
  if (validate_) checkInputs(inputs, views);
}

void RunnerLayout::checkInputs(const InputMemoryView &inputs, const RequestViews &views) const {
  if (inputs.size() != inputs_.size()) {
    if (const std::string *unknown = unknownName(inputs, inputs_)) throwUnknown("input", *unknown, inputs_);
  }
  std::int64_t units = -1;
  const QueuedTensor *first = nullptr;
  for (std::size_t i = 0; i < inputs_.size(); ++i) {
    const QueuedTensor &tensor = inputs_[i];
    const ConstTensorMemoryView &view = views.inputs[i];
    const auto size = static_cast<std::int64_t>(view.data_size_bytes);
    const std::int64_t unit = unitBytes(tensor);
    if (size <= 0 || size % unit != 0) {
      throw Error(ErrorCode::InvalidArgument, "input '{}': expected {} bytes, got {}{}", tensor.anchor->name(), unit,
                  size, batching_ ? " (a whole number of samples of that size)" : " (or a whole multiple of it)");
    }
    if (view.data == nullptr) throw Error(ErrorCode::InvalidArgument, "input '{}': data is null", tensor.anchor->name());
    if (units < 0) {
      units = size / unit;
      first = &tensor;
    } else if (size / unit != units) {
      throw Error(ErrorCode::InvalidArgument, "input '{}': holds {} {} but input '{}' holds {}", tensor.anchor->name(),
                  size / unit, batching_ ? "samples" : "batches", first->anchor->name(), units);
    }
  }
}

std::int64_t RunnerLayout::requestUnits(const RequestViews &views) const {
  if (inputs_.empty()) return 1;
  return static_cast<std::int64_t>(views.inputs[0].data_size_bytes) / unitBytes(inputs_[0]);
}

std::int64_t RunnerLayout::outputBytes(const RequestViews &views, std::size_t index) const {
  return requestUnits(views) * unitBytes(outputs_[index]);
}

void RunnerLayout::addOutputViews(RequestViews &views, const OutputMemoryView &outputs) const {
  views.outputs.reserve(outputs_.size());
  for (const QueuedTensor &tensor : outputs_) {
    auto it = outputs.find(tensor.anchor->name());
    if (it == outputs.end()) throwMissing("output", tensor, outputs_, outputs);
    views.outputs.push_back(it->second);
  }
  if (!validate_) return;
  if (outputs.size() != outputs_.size()) {
    if (const std::string *unknown = unknownName(outputs, outputs_)) throwUnknown("output", *unknown, outputs_);
  }
  for (std::size_t i = 0; i < outputs_.size(); ++i) {
    const TensorMemoryView &view = views.outputs[i];
    const std::int64_t expected = outputBytes(views, i);
    if (static_cast<std::int64_t>(view.data_size_bytes) != expected) {
      throw Error(ErrorCode::InvalidArgument, "output '{}': expected {} bytes, got {}", outputs_[i].anchor->name(),
                  expected, view.data_size_bytes);
    }
    if (view.data == nullptr) throw Error(ErrorCode::InvalidArgument, "output '{}': data is null", outputs_[i].anchor->name());
  }
}

}  // namespace mrt
