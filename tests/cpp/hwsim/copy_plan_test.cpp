// Copy steps between scattered views: the direct memcpys planned for them
// (copy_plan.hpp, a private header) and the bytes such copies leave, direct
// or staged when source and destination share bytes.
#include "copy_plan.hpp"

#include "test_util.hpp"

namespace {

using hwsim::Type;
using hwsim::detail::ByteRanges;
using hwsim::detail::CopyChunk;
using hwsim::detail::directCopyChunks;
using hwsim_test::Harness;
namespace p = hwsim::program;

std::vector<std::uint64_t> flat(const std::vector<CopyChunk> &chunks) {
  std::vector<std::uint64_t> out;
  for (const auto &c : chunks) out.insert(out.end(), {c.dst, c.src, c.bytes});
  return out;
}

TEST(DirectCopyChunks, CutsWhereEitherSideHasARangeBoundary) {
  // src: 12 bytes at 0 then 4 at 100; dst: 8 at 200 then 8 at 300.
  const ByteRanges src{{0, 12}, {100, 4}}, dst{{200, 8}, {300, 8}};
  EXPECT_EQ(flat(directCopyChunks(src, dst)), (std::vector<std::uint64_t>{200, 0, 8, 300, 8, 4, 304, 100, 4}));
}

TEST(DirectCopyChunks, MergesPiecesThatFollowEachOtherOnBothSides) {
  const ByteRanges src{{0, 4}, {4, 4}, {8, 4}}, dst{{50, 6}, {56, 6}};
  EXPECT_EQ(flat(directCopyChunks(src, dst)), (std::vector<std::uint64_t>{50, 0, 12}));
}

TEST(DirectCopyChunks, NothingWhenSourceAndDestinationShareAByte) {
  // Destination byte 11 is source byte 11 (ranges in any order).
  EXPECT_TRUE(directCopyChunks(ByteRanges{{100, 4}, {8, 4}}, ByteRanges{{11, 4}, {200, 4}}).empty());
  EXPECT_TRUE(directCopyChunks(ByteRanges{{0, 8}}, ByteRanges{{4, 2}, {20, 6}}).empty());
  EXPECT_FALSE(directCopyChunks(ByteRanges{{0, 8}}, ByteRanges{{8, 2}, {20, 6}}).empty());  // touching is not sharing
}

// A scattered copy between different variables (direct) and one that
// rotates a variable onto itself (source and destination overlap: staged)
// both leave the bytes a one-by-one copy would.
TEST(ScatteredCopies, DirectAndStagedCopiesMoveTheRightElements) {
  Harness h;
  auto x = h.input("x", Type::F32, {6});
  auto y = h.output("y", Type::F32, {2, 3}, 1);
  auto r = h.output("r", Type::F32, {6}, 2);
  h.graph.createHostWrite("r_in", r);
  h.build({p::Sequence{
      p::Copy(x.reshape({3, 2}).transpose(), y),  // y[i][j] = x[2j + i]
      p::Copy(hwsim::concat({r.slice(2, 6), r.slice(0, 2)}), r),  // rotate left by 2
  }});
  h.write<float>("x", {0, 1, 2, 3, 4, 5});
  h.write<float>("r_in", {10, 11, 12, 13, 14, 15});
  h.engine->run(0);
  EXPECT_EQ(h.read<float>("y", 6), (std::vector<float>{0, 2, 4, 1, 3, 5}));
  EXPECT_EQ(h.read<float>("r", 6), (std::vector<float>{12, 13, 14, 15, 10, 11}));
}

}  // namespace
