// QueueManager (seed 001): one InputQueue per user input anchor and one
// OutputQueue per output anchor of a model, each over its own SPSC ring of
// pointers, plus the stream callbacks that connect those rings to a device.
//
// ======================= Construction interface (for Session) ===============
//
//   QueueManager(const std::vector<const popef::Anchor *> &anchors,
//                RingSizeMultiplierProdType ring_size_multiplier =
//                    constantRingSizeMult(kDefaultRingSizeMultiplier),
//                std::chrono::nanoseconds timeout_ns = 0ns,
//                QueueTimeoutCallback timeout_callback = nullptr,
//                unsigned batching_dim = 0);
//   QueueManager(const popef::Model &model, <same four optional arguments>);
//
// It knows nothing of Session, Device or hwsim. Session::createQueueManager
// (args...) can forward its arguments to either constructor; the natural call
// is with session.getUserInputAnchors() + getUserOutputAnchors(). The Model
// overload takes every INPUT anchor without TensorData/FeedData and every
// OUTPUT anchor. An INPUT anchor gets an InputQueue, an OUTPUT anchor an
// OutputQueue (UNKNOWN: InvalidArgument); both keyed by anchor name, and
// findable by name or handle. The anchors are copied, so they need not
// outlive the manager. Every queue packs and splits the caller's buffers
// along dimension batching_dim of its tensor (InvalidArgument if a tensor
// has no such dimension).
//
// Then, for every anchor handle, connect the stream callback to the device:
//
//   for (const auto &stream : manager.streams())
//     engine.connectStreamToCallback(stream.handle, stream.callback);
//   // or manager.streamCallback(handle) for one handle
//
// stream.callback is a StreamCallbackFn = std::function<void(void *)>, the
// same signature as hwsim::StreamCallbackFn. It is called on the device thread
// with the device's buffer of exactly anchor.tensorInfo().sizeInBytes()
// bytes: for an input it copies the next enqueued user bytes into the buffer
// (InputQueue::fillDeviceBuffer), for an output it copies the buffer into the
// next enqueued user buffers (OutputQueue::drainDeviceBuffer), running the
// InputData/OutputData callbacks. That memcpy is the one copy per direction
// of DESIGN.md 3. It blocks while the user has not enqueued enough; after
// disconnectAll() it returns at once (zeros for inputs, outputs dropped).
// The callbacks refer to the manager: they must not be called after it is
// destroyed (disconnect the engine's streams, or destroy the engine, first).
//
// Session::stop() calls disconnectAll() (any thread; wakes blocked device and
// producer threads); after the engine has stopped, resetAll() makes the
// queues usable again for the next run.
//
// Timeouts: when timeout_ns > 0 and timeout_callback is set, a stream callback
// that has waited timeout_ns for the user calls
// timeout_callback(anchor_name, direction, bytes_done) on the device thread,
// and again every timeout_ns it keeps waiting; bytes_done says how much of the
// current transfer is already filled (input) or drained (output). A callback
// that wants the device to progress calls flush() on the queues; flush() is a
// producer-side call, so the caller must keep it from overlapping with its
// own producer thread's calls on the same queue (e.g. one producer mutex).
// ============================================================================
//
// Threads: each queue has one producer thread and one device thread (see
// InputQueue / OutputQueue). flushAll() is a producer call on every queue;
// disconnectAll() is safe from any thread; resetAll() only while no thread is
// inside a call on any queue. Queues serve one replica (seed: "Queues
// currently only work for models with replica == 1"); a runner with several
// replicas makes one manager per replica.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/host_memory.hpp"
#include "popef/anchor.hpp"
#include "popef/model.hpp"
#include "queue/input_queue.hpp"
#include "queue/output_queue.hpp"
#include "queue/ring_size_multiplier.hpp"

namespace mrt {

// The device-side transfer function of one anchor (see above).
using StreamCallbackFn = std::function<void(void *device_buffer)>;
// An input's transfer ahead of time: fills device_buffer and returns true
// only if the whole transfer is enqueued already (it never blocks).
using StreamPrefetchFn = std::function<bool(void *device_buffer)>;

// Called on the device thread when a stream callback has waited timeout_ns
// for the user: the anchor's name, whether it is an INPUT or an OUTPUT, and
// the bytes of the current transfer already done.
using QueueTimeoutCallback = std::function<void(
    const std::string &anchor_name, popef::TensorType direction, std::int64_t bytes_done)>;

class QueueManager {
 public:
  struct AnchorStream {
    std::string handle;  // the executable's stream handle
    std::string name;    // the anchor (and queue) name
    popef::TensorType direction;
    StreamCallbackFn callback;
    StreamPrefetchFn prefetch;  // inputs only (InputQueue::tryFillDeviceBuffer); empty for outputs
  };

  explicit QueueManager(const std::vector<const popef::Anchor *> &anchors,
                        RingSizeMultiplierProdType ring_size_multiplier =
                            ring_size_multiplier_factory::constantRingSizeMult(
                                kDefaultRingSizeMultiplier),
                        std::chrono::nanoseconds timeout_ns = std::chrono::nanoseconds::zero(),
                        QueueTimeoutCallback timeout_callback = nullptr, unsigned batching_dim = 0);
  explicit QueueManager(const popef::Model &model,
                        RingSizeMultiplierProdType ring_size_multiplier =
                            ring_size_multiplier_factory::constantRingSizeMult(
                                kDefaultRingSizeMultiplier),
                        std::chrono::nanoseconds timeout_ns = std::chrono::nanoseconds::zero(),
                        QueueTimeoutCallback timeout_callback = nullptr, unsigned batching_dim = 0);

  QueueManager(const QueueManager &) = delete;
  QueueManager(QueueManager &&) = delete;
  QueueManager &operator=(const QueueManager &other) = delete;
  QueueManager &operator=(QueueManager &&) = delete;
  ~QueueManager() = default;

  // By anchor name or handle; NotFound naming the known queues otherwise.
  InputQueue &inputQueue(const std::string &name);
  OutputQueue &outputQueue(const std::string &name);

  void flushAll();
  void disconnectAll();
  void resetAll();

  // Every anchor's stream callback, inputs first, each in name order.
  const std::vector<AnchorStream> &streams() const noexcept { return streams_; }
  // The callback of one handle (or anchor name); NotFound otherwise.
  const StreamCallbackFn &streamCallback(std::string_view handle) const;

  // The user input anchors the Model constructor picks.
  static std::vector<const popef::Anchor *> queueAnchors(const popef::Model &model);

  std::map<std::string, InputQueue> inputs;
  std::map<std::string, OutputQueue> outputs;

 private:
  std::string queueNames() const;
  const std::string &nameOf(const std::string &name_or_handle) const;

  QueueTimeoutCallback timeout_callback_;
  std::map<std::string, std::string, std::less<>> handle_to_name_;
  std::vector<AnchorStream> streams_;
  std::vector<HostMemoryReservation> ring_memory_;  // the rings' entries
};

}  // namespace mrt
