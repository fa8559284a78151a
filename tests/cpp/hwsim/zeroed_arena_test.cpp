// ZeroedArena (a private header): a replica's simulated memory, mapped
// from zero pages; from 2 MiB on aligned to and advised for huge pages.
#include "zeroed_arena.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <new>
#include <utility>

namespace {

using hwsim::detail::ZeroedArena;

constexpr std::size_t kHugePage = std::size_t{2} << 20;

std::uintptr_t address(const ZeroedArena &arena) { return reinterpret_cast<std::uintptr_t>(arena.data()); }

// Every byte of [0, bytes) reads zero, then holds what is written to it.
void expectZeroedAndWritable(ZeroedArena &arena, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(arena.data()[i], 0) << "byte " << i;
  ASSERT_EQ(arena.data()[bytes - 1], 0);
  for (std::size_t i = 0; i < bytes; i += 4093) arena.data()[i] = static_cast<std::uint8_t>(i % 251 + 1);
  arena.data()[bytes - 1] = 7;
  for (std::size_t i = 0; i < bytes; i += 4093) ASSERT_EQ(arena.data()[i], i % 251 + 1) << "byte " << i;
  EXPECT_EQ(arena.data()[bytes - 1], 7);
}

TEST(ZeroedArena, SmallArenaIsPageAlignedZerosThatCanBeWritten) {
  ZeroedArena arena(10000);
  EXPECT_EQ(address(arena) % 4096, 0u);
  expectZeroedAndWritable(arena, 10000);
}

TEST(ZeroedArena, BigArenaStartsOnAHugePageBoundaryAndEveryByteIsUsable) {
  // Not a multiple of the huge page: the last, partly used huge page too.
  const std::size_t bytes = 5 * kHugePage + 12345;
  ZeroedArena arena(bytes);
  EXPECT_EQ(address(arena) % kHugePage, 0u);
  expectZeroedAndWritable(arena, bytes);
}

TEST(ZeroedArena, MovingHandsTheMappingOver) {
  ZeroedArena first(3 * kHugePage);
  first.data()[kHugePage] = 42;
  std::uint8_t *const data = first.data();
  ZeroedArena second(std::move(first));
  EXPECT_EQ(first.data(), nullptr);
  EXPECT_EQ(second.data(), data);
  ZeroedArena third(4096);
  third = std::move(second);  // unmaps third's own page
  EXPECT_EQ(third.data(), data);
  EXPECT_EQ(third.data()[kHugePage], 42);
}

TEST(ZeroedArena, SizeNearTheTopOfTheAddressSpaceIsBadAllocNotASmallArena) {
  // Rounding such a size up to huge pages would wrap around to a few bytes.
  EXPECT_THROW(ZeroedArena(std::numeric_limits<std::size_t>::max() - 100), std::bad_alloc);
  EXPECT_THROW(ZeroedArena(std::numeric_limits<std::size_t>::max() - kHugePage), std::bad_alloc);
}

}  // namespace
