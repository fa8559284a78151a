#include "zeroed_arena.hpp"

#include <sys/mman.h>

#include <new>
#include <utility>

namespace hwsim::detail {

ZeroedArena::ZeroedArena(std::size_t bytes) : bytes_(bytes) {
  void *memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::uint8_t *>(memory);
}

ZeroedArena::~ZeroedArena() { release(); }

ZeroedArena::ZeroedArena(ZeroedArena &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

ZeroedArena &ZeroedArena::operator=(ZeroedArena &&other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void ZeroedArena::release() noexcept {
  if (data_ != nullptr) ::munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

}  // namespace hwsim::detail
