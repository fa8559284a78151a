// RecyclingAllocator: a thread gets back the blocks it freed, and the blocks
// of a thread that ended serve the other threads (they go to the
// process-wide cache); the objects themselves are intact either way.
#include "runner/recycling_allocator.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace mrt {
namespace {

// A size no other user of the allocator in this binary has, so that its
// caches hold only this test's blocks.
struct alignas(32) Odd {
  std::array<std::uint8_t, 224> bytes{};
};

constexpr int kBlocks = 40;  // more than a thread keeps of its own

std::vector<Odd *> allocateFilled(RecyclingAllocator<Odd> &allocator, int count, std::uint8_t fill) {
  std::vector<Odd *> blocks;
  for (int i = 0; i < count; ++i) {
    Odd *block = allocator.allocate(1);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(block) % alignof(Odd), 0u);
    block->bytes.fill(fill);
    blocks.push_back(block);
  }
  for (Odd *block : blocks) {
    EXPECT_TRUE(std::all_of(block->bytes.begin(), block->bytes.end(), [&](std::uint8_t b) { return b == fill; }));
  }
  return blocks;
}

TEST(RecyclingAllocatorTest, BlocksOfAThreadThatEndedServeTheOthers) {
  RecyclingAllocator<Odd> allocator;
  std::set<Odd *> freed_by_worker;
  std::thread worker([&] {
    for (Odd *block : allocateFilled(allocator, kBlocks, 1)) {
      freed_by_worker.insert(block);
      allocator.deallocate(block, 1);
    }
  });
  worker.join();
  const std::vector<Odd *> blocks = allocateFilled(allocator, kBlocks, 2);
  const auto reused = std::count_if(blocks.begin(), blocks.end(), [&](Odd *b) { return freed_by_worker.count(b) > 0; });
  // Without recycling (AddressSanitizer builds) every block is the heap's.
  EXPECT_EQ(reused, detail::kRecycleBlocks ? kBlocks : reused);
  for (Odd *block : blocks) allocator.deallocate(block, 1);
}

TEST(RecyclingAllocatorTest, AThreadGetsBackTheBlocksItFreed) {
  RecyclingAllocator<Odd> allocator;
  std::thread worker([&] {
    const std::vector<Odd *> first = allocateFilled(allocator, kBlocks, 3);
    for (Odd *block : first) allocator.deallocate(block, 1);
    const std::vector<Odd *> second = allocateFilled(allocator, kBlocks, 4);
    const std::set<Odd *> earlier(first.begin(), first.end());
    const auto reused = std::count_if(second.begin(), second.end(), [&](Odd *b) { return earlier.count(b) > 0; });
    EXPECT_EQ(reused, detail::kRecycleBlocks ? kBlocks : reused);
    for (Odd *block : second) allocator.deallocate(block, 1);
  });
  worker.join();
}

}  // namespace
}  // namespace mrt
