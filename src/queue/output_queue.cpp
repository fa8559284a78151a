#include "queue/output_queue.hpp"

namespace mrt {

OutputQueue::OutputQueue(std::shared_ptr<OutputRingBuffer> buffer, const popef::TensorInfo &info,
                         unsigned batching_dim)
    : TransferQueue(std::move(buffer), info, batching_dim) {}

void OutputQueue::enqueue(void *output, std::int64_t data_size, WriteCompleteCallback write_complete_callback) {
  checkEntry(output, data_size);
  OutputData *entry = enqueueLock();
  entry->data = static_cast<std::uint8_t *>(output);
  entry->data_size = data_size;
  entry->writeCompleteCallback = std::move(write_complete_callback);
  enqueueComplete();
}

}  // namespace mrt
