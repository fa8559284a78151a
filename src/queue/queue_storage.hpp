// allocateQueueStorage (seed 001): a RingMemoryPool with one blob per queue
// buffer (plus extras), each blob one model transfer of the queue's tensor,
// for callers that want the library to own the memory behind the pointers
// they enqueue.
#pragma once

#include <cstdint>

#include "queue/iqueue.hpp"
#include "queue/memory_pool.hpp"

namespace mrt {

// blob size: queue.tensorInfo().sizeInBytes(); blobs: numBuffers() +
// extra_buffers. Throws InvalidArgument for a negative extra_buffers.
RingMemoryPool allocateQueueStorage(const IQueue &queue, std::int64_t extra_buffers = 0);

}  // namespace mrt
