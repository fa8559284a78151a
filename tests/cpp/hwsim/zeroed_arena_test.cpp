// ZeroedArena (zeroed_arena.hpp, a private header): every arena reads as
// zeros, a fresh mapping or a destroyed arena of the same size zeroed where
// it was written, and the process keeps the most recent destroyed arenas
// up to its limits. The cache is process-wide, so each test uses sizes no
// engine of this binary has.
#include "zeroed_arena.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

namespace {

using hwsim::detail::ZeroedArena;

const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

bool allZero(const ZeroedArena &arena, std::size_t bytes) {
  for (std::size_t i = 0; i < bytes; ++i) {
    if (arena.data()[i] != 0) return false;
  }
  return true;
}

TEST(ZeroedArena, ADestroyedArenaIsZeroedWhereItWasWrittenAndReusedBySameSize) {
  const std::size_t bytes = 40 * kPage + 100;
  std::uint8_t *first = nullptr;
  {
    ZeroedArena arena(bytes);
    EXPECT_FALSE(arena.reused());
    ASSERT_TRUE(allZero(arena, bytes));  // reads only: zero pages stay mapped
    first = arena.data();
    std::memset(first + 3 * kPage + 5, 0xAB, 2 * kPage);  // across pages
    first[bytes - 1] = 0xCD;                               // the partial last page
  }
  ZeroedArena again(bytes);
  EXPECT_TRUE(again.reused());
  EXPECT_EQ(again.data(), first);
  EXPECT_TRUE(allZero(again, bytes));
  // While it is in use, another arena of that size is a fresh mapping.
  ZeroedArena other(bytes);
  EXPECT_FALSE(other.reused());
  EXPECT_NE(other.data(), first);
  EXPECT_TRUE(allZero(other, bytes));
}

TEST(ZeroedArena, ArenasOfAnotherSizeAreNotReused) {
  const std::size_t bytes = 41 * kPage + 7;
  { ZeroedArena arena(bytes); }
  ZeroedArena bigger(bytes + kPage);
  EXPECT_FALSE(bigger.reused());
  ZeroedArena same(bytes);
  EXPECT_TRUE(same.reused());
}

TEST(ZeroedArena, TheMostRecentArenasUpToTheLimitAreKept) {
  const std::size_t bytes = 43 * kPage + 1;
  std::vector<std::unique_ptr<ZeroedArena>> arenas;
  for (std::size_t i = 0; i < ZeroedArena::kKeptArenas + 2; ++i) {
    arenas.push_back(std::make_unique<ZeroedArena>(bytes));
    arenas.back()->data()[i * kPage] = 1;
  }
  arenas.clear();
  std::size_t reused = 0;
  for (std::size_t i = 0; i < ZeroedArena::kKeptArenas + 2; ++i) {
    arenas.push_back(std::make_unique<ZeroedArena>(bytes));
    reused += arenas.back()->reused() ? 1 : 0;
    EXPECT_TRUE(allZero(*arenas.back(), bytes)) << i;
  }
  // The most recent ones were kept, every older one unmapped.
  EXPECT_EQ(reused, ZeroedArena::kKeptArenas);
}

TEST(ZeroedArena, AnArenaWrittenBeyondTheByteLimitIsNotKept) {
  const std::size_t bytes = ZeroedArena::kKeptBytes + 3 * kPage;
  {
    ZeroedArena arena(bytes);
    std::memset(arena.data(), 0x5A, bytes);
  }
  ZeroedArena again(bytes);
  EXPECT_FALSE(again.reused());
  EXPECT_EQ(again.data()[0], 0);
  EXPECT_EQ(again.data()[bytes - 1], 0);
}

}  // namespace
