// model_runtime::QueueManager, InputQueue, OutputQueue: the queues a
// Session feeds its user anchors from, with the Model Runtime API's names,
// over the queue manager of the C API (mrt_session_create_queue_manager).
// A producer thread enqueues while the thread running the session's
// programs consumes; one producer per queue at a time. Errors throw
// mrt::Error (a std::runtime_error) naming the queue and the bad size or
// call, with the C API's status as code().
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "mrt.hpp"
#include "popef/Model.hpp"

namespace model_runtime {

using ReadStartCallback = std::function<void(void)>;
using ReadCompleteCallback = ReadStartCallback;
using WriteCompleteCallback = std::function<void(void)>;

// One entry of an input queue: data_size bytes at data, borrowed until
// readCompleteCallback has run.
struct InputData {
  const uint8_t *data = {nullptr};
  int64_t data_size = {0};
  ReadStartCallback readStartCallback = {nullptr};
  ReadCompleteCallback readCompleteCallback = {nullptr};
};

// One entry of an output queue: where to write data_size bytes.
struct OutputData {
  uint8_t *data = {nullptr};
  int64_t data_size = {0};
  WriteCompleteCallback writeCompleteCallback = {nullptr};
};

class IQueue {
 public:
  virtual ~IQueue() = default;
  virtual const popef::TensorInfo &tensorInfo() const = 0;
  virtual int64_t numBuffers() const = 0;
  virtual void disconnect() = 0;
};

namespace detail {
inline popef::TensorInfo tensorInfo(const mrt::QueueInfo &info) {
  return {info.shape, static_cast<popef::DataType>(info.data_type), info.size_in_bytes};
}

// The C callbacks of a ring slot's entry: they run the callbacks of the
// InputData/OutputData the producer filled for that slot (user_data).
inline void runReadStart(void *slot) {
  const InputData &data = *static_cast<const InputData *>(slot);
  if (data.readStartCallback) data.readStartCallback();
}
inline void runReadComplete(void *slot) {
  const InputData &data = *static_cast<const InputData *>(slot);
  if (data.readCompleteCallback) data.readCompleteCallback();
}
inline void runWriteComplete(void *slot) {
  const OutputData &data = *static_cast<const OutputData *>(slot);
  if (data.writeCompleteCallback) data.writeCompleteCallback();
}
inline void bindCallbacks(mrt_input_queue_entry &entry) {
  entry.read_start_fn = &runReadStart;
  entry.read_complete_fn = &runReadComplete;
}
inline void bindCallbacks(mrt_output_queue_entry &entry) { entry.write_complete_fn = &runWriteComplete; }

// enqueueLock/enqueueComplete over the C API's two-phase enqueue
// (mrt_input_queue_enqueue_lock): the library locks the ring's next slot,
// blocking while the ring is full, and the producer fills this queue's
// Data of that slot (one per ring slot) in place. Complete hands the
// slot's C entry the pointer and size, and its callbacks call the Data's,
// which stay where they are until the device has run them (the ring gives
// the slot out again only after that).
template <class Queue, class Data, class CEntry>
class SlotEntries {
 public:
  explicit SlotEntries(int64_t num_buffers) : slots_(static_cast<std::size_t>(num_buffers)) {}

  Data *lock(const Queue &queue) {
    CEntry &entry = queue.enqueueLock();
    Data &data = slots_.at(static_cast<std::size_t>(entry.slot));
    if (entry.user_data != &data) {  // freshly locked: the library zeroed the entry
      data = Data{};
      entry.user_data = &data;
      bindCallbacks(entry);
    }
    locked_ = &entry;
    return &data;
  }
  // mrt::Error from the C API: MRT_FAILED_PRECONDITION without a lock,
  // MRT_INVALID_ARGUMENT for a bad pointer or size (the entry stays locked),
  // MRT_CANCELLED on a disconnected queue.
  void complete(const Queue &queue) {
    if (const auto *data = locked_ != nullptr ? static_cast<const Data *>(locked_->user_data) : nullptr) {
      locked_->data = data->data;
      locked_->size_bytes = data->data_size;
    }
    queue.enqueueComplete();
    locked_ = nullptr;
  }

 private:
  std::vector<Data> slots_;
  // The C entry of the last lock (the library keeps it as long as the
  // manager); after a reset or disconnect the library refuses to complete it.
  CEntry *locked_ = nullptr;
};
}  // namespace detail

class InputQueue : public IQueue {
 public:
  // libmrt extension (the seed's takes a ring buffer): a view of a queue of
  // the C API's queue manager, which owns it.
  explicit InputQueue(mrt::InputQueue queue)
      : queue_(queue), info_(queue.info()), tensorInfo_(detail::tensorInfo(info_)), slots_(info_.num_buffers) {}
  // The library's callbacks point at this queue's entries: not copyable.
  InputQueue(const InputQueue &) = delete;
  InputQueue &operator=(const InputQueue &) = delete;
  InputQueue(InputQueue &&) = default;
  InputQueue &operator=(InputQueue &&) = default;

  // Queues data_size bytes at input (a multiple of one sample, borrowed
  // until read_complete_callback has run). The callbacks run on the thread
  // running the session's programs.
  void enqueue(const void *input, int64_t data_size, ReadStartCallback read_start_callback = nullptr,
               ReadCompleteCallback read_complete_callback = nullptr) {
    queue_.enqueue(input, data_size, std::move(read_start_callback), std::move(read_complete_callback));
  }
  // The entry of the ring's next slot to fill, blocking while the ring is
  // full; locking again before enqueueComplete() returns the same one, and
  // after it the next slot's. The producer thread only.
  InputData *enqueueLock() { return slots_.lock(queue_); }
  // Publishes the locked entry (as enqueue would its arguments).
  void enqueueComplete() { slots_.complete(queue_); }
  void flush() { queue_.flush(); }
  void reset() { queue_.reset(); }
  void disconnect() override { queue_.disconnect(); }
  const popef::TensorInfo &tensorInfo() const override { return tensorInfo_; }
  int64_t numBuffers() const override { return info_.num_buffers; }

 private:
  mrt::InputQueue queue_;
  mrt::QueueInfo info_;
  popef::TensorInfo tensorInfo_;
  detail::SlotEntries<mrt::InputQueue, InputData, mrt_input_queue_entry> slots_;
};

class OutputQueue : public IQueue {
 public:
  explicit OutputQueue(mrt::OutputQueue queue)
      : queue_(queue), info_(queue.info()), tensorInfo_(detail::tensorInfo(info_)), slots_(info_.num_buffers) {}
  OutputQueue(const OutputQueue &) = delete;
  OutputQueue &operator=(const OutputQueue &) = delete;
  OutputQueue(OutputQueue &&) = default;
  OutputQueue &operator=(OutputQueue &&) = default;

  // Queues a buffer of data_size bytes for the next outputs (borrowed until
  // write_complete_callback has run, on the thread running the programs).
  void enqueue(void *output, int64_t data_size, WriteCompleteCallback write_complete_callback = nullptr) {
    queue_.enqueue(output, data_size, std::move(write_complete_callback));
  }
  // As InputQueue's.
  OutputData *enqueueLock() { return slots_.lock(queue_); }
  void enqueueComplete() { slots_.complete(queue_); }
  void flush() { queue_.flush(); }
  void reset() { queue_.reset(); }
  void disconnect() override { queue_.disconnect(); }
  const popef::TensorInfo &tensorInfo() const override { return tensorInfo_; }
  int64_t numBuffers() const override { return info_.num_buffers; }

 private:
  mrt::OutputQueue queue_;
  mrt::QueueInfo info_;
  popef::TensorInfo tensorInfo_;
  detail::SlotEntries<mrt::OutputQueue, OutputData, mrt_output_queue_entry> slots_;
};

// The ring size multiplier of an anchor's queue (ring entries = multiplier
// x batch). libmrt sizes the queues of anchors moved by Main programs with
// one multiplier and those only moved by Load/Save programs with another, so
// Session::createQueueManager accepts a function that gives one value to
// each of the two groups (as the factories below do).
using RingSizeMultiplierProdType = std::function<int64_t(const popef::Anchor &)>;

namespace ring_size_multiplier_factory {

// selected_ring_size_multiplier for anchors moved by any of `programs`,
// others_ring_size_multiplier for the rest.
inline RingSizeMultiplierProdType ringSizeMultForProgs(
    const std::vector<popef::ProgramFlow::ProgramIndexType> &programs, int64_t selected_ring_size_multiplier,
    int64_t others_ring_size_multiplier = 1) {
  return [programs, selected_ring_size_multiplier, others_ring_size_multiplier](const popef::Anchor &anchor) {
    for (auto program : anchor.programs()) {
      if (std::find(programs.begin(), programs.end(), program) != programs.end()) return selected_ring_size_multiplier;
    }
    return others_ring_size_multiplier;
  };
}
// main_ring_size_multiplier for anchors of the Main programs,
// load_save_ring_size_multiplier for the rest.
inline RingSizeMultiplierProdType ringSizeMultForMainProgs(const popef::Model &model, int64_t main_ring_size_multiplier,
                                                           int64_t load_save_ring_size_multiplier = 1) {
  return ringSizeMultForProgs(model.metadata.programFlow().main(), main_ring_size_multiplier,
                              load_save_ring_size_multiplier);
}

}  // namespace ring_size_multiplier_factory

// Created by Session::createQueueManager, which owns it.
class QueueManager {
 public:
  QueueManager(const QueueManager &) = delete;
  QueueManager(QueueManager &&) = delete;
  QueueManager &operator=(const QueueManager &other) = delete;
  QueueManager &operator=(QueueManager &&) = delete;
  ~QueueManager() = default;
  // libmrt extension: wraps a queue manager of the C API.
  explicit QueueManager(mrt::QueueManager manager) : manager_(std::move(manager)) {
    for (const auto &name : manager_.inputNames()) inputs.emplace(name, InputQueue(manager_.input(name)));
    for (const auto &name : manager_.outputNames()) outputs.emplace(name, OutputQueue(manager_.output(name)));
  }

  // Throws std::out_of_range naming the tensor if it has no queue.
  InputQueue &inputQueue(const std::string &name) { return find(inputs, name, "input"); }
  OutputQueue &outputQueue(const std::string &name) { return find(outputs, name, "output"); }

  void flushAll() { manager_.flushAll(); }
  void disconnectAll() { manager_.disconnectAll(); }
  void resetAll() { manager_.resetAll(); }

  std::map<std::string, InputQueue> inputs;
  std::map<std::string, OutputQueue> outputs;

 private:
  template <class Map>
  static typename Map::mapped_type &find(Map &map, const std::string &name, const char *kind) {
    auto it = map.find(name);
    if (it == map.end()) {
      throw std::out_of_range(std::string("model_runtime::QueueManager: no ") + kind + " queue named '" + name + "'");
    }
    return it->second;
  }

  mrt::QueueManager manager_;
};

}  // namespace model_runtime
