#include "queue/input_queue.hpp"

namespace mrt {

InputQueue::InputQueue(std::shared_ptr<InputRingBuffer> buffer, const popef::TensorInfo &info,
                       unsigned batching_dim)
    : TransferQueue(std::move(buffer), info, batching_dim) {}

void InputQueue::enqueue(const void *input, std::int64_t data_size, ReadStartCallback read_start_callback,
                         ReadCompleteCallback read_complete_callback) {
  checkEntry(input, data_size);
  InputData *entry = enqueueLock();
  entry->data = static_cast<const std::uint8_t *>(input);
  entry->data_size = data_size;
  entry->readStartCallback = std::move(read_start_callback);
  entry->readCompleteCallback = std::move(read_complete_callback);
  enqueueComplete();
}

}  // namespace mrt
