#include "queue/queue_manager.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <memory>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.hpp"
#include "queue/sample_layout.hpp"

namespace mrt {

namespace {

// multiplier x the samples of one transfer along the queues' batching
// dimension, so that `multiplier` whole transfers of one-sample requests fit.
std::size_t ringSize(const popef::Anchor &anchor, const RingSizeMultiplierProdType &multiplier,
                     unsigned batching_dim) {
  const std::int64_t factor = multiplier ? multiplier(anchor) : kDefaultRingSizeMultiplier;
  if (factor < 1) {
    throw Error(ErrorCode::InvalidArgument,
                "queue '{}': the ring size multiplier must be at least 1, got {}", anchor.name(),
                factor);
  }
  const char *direction = anchor.type() == popef::TensorType::OUTPUT ? "output" : "input";
  const SampleLayout samples(anchor.tensorInfo(), batching_dim,
                             [&] { return fmt::format("{} queue '{}'", direction, anchor.name()); });
  // Checked before multiplying: the product (and the ring's bytes) must not
  // overflow on the way to the allocation.
  constexpr std::int64_t kMaxEntries =
      std::numeric_limits<std::ptrdiff_t>::max() / std::max(sizeof(InputData), sizeof(OutputData));
  if (factor > kMaxEntries / samples.batchSize()) {
    throw Error(ErrorCode::InvalidArgument,
                "{} queue '{}': ring_size_multiplier {} x {} samples per transfer is more than the {} entries a "
                "ring can hold",
                direction, anchor.name(), factor, samples.batchSize(), kMaxEntries);
  }
  return static_cast<std::size_t>(factor * samples.batchSize());
}

}  // namespace

std::vector<const popef::Anchor *> QueueManager::queueAnchors(const popef::Model &model) {
  std::vector<const popef::Anchor *> result;
  for (const auto &anchor : model.metadata.anchors()) {
    const bool user_input = anchor.type() == popef::TensorType::INPUT &&
                            anchor.dataSource() == popef::DataSource::None;
    if (user_input || anchor.type() == popef::TensorType::OUTPUT) result.push_back(&anchor);
  }
  return result;
}

QueueManager::QueueManager(const popef::Model &model,
                           RingSizeMultiplierProdType ring_size_multiplier,
                           std::chrono::nanoseconds timeout_ns,
                           QueueTimeoutCallback timeout_callback, unsigned batching_dim)
    : QueueManager(queueAnchors(model), std::move(ring_size_multiplier), timeout_ns,
                   std::move(timeout_callback), batching_dim) {}

QueueManager::QueueManager(const std::vector<const popef::Anchor *> &anchors,
                           RingSizeMultiplierProdType ring_size_multiplier,
                           std::chrono::nanoseconds timeout_ns,
                           QueueTimeoutCallback timeout_callback, unsigned batching_dim)
    : timeout_callback_(std::move(timeout_callback)) {
  if (timeout_ns.count() < 0) {
    throw Error(ErrorCode::InvalidArgument, "QueueManager: timeout_ns must not be negative, got {}",
                timeout_ns.count());
  }
  // Both directions' rings call back with the queue's progress; the queues
  // live in std::map nodes, which never move, so the lookups below are stable.
  const bool timed = timeout_callback_ && timeout_ns.count() > 0;
  for (const popef::Anchor *anchor : anchors) {
    if (anchor == nullptr) throw Error(ErrorCode::InvalidArgument, "QueueManager: null anchor");
    const std::string &name = anchor->name();
    if (inputs.count(name) != 0 || outputs.count(name) != 0) {
      throw Error(ErrorCode::InvalidArgument, "QueueManager: two anchors are named '{}'", name);
    }
    const std::size_t size = ringSize(*anchor, ring_size_multiplier, batching_dim);
    // The model and the multiplier say how many entries a ring gets: reserve
    // them against the host memory limit before allocating.
    const std::size_t entry_bytes =
        anchor->type() == popef::TensorType::INPUT ? sizeof(InputData) : sizeof(OutputData);
    ring_memory_.emplace_back(size * entry_bytes,
                              [&] { return fmt::format("queue '{}' ({} ring entries)", name, size); });
    switch (anchor->type()) {
      case popef::TensorType::INPUT: {
        InputRingBuffer::ReadTimeoutCallback on_timeout;
        if (timed) {
          on_timeout = [this, name](InputRingBuffer *) {
            timeout_callback_(name, popef::TensorType::INPUT,
                              inputs.find(name)->second.deviceBytesFilled());
          };
        }
        auto ring = std::make_shared<InputRingBuffer>(size, name, std::move(on_timeout), timeout_ns);
        InputQueue &queue = inputs.try_emplace(name, std::move(ring), anchor->tensorInfo(), batching_dim).first->second;
        streams_.push_back({anchor->handle(), name, popef::TensorType::INPUT,
                            [&queue](void *buffer) { queue.fillDeviceBuffer(buffer); },
                            [&queue](void *buffer) { return queue.tryFillDeviceBuffer(buffer); }});
        break;
      }
      case popef::TensorType::OUTPUT: {
        OutputRingBuffer::ReadTimeoutCallback on_timeout;
        if (timed) {
          on_timeout = [this, name](OutputRingBuffer *) {
            timeout_callback_(name, popef::TensorType::OUTPUT,
                              outputs.find(name)->second.deviceBytesDrained());
          };
        }
        auto ring = std::make_shared<OutputRingBuffer>(size, name, std::move(on_timeout), timeout_ns);
        OutputQueue &queue = outputs.try_emplace(name, std::move(ring), anchor->tensorInfo(), batching_dim).first->second;
        streams_.push_back({anchor->handle(), name, popef::TensorType::OUTPUT,
                            [&queue](void *buffer) { queue.drainDeviceBuffer(buffer); }, nullptr});
        break;
      }
      default:
        throw Error(ErrorCode::InvalidArgument,
                    "QueueManager: anchor '{}' is neither an INPUT nor an OUTPUT ({})", name,
                    popef::toString(anchor->type()));
    }
    if (!handle_to_name_.try_emplace(anchor->handle(), name).second) {
      throw Error(ErrorCode::InvalidArgument, "QueueManager: two anchors have the handle '{}'",
                  anchor->handle());
    }
  }
  // Inputs first, then outputs, each in name order: a stable order for users.
  std::stable_sort(streams_.begin(), streams_.end(), [](const auto &a, const auto &b) {
    if (a.direction != b.direction) return a.direction == popef::TensorType::INPUT;
    return a.name < b.name;
  });
}

std::string QueueManager::queueNames() const {
  std::vector<std::string> in, out;
  for (const auto &entry : inputs) in.push_back(entry.first);
  for (const auto &entry : outputs) out.push_back(entry.first);
  return fmt::format("inputs [{}], outputs [{}]", fmt::join(in, ", "), fmt::join(out, ", "));
}

const std::string &QueueManager::nameOf(const std::string &name_or_handle) const {
  const auto by_handle = handle_to_name_.find(name_or_handle);
  return by_handle != handle_to_name_.end() ? by_handle->second : name_or_handle;
}

InputQueue &QueueManager::inputQueue(const std::string &name) {
  auto found = inputs.find(name);
  if (found == inputs.end()) found = inputs.find(nameOf(name));
  if (found == inputs.end()) {
    throw Error(ErrorCode::NotFound, "no input queue named '{}' ({})", name, queueNames());
  }
  return found->second;
}

OutputQueue &QueueManager::outputQueue(const std::string &name) {
  auto found = outputs.find(name);
  if (found == outputs.end()) found = outputs.find(nameOf(name));
  if (found == outputs.end()) {
    throw Error(ErrorCode::NotFound, "no output queue named '{}' ({})", name, queueNames());
  }
  return found->second;
}

const StreamCallbackFn &QueueManager::streamCallback(std::string_view handle) const {
  for (const auto &stream : streams_) {
    if (stream.handle == handle) return stream.callback;
  }
  for (const auto &stream : streams_) {
    if (stream.name == handle) return stream.callback;
  }
  throw Error(ErrorCode::NotFound, "no queue stream with the handle '{}' ({})", handle,
              queueNames());
}

void QueueManager::flushAll() {
  for (auto &[name, queue] : inputs) queue.flush();
  for (auto &[name, queue] : outputs) queue.flush();
}

void QueueManager::disconnectAll() {
  for (auto &[name, queue] : inputs) queue.disconnect();
  for (auto &[name, queue] : outputs) queue.disconnect();
}

void QueueManager::resetAll() {
  for (auto &[name, queue] : inputs) queue.reset();
  for (auto &[name, queue] : outputs) queue.reset();
}

}  // namespace mrt
