// ZeroedArena: the simulated memory of one replica, zero-filled. Making one
// costs no memset: it is an anonymous mapping of the kernel's zero pages, or
// the memory of an arena destroyed before (below), so loading an engine costs
// about the bytes it really writes (constants, the weights the Load program
// streams in), not the size of every tensor on the tiles.
//
// Why arenas are kept: the first write to a fresh page costs a page fault
// (the kernel zeroes, maps and charges the page: 1.3-2 us a 4 KiB page on
// the VMs this was measured on), 15-20 times a memset of the same page. A
// runner created where another of the same size was destroyed (a server
// reloading a model, a test suite, replicas coming and going) would pay
// those faults for every byte of weights again. So a destroyed arena is
// zeroed where it was written (its resident pages holding a byte other than
// zero; resident pages of zeros, most of them the kernel's shared zero page
// mapped by reads, are left alone, and the pages not resident are dropped
// with MADV_DONTNEED, which also forgets pages swapped out) and kept for the
// next arena of the same size. The process keeps the most recent ones, at
// most kKeptArenas arenas, kKeptBytes of written pages and kKeptMappedBytes
// of mappings: older ones are unmapped, and so is an arena over a limit by
// itself. A mapping that fails unmaps every kept arena and is tried again,
// so kept arenas never make an allocation fail (RLIMIT_AS, strict
// overcommit). MRT_HWSIM_KEPT_ARENAS_MIB, read once per process, sets the
// byte limit (0: keep none).
// Page-aligned, which covers the 64 bytes the arena's variables assume.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace hwsim::detail {

class ZeroedArena {
 public:
  static constexpr std::size_t kKeptArenas = 8;
  static constexpr std::size_t kKeptBytes = std::size_t{64} << 20;
  static constexpr std::size_t kKeptMappedBytes = std::size_t{1} << 30;

  ZeroedArena() = default;
  // std::bad_alloc if the memory cannot be mapped.
  explicit ZeroedArena(std::size_t bytes);
  ~ZeroedArena();

  ZeroedArena(ZeroedArena &&other) noexcept;
  ZeroedArena &operator=(ZeroedArena &&other) noexcept;
  ZeroedArena(const ZeroedArena &) = delete;
  ZeroedArena &operator=(const ZeroedArena &) = delete;

  std::uint8_t *data() const noexcept { return data_; }
  // Whether the memory is a destroyed arena's, zeroed (for tests).
  bool reused() const noexcept { return reused_; }

  // The written bytes to keep for a value of MRT_HWSIM_KEPT_ARENAS_MIB (null
  // or empty: kKeptBytes). A value that is not a whole number of MiB up to
  // kKeptMappedBytes sets `warning` (naming it) and gives kKeptBytes.
  static std::size_t keptBytesFor(const char *request, std::string &warning);

 private:
  void release() noexcept;

  std::uint8_t *data_ = nullptr;
  std::size_t bytes_ = 0;
  bool reused_ = false;
};

}  // namespace hwsim::detail
