// ZeroedArena: the simulated memory of one replica, zero-filled, mapped
// from the kernel's zero pages (an anonymous mapping). Making one costs no
// memset: a page costs something only when it is first written, so loading
// an engine costs about the bytes it really writes (constants, the weights
// the Load program streams in), not the size of every tensor on the tiles.
// Page-aligned, which covers the 64 bytes the arena's variables assume.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hwsim::detail {

class ZeroedArena {
 public:
  ZeroedArena() = default;
  // std::bad_alloc if the memory cannot be mapped.
  explicit ZeroedArena(std::size_t bytes);
  ~ZeroedArena();

  ZeroedArena(ZeroedArena &&other) noexcept;
  ZeroedArena &operator=(ZeroedArena &&other) noexcept;
  ZeroedArena(const ZeroedArena &) = delete;
  ZeroedArena &operator=(const ZeroedArena &) = delete;

  std::uint8_t *data() const noexcept { return data_; }

 private:
  void release() noexcept;

  std::uint8_t *data_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace hwsim::detail
