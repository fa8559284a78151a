// SharedBytes: a read-only byte range plus shared ownership of whatever holds
// it (a memory-mapped file or a heap buffer). Copies share the owner, so a
// TensorData view keeps its file mapped for as long as anyone holds it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

namespace mrt::popef {

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
  static SharedBytes copyOf(std::span<const std::byte> bytes) {
    return fromVector(std::vector<std::byte>(bytes.begin(), bytes.end()));
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
