#include "runner/tensor_memory.hpp"

#include <cstring>
#include <new>

#include "common/error.hpp"

namespace mrt {

TensorMemory::TensorMemory(std::int64_t size) {
  if (size < 0) {
    throw Error(ErrorCode::InvalidArgument, "TensorMemory: the size must not be negative, got {}",
                size);
  }
  if (size == 0) return;
  const auto bytes = static_cast<std::size_t>(size);
  void *block = ::operator new(bytes, std::align_val_t{kAlignment});
  std::memset(block, 0, bytes);
  // The deleter must match the aligned operator new (ASan checks it).
  data = std::shared_ptr<void>(
      block, [](void *p) { ::operator delete(p, std::align_val_t{kAlignment}); });
  data_size_bytes = static_cast<std::uint64_t>(size);
}

}  // namespace mrt
