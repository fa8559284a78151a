// IQueue: what InputQueue and OutputQueue have in common (seed 001): the
// tensor each buffer holds, how many buffers fit, and a way to disconnect the
// queue from its data source at shutdown.
#pragma once

#include <cstdint>
#include <string>

#include "popef/tensor_info.hpp"

namespace mrt {

class IQueue {
 public:
  virtual ~IQueue() = default;

  // Shape and type of one model transfer (one "batch" as the model sees it).
  virtual const popef::TensorInfo &tensorInfo() const = 0;
  // How many InputData/OutputData entries the queue can hold at once.
  virtual std::int64_t numBuffers() const = 0;
  // Invalidates the ring: blocked calls return at once, the device side gets
  // dummy data (inputs) or has its data discarded (outputs), and the
  // caller's memory is never touched again until reset().
  virtual void disconnect() = 0;

  // The anchor (tensor) name the queue serves; used in messages.
  virtual const std::string &name() const = 0;

 protected:
  IQueue() = default;
  IQueue(const IQueue &) = default;
  IQueue &operator=(const IQueue &) = default;
};

// The number of samples in one model transfer: the first dimension of the
// tensor's shape (1 for a scalar or a tensor whose first dimension is 0).
std::int64_t modelBatchSize(const popef::TensorInfo &info) noexcept;

}  // namespace mrt
