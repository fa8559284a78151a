// TensorMemory, its views, and DataDesc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "common/error.hpp"
#include "runner/data_desc.hpp"
#include "runner/tensor_memory.hpp"

namespace mrt {
namespace {

TEST(TensorMemoryTest, AllocatesAlignedZeroedMemoryOfTheRequestedSize) {
  TensorMemory memory(100);
  EXPECT_EQ(memory.data_size_bytes, 100U);
  ASSERT_NE(memory.data, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory.data.get()) % TensorMemory::kAlignment, 0U);
  const auto *bytes = static_cast<const std::uint8_t *>(memory.data.get());
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bytes[i], 0) << i;
}

TEST(TensorMemoryTest, CopiesShareTheBlock) {
  TensorMemory memory(16);
  TensorMemory copy = memory;
  EXPECT_EQ(copy.data.get(), memory.data.get());
  std::memset(memory.getView().data, 0xAB, 16);
  EXPECT_EQ(static_cast<const std::uint8_t *>(copy.getConstView().data)[15], 0xAB);
  memory = TensorMemory();
  EXPECT_EQ(copy.data.use_count(), 1);  // the block lives on in the copy
}

TEST(TensorMemoryTest, ViewsPointAtTheBlock) {
  TensorMemory memory(8);
  TensorMemoryView view = memory.getView();
  EXPECT_EQ(view.data, memory.data.get());
  EXPECT_EQ(view.data_size_bytes, 8U);
  const TensorMemory &const_memory = memory;
  ConstTensorMemoryView const_view = const_memory.getView();
  EXPECT_EQ(const_view.data, memory.data.get());
  EXPECT_EQ(const_view.data_size_bytes, 8U);
  ConstTensorMemoryView from_mutable = view;  // a mutable view converts
  EXPECT_EQ(from_mutable.data, view.data);
  EXPECT_EQ(from_mutable.data_size_bytes, view.data_size_bytes);
}

TEST(TensorMemoryTest, EmptyAndInvalidSizes) {
  TensorMemory empty(0);
  EXPECT_EQ(empty.data, nullptr);
  EXPECT_EQ(empty.data_size_bytes, 0U);
  TensorMemory defaulted;
  EXPECT_EQ(defaulted.getView().data, nullptr);
  try {
    TensorMemory bad(-1);
    FAIL() << "a negative size was accepted";
  } catch (const Error &error) {
    EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
    EXPECT_STREQ(error.what(), "TensorMemory: the size must not be negative, got -1");
  }
}

TEST(TensorMemoryViewTest, DefaultAndExplicitViews) {
  int value = 0;
  TensorMemoryView view(&value, sizeof value);
  EXPECT_EQ(view.data, &value);
  EXPECT_EQ(view.data_size_bytes, sizeof value);
  ConstTensorMemoryView const_view(&value, 2);
  EXPECT_EQ(const_view.data, &value);
  EXPECT_EQ(const_view.data_size_bytes, 2U);
  EXPECT_EQ(TensorMemoryView().data, nullptr);
  EXPECT_EQ(ConstTensorMemoryView().data_size_bytes, 0U);
}

TEST(DataDescTest, HoldsWhatItWasGiven) {
  DataDesc desc("image", 3136, {1, 784}, popef::DataType::F32, true);
  EXPECT_EQ(desc.name, "image");
  EXPECT_EQ(desc.size_in_bytes, 3136);
  EXPECT_THAT(desc.shape, ::testing::ElementsAre(1, 784));
  EXPECT_EQ(desc.data_type, popef::DataType::F32);
  EXPECT_TRUE(desc.popef_contains_tensor_data);
  EXPECT_FALSE(DataDesc("x", 4, {}, popef::DataType::S32).popef_contains_tensor_data);
  EXPECT_EQ(desc.toString(), "image: F32[1,784] (3136 bytes), has TensorData");
}

TEST(DataDescTest, FromAnAnchor) {
  popef::Anchor anchor("w", "h_w", popef::TensorInfo(popef::DataType::F16, {3, 5}), {0},
                       popef::TensorType::INPUT);
  const InputDesc desc = DataDesc::fromAnchor(anchor, true);
  EXPECT_EQ(desc, DataDesc("w", 30, {3, 5}, popef::DataType::F16, true));
  EXPECT_EQ(desc.toString(), "w: F16[3,5] (30 bytes), has TensorData");
}

}  // namespace
}  // namespace mrt
