// ZeroedArena (zeroed_arena.hpp, a private header): every arena reads as
// zeros, a fresh mapping or a destroyed arena of the same size zeroed where
// it was written, and the process keeps the most recent destroyed arenas
// up to its limits. The cache is process-wide, so each test uses sizes no
// engine of this binary has.
#include "zeroed_arena.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

// GCC names its sanitizers with macros, clang with __has_feature.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define MRT_CLANG_SANITIZED 1
#endif
#endif
#ifndef MRT_CLANG_SANITIZED
#define MRT_CLANG_SANITIZED 0
#endif

namespace {

using hwsim::detail::ZeroedArena;

const std::size_t kPage = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));

// /proc/self/statm: the process's mapped (field 0) or resident (field 1) bytes.
std::size_t statmBytes(int field) {
  std::ifstream statm("/proc/self/statm");
  std::size_t value = 0;
  for (int i = 0; i <= field; ++i) statm >> value;
  return value * kPage;
}

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

// Reads map the kernel's shared zero page, which costs no memory: keeping
// such an arena must not write (and so allocate) those pages, nor count
// them against the byte limit.
TEST(ZeroedArena, AnArenaOnlyReadIsKeptWithoutTakingMemory) {
  const std::size_t bytes = ZeroedArena::kKeptBytes + 16 * kPage + 3;
  std::size_t residentBefore = 0;
  {
    ZeroedArena arena(bytes);
    ASSERT_TRUE(allZero(arena, bytes));
    residentBefore = statmBytes(1);
  }
  EXPECT_LT(statmBytes(1), residentBefore + (std::size_t{8} << 20));
  ZeroedArena again(bytes);
  EXPECT_TRUE(again.reused());
  EXPECT_TRUE(allZero(again, bytes));
}

// Under an address-space limit that fits one arena of `bytes` beside the
// process but not two: keeps one, then maps a slightly larger one. Returns
// 0 when that worked and reads as zeros, 1 on std::bad_alloc.
[[maybe_unused]] int mapBesideAKeptArena(std::size_t bytes) {  // unused under sanitizers
  const std::size_t limit = statmBytes(0) + bytes + bytes / 2;
  const rlimit addressSpace{limit, limit};
  if (::setrlimit(RLIMIT_AS, &addressSpace) != 0) return 2;
  {
    ZeroedArena arena(bytes);
    arena.data()[0] = 1;
  }
  try {
    const ZeroedArena larger(bytes + kPage);
    return larger.data()[bytes] == 0 && !larger.reused() ? 0 : 3;
  } catch (const std::bad_alloc &) {
    return 1;
  }
}

// Kept arenas hold address space: when a mapping fails (here RLIMIT_AS,
// in a child process) they are unmapped and the mapping tried again.
TEST(ZeroedArena, AMappingThatFailsUnmapsTheKeptArenasAndTriesAgain) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || MRT_CLANG_SANITIZED
  GTEST_SKIP() << "sanitizers map memory of their own under an address-space limit";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(mapBesideAKeptArena(ZeroedArena::kKeptMappedBytes)), ::testing::ExitedWithCode(0), "");
#endif
}

TEST(ZeroedArena, TheEnvironmentSetsTheBytesKept) {
  std::string warning;
  EXPECT_EQ(ZeroedArena::keptBytesFor(nullptr, warning), ZeroedArena::kKeptBytes);
  EXPECT_EQ(ZeroedArena::keptBytesFor("", warning), ZeroedArena::kKeptBytes);
  EXPECT_EQ(ZeroedArena::keptBytesFor("0", warning), 0u);
  EXPECT_EQ(ZeroedArena::keptBytesFor("16", warning), std::size_t{16} << 20);
  EXPECT_EQ(ZeroedArena::keptBytesFor("1024", warning), std::size_t{1} << 30);
  EXPECT_TRUE(warning.empty()) << warning;
  for (const char *bad : {"lots", "-1", "16MB", " 16", "1025"}) {
    warning.clear();
    EXPECT_EQ(ZeroedArena::keptBytesFor(bad, warning), ZeroedArena::kKeptBytes) << bad;
    EXPECT_NE(warning.find(std::string("MRT_HWSIM_KEPT_ARENAS_MIB '") + bad + "'"), std::string::npos) << warning;
    EXPECT_NE(warning.find("keeping up to 64 MiB"), std::string::npos) << warning;
  }
}

// With MRT_HWSIM_KEPT_ARENAS_MIB=0 set before the first arena of the
// process (a child process): no arena is kept. Returns 0 when none was.
int keepNoneWhenTheEnvironmentSaysSo() {
  if (::setenv("MRT_HWSIM_KEPT_ARENAS_MIB", "0", 1) != 0) return 2;
  const std::size_t bytes = 45 * kPage;
  {
    ZeroedArena arena(bytes);
    arena.data()[0] = 1;
  }
  const ZeroedArena again(bytes);
  return again.reused() ? 1 : 0;
}

TEST(ZeroedArena, ZeroMiBKeepsNoArena) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::_Exit(keepNoneWhenTheEnvironmentSaysSo()), ::testing::ExitedWithCode(0), "");
}

}  // namespace
