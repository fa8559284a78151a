#include "zeroed_arena.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <new>
#include <utility>

namespace hwsim::detail {

namespace {
// A transparent huge page of x86-64. An arena at least this big is mapped
// on a huge-page boundary and asks for huge pages: the Load program's
// copies (weights replicated to every tile that uses them) then fault in
// one 2 MiB page at a time rather than 512 small ones, each fault costing
// far more than zeroing its 4 KiB. The arena packs variables end to end, so
// a written huge page is mostly written anyway.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

void *mapZeros(std::size_t bytes) {
  void *memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::bad_alloc();
  return memory;
}

// Maps bytes (a multiple of kHugePage) + one huge page and unmaps the head
// and tail around the first huge-page boundary; returns the aligned start.
void *mapHugeAligned(std::size_t bytes) {
  auto *raw = static_cast<std::uint8_t *>(mapZeros(bytes + kHugePage));
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(raw);
  auto *aligned = raw + ((kHugePage - address % kHugePage) % kHugePage);
  const std::size_t head = static_cast<std::size_t>(aligned - raw);
  if (head != 0) ::munmap(raw, head);
  const std::size_t tail = kHugePage - head;
  if (tail != 0) ::munmap(aligned + bytes, tail);
  // Advice only: without transparent huge pages the arena stays small pages.
  ::madvise(aligned, bytes, MADV_HUGEPAGE);
  return aligned;
}
}  // namespace

ZeroedArena::ZeroedArena(std::size_t bytes) {
  // No size this close to the top of the address space can be mapped; the
  // check keeps the rounding below from wrapping to a small arena.
  if (bytes > SIZE_MAX - 2 * kHugePage) throw std::bad_alloc();
  const bool huge = bytes >= kHugePage;
  if (huge) bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  data_ = static_cast<std::uint8_t *>(huge ? mapHugeAligned(bytes) : mapZeros(bytes));
  bytes_ = bytes;
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
