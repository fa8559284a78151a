// Tensor memory representation (seed 001, "Tensor memory representation"):
// views of memory someone else owns, and TensorMemory, a shared block the
// library allocates (library-allocated outputs of ModelRunner::execute).
#pragma once

#include <cstdint>
#include <memory>

namespace mrt {

// Mutable view of already allocated memory.
struct TensorMemoryView {
  TensorMemoryView() = default;
  TensorMemoryView(void *memory, std::uint64_t size_bytes)
      : data(memory), data_size_bytes(size_bytes) {}

  void *data = nullptr;
  std::uint64_t data_size_bytes = 0;
};

// Immutable view of already allocated memory.
struct ConstTensorMemoryView {
  ConstTensorMemoryView() = default;
  // Implicit on purpose, as in the seed: a mutable view is also a const one.
  ConstTensorMemoryView(const TensorMemoryView &other)  // NOLINT(google-explicit-constructor)
      : data(other.data), data_size_bytes(other.data_size_bytes) {}
  ConstTensorMemoryView(const void *memory, std::uint64_t size_bytes)
      : data(memory), data_size_bytes(size_bytes) {}

  const void *data = nullptr;
  std::uint64_t data_size_bytes = 0;
};

// Allocates, stores, shares and releases one block of tensor memory. Copies
// share the block (std::shared_ptr); it is freed with the last copy. Blocks
// start on a kAlignment boundary and are zero-initialised, so a tensor read
// before anything wrote it is deterministic.
struct TensorMemory {
  static constexpr std::size_t kAlignment = 64;

  TensorMemory() = default;
  // Throws InvalidArgument for a negative size; a size of 0 allocates
  // nothing (data stays null). std::bad_alloc if memory runs out.
  explicit TensorMemory(std::int64_t data_size_bytes);

  TensorMemoryView getView() { return {data.get(), data_size_bytes}; }
  ConstTensorMemoryView getConstView() const { return {data.get(), data_size_bytes}; }
  ConstTensorMemoryView getView() const { return getConstView(); }

  std::uint64_t data_size_bytes = 0;
  std::shared_ptr<void> data = nullptr;
};

}  // namespace mrt
