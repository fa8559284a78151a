// DataType sizes and names, TensorInfo sizes and the checks on shapes.
#include <gtest/gtest.h>

#include <limits>

#include "popef/tensor_info.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef {
namespace {

TEST(DataTypeTest, ElementSizesAndNamesOfEveryType) {
  struct Expected { DataType type; std::size_t size; const char *name; };
  const Expected expected[] = {
      {DataType::BOOL, 1, "BOOL"}, {DataType::U8, 1, "U8"},   {DataType::S8, 1, "S8"},
      {DataType::U16, 2, "U16"},   {DataType::S16, 2, "S16"}, {DataType::S32, 4, "S32"},
      {DataType::U32, 4, "U32"},   {DataType::S64, 8, "S64"}, {DataType::U64, 8, "U64"},
      {DataType::F16, 2, "F16"},   {DataType::F32, 4, "F32"}, {DataType::F64, 8, "F64"},
  };
  ASSERT_EQ(std::size(expected), kNumDataTypes);
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    // The numbering is the file format's and the C API's: BOOL = 0 ... F64 = 11.
    EXPECT_EQ(static_cast<std::size_t>(expected[i].type), i);
    EXPECT_EQ(elementSize(expected[i].type), expected[i].size);
    EXPECT_EQ(toString(expected[i].type), expected[i].name);
    EXPECT_EQ(dataTypeFromString(expected[i].name), expected[i].type);
    EXPECT_EQ(dataTypeFromValue(i), expected[i].type);
  }
  EXPECT_EQ(dataTypeFromString("F8"), std::nullopt);
  EXPECT_EQ(dataTypeFromValue(12), std::nullopt);
}

TEST(TensorInfoTest, SizeInBytesIsElementsTimesElementSize) {
  const TensorInfo info(DataType::F16, {3, 5, 7});
  EXPECT_EQ(info.numElements(), 105);
  EXPECT_EQ(info.sizeInBytes(), 210);
  EXPECT_EQ(info.toString(), "F16[3,5,7]");
  EXPECT_EQ(TensorInfo(DataType::F64, {}).sizeInBytes(), 8);  // a scalar
  EXPECT_EQ(TensorInfo(DataType::S32, {4, 0, 2}).sizeInBytes(), 0);
  EXPECT_EQ(TensorInfo().sizeInBytes(), 4);  // default: F32 scalar
}

TEST(TensorInfoTest, EqualityComparesTypeAndShape) {
  EXPECT_EQ(TensorInfo(DataType::U8, {2, 3}), TensorInfo(DataType::U8, {2, 3}));
  EXPECT_FALSE(TensorInfo(DataType::U8, {2, 3}) == TensorInfo(DataType::S8, {2, 3}));
  EXPECT_FALSE(TensorInfo(DataType::U8, {2, 3}) == TensorInfo(DataType::U8, {3, 2}));
}

TEST(TensorInfoTest, RejectsNegativeDimensions) {
  const Error error = test::captureError([] { TensorInfo(DataType::F32, {2, -1}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_STREQ(error.what(), "tensor shape [2,-1] has a negative dimension");
}

TEST(TensorInfoTest, RejectsSizesThatOverflowInt64) {
  constexpr auto kHuge = std::numeric_limits<std::int64_t>::max() / 4;
  EXPECT_EQ(TensorInfo(DataType::U8, {kHuge}).sizeInBytes(), kHuge);
  const Error error = test::captureError([] { TensorInfo(DataType::F64, {kHuge}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("too large"), std::string::npos);
  EXPECT_EQ(test::captureError([] { TensorInfo(DataType::U16, {1 << 30, 1 << 30, 1 << 30}); }).code(),
            ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace mrt::popef
