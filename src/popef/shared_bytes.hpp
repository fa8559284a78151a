// SharedBytes: a read-only byte range plus shared ownership of whatever holds
// it (a memory-mapped file or a heap buffer). Copies share the owner, so a
// TensorData view keeps its file mapped for as long as anyone holds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <vector>

namespace mrt::popef {

// TensorData in a PopEF file starts on a 64-byte boundary (the blob
// alignment); copies made for models built or loaded in memory keep that
// promise so that callers may use aligned loads on them either way.
inline constexpr std::size_t kDataAlignment = 64;

class SharedBytes {
 public:
  SharedBytes() = default;
  SharedBytes(std::shared_ptr<const void> owner, std::span<const std::byte> bytes)
      : owner_(std::move(owner)), bytes_(bytes) {}

  // Takes the vector and owns it (no copy of its bytes).
  static SharedBytes fromVector(std::vector<std::byte> bytes) {
    auto owned = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
    const std::span<const std::byte> view(owned->data(), owned->size());
    return SharedBytes(std::move(owned), view);
  }
  // The same for bytes as hwsim serializes them (std::uint8_t).
  static SharedBytes fromVector(std::vector<std::uint8_t> bytes) {
    auto owned = std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes));
    const std::span<const std::byte> view(reinterpret_cast<const std::byte *>(owned->data()),
                                          owned->size());
    return SharedBytes(std::move(owned), view);
  }
  static SharedBytes copyOf(std::span<const std::byte> bytes) {
    return fromVector(std::vector<std::byte>(bytes.begin(), bytes.end()));
  }
  // A new allocation of `size` bytes aligned to kDataAlignment, filled by
  // fill(data), which returns how many of them it filled: the bytes kept.
  template <class Fill> static SharedBytes alignedFilledBy(std::size_t size, Fill &&fill) {
    constexpr std::align_val_t alignment{kDataAlignment};
    // At least one byte: the allocation must be unique and deletable.
    auto *raw = static_cast<std::byte *>(::operator new(size + 1, alignment));
    std::shared_ptr<const void> owned(raw, [](const void *p) {
      ::operator delete(const_cast<void *>(p), std::align_val_t{kDataAlignment});
    });
    const std::size_t filled = fill(raw);
    return SharedBytes(std::move(owned), std::span<const std::byte>(raw, filled));
  }

  // A copy in a new allocation aligned to kDataAlignment.
  static SharedBytes alignedCopyOf(std::span<const std::byte> bytes) {
    return alignedFilledBy(bytes.size(), [&](std::byte *raw) {
      if (!bytes.empty()) std::memcpy(raw, bytes.data(), bytes.size());
      return bytes.size();
    });
  }

  std::span<const std::byte> bytes() const noexcept { return bytes_; }
  const std::byte *data() const noexcept { return bytes_.data(); }
  std::size_t size() const noexcept { return bytes_.size(); }
  // What keeps the bytes alive; lets a caller share it (the C API does).
  const std::shared_ptr<const void> &owner() const noexcept { return owner_; }

 private:
  std::shared_ptr<const void> owner_;
  std::span<const std::byte> bytes_;
};

}  // namespace mrt::popef
