// FlatPool (flat_pool.hpp, a private header): the spans it hands out keep
// their elements while later ones are allocated, and a reserved total is
// handed out from one block.
#include "flat_pool.hpp"

#include <cstdint>

#include <gtest/gtest.h>

namespace {

using hwsim::detail::FlatPool;

TEST(FlatPool, SpansKeepTheirElementsAsThePoolGrows) {
  FlatPool<std::uint32_t> pool;
  std::vector<std::span<std::uint32_t>> spans;
  // Lists of 0..99 elements, far more in all than one block holds.
  for (std::uint32_t list = 0; list < 300; ++list) {
    const auto s = pool.allocate(list % 100);
    for (std::uint32_t i = 0; i < s.size(); ++i) s[i] = list * 1000 + i;
    spans.push_back(s);
  }
  for (std::uint32_t list = 0; list < 300; ++list) {
    ASSERT_EQ(spans[list].size(), list % 100);
    for (std::uint32_t i = 0; i < spans[list].size(); ++i) EXPECT_EQ(spans[list][i], list * 1000 + i) << list;
  }
}

TEST(FlatPool, AReservedTotalIsOneBlock) {
  FlatPool<std::uint64_t> pool;
  pool.allocate(3);  // a partly used block first
  pool.reserve(5000);
  const auto first = pool.allocate(2000);
  const auto second = pool.allocate(3000);
  EXPECT_EQ(second.data(), first.data() + first.size());
  for (const auto x : second) EXPECT_EQ(x, 0u);  // value-initialized
  EXPECT_TRUE(pool.allocate(0).empty());
}

}  // namespace
