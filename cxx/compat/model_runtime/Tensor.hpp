// model_runtime::TensorMemoryView, ConstTensorMemoryView and TensorMemory:
// bytes of a tensor, borrowed (views) or shared (TensorMemory). Plain values:
// a thread may use one while another uses a different one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace model_runtime {

struct TensorMemoryView {
  TensorMemoryView() = default;
  TensorMemoryView(void *p_data, uint64_t p_data_size_bytes) : data(p_data), data_size_bytes(p_data_size_bytes) {}

  void *data = nullptr;
  uint64_t data_size_bytes = 0;
};

struct ConstTensorMemoryView {
  ConstTensorMemoryView() = default;
  ConstTensorMemoryView(const TensorMemoryView &other) : data(other.data), data_size_bytes(other.data_size_bytes) {}
  ConstTensorMemoryView(const void *p_data, uint64_t p_data_size_bytes) : data(p_data), data_size_bytes(p_data_size_bytes) {}

  const void *data = nullptr;
  uint64_t data_size_bytes = 0;
};

// A block of memory shared by every copy; freed with the last one.
struct TensorMemory {
  TensorMemory() = default;
  // Allocates data_size_bytes zeroed bytes; std::invalid_argument naming a
  // negative size.
  TensorMemory(int64_t p_data_size_bytes)
      : data_size_bytes(checkedSize(p_data_size_bytes)),
        data(new std::byte[static_cast<std::size_t>(data_size_bytes)](),
             [](void *p) { delete[] static_cast<std::byte *>(p); }) {}

  TensorMemoryView getView() { return {data.get(), data_size_bytes}; }
  ConstTensorMemoryView getConstView() { return {data.get(), data_size_bytes}; }
  ConstTensorMemoryView getView() const { return {data.get(), data_size_bytes}; }

  uint64_t data_size_bytes = 0;
  std::shared_ptr<void> data = nullptr;

 private:
  static uint64_t checkedSize(int64_t size) {
    if (size < 0) throw std::invalid_argument("TensorMemory: data_size_bytes must not be negative, got " + std::to_string(size));
    return static_cast<uint64_t>(size);
  }
};

}  // namespace model_runtime
