// mrt::RingMemoryPool: sizes, alignment, cycling and argument checks.
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/error.hpp"
#include "queue/memory_pool.hpp"

namespace {

using ::testing::HasSubstr;

TEST(RingMemoryPool, ReportsItsSizes) {
  mrt::RingMemoryPool pool(100, 3);
  EXPECT_EQ(pool.blobSize(), 100);
  EXPECT_EQ(pool.numBlobs(), 3);
  const mrt::IMemoryPool &as_interface = pool;
  EXPECT_EQ(as_interface.blobSize(), 100);
}

TEST(RingMemoryPool, CyclesOverDistinctAlignedNonOverlappingBlobs) {
  constexpr std::int64_t kBlobSize = 100;
  constexpr std::int64_t kBlobs = 4;
  mrt::RingMemoryPool pool(kBlobSize, kBlobs);
  mrt::IMemoryPool &generic = pool;

  std::vector<std::uint8_t *> blobs;
  for (std::int64_t i = 0; i < kBlobs; ++i) {
    auto *blob = static_cast<std::uint8_t *>(generic.getMemoryBlob());
    ASSERT_NE(blob, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(blob) % mrt::RingMemoryPool::kBlobAlignment, 0u);
    std::memset(blob, static_cast<int>(i + 1), kBlobSize);  // the whole blob is writable
    blobs.push_back(blob);
  }
  EXPECT_EQ(std::set<std::uint8_t *>(blobs.begin(), blobs.end()).size(), blobs.size());
  for (std::int64_t i = 0; i < kBlobs; ++i) {  // no blob overwrote another
    for (std::int64_t byte = 0; byte < kBlobSize; ++byte) {
      ASSERT_EQ(blobs[i][byte], i + 1) << "blob " << i << " byte " << byte;
    }
  }
  for (int lap = 0; lap < 3; ++lap) {  // then the same blobs again, in the same order
    for (std::int64_t i = 0; i < kBlobs; ++i) {
      EXPECT_EQ(pool.getMemoryBlob(), blobs[i]) << "lap " << lap << " blob " << i;
    }
  }
}

TEST(RingMemoryPool, SingleBlobIsReturnedEveryTime) {
  mrt::RingMemoryPool pool(1, 1);
  void *blob = pool.getMemoryBlob();
  EXPECT_EQ(pool.getMemoryBlob(), blob);
  EXPECT_EQ(pool.getMemoryBlob(), blob);
}

TEST(RingMemoryPool, MovesKeepTheBlobsAndThePosition) {
  mrt::RingMemoryPool pool(64, 2);
  void *first = pool.getMemoryBlob();
  void *second = pool.getMemoryBlob();
  (void)pool.getMemoryBlob();  // back at the first: next is the second
  mrt::RingMemoryPool moved(std::move(pool));
  EXPECT_EQ(moved.getMemoryBlob(), second);
  EXPECT_EQ(moved.getMemoryBlob(), first);
  EXPECT_EQ(moved.numBlobs(), 2);
}

void expectInvalid(std::int64_t blob_size, std::int64_t num_blobs, const std::string &message) {
  try {
    mrt::RingMemoryPool pool(blob_size, num_blobs);
    ADD_FAILURE() << "accepted blob_size " << blob_size << " num_blobs " << num_blobs;
  } catch (const mrt::Error &error) {
    EXPECT_EQ(error.code(), mrt::ErrorCode::InvalidArgument);
    EXPECT_THAT(error.what(), HasSubstr(message));
  }
}

TEST(RingMemoryPool, RejectsNonPositiveAndOverflowingSizes) {
  expectInvalid(0, 4, "got blob_size 0 and num_blobs 4");
  expectInvalid(-8, 4, "got blob_size -8 and num_blobs 4");
  expectInvalid(16, 0, "got blob_size 16 and num_blobs 0");
  expectInvalid(16, -1, "got blob_size 16 and num_blobs -1");
  expectInvalid(INT64_MAX / 2, 3, "3 blobs of 4611686018427387903 bytes do not fit");
}

}  // namespace
