#include "queue/queue_storage.hpp"

#include "common/error.hpp"

namespace mrt {

RingMemoryPool allocateQueueStorage(const IQueue &queue, std::int64_t extra_buffers) {
  if (extra_buffers < 0) {
    throw Error(ErrorCode::InvalidArgument,
                "allocateQueueStorage('{}'): extra_buffers must not be negative, got {}",
                queue.name(), extra_buffers);
  }
  return RingMemoryPool(queue.tensorInfo().sizeInBytes(), queue.numBuffers() + extra_buffers);
}

}  // namespace mrt
