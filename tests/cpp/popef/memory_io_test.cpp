// popef::Writer's byte sinks and Reader::parseMemory: the bytes every sink
// gets are those of the file, a counted size is exact, a fixed buffer is
// never overrun, and a model parsed from memory equals the one from the file
// with the same checks and "<memory>" in the messages.
#include <cstdint>
#include <memory>

#include <gtest/gtest.h>

#include "popef/reader.hpp"
#include "popef/writer.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef::test {
namespace {

class MemoryIoTest : public ::testing::Test {
 protected:
  TempDir dir_{memoryBackedTempBase()};
  std::shared_ptr<Model> model_ = sampleModel();
};

TEST_F(MemoryIoTest, MemoryBytesEqualTheFile) {
  const std::string path = dir_.file("sample.popef");
  writeModelFile(*model_, path);
  const std::vector<std::byte> file = readBytes(path);
  EXPECT_EQ(modelFileSize(*model_), file.size());
  EXPECT_TRUE(sameBytes(modelFileBytes(*model_), file));
}

TEST_F(MemoryIoTest, SplitHalvesLoadBackAsOneModel) {
  const std::string head = dir_.file("head.popef"), data = dir_.file("data.popef");
  {
    Writer writer(head);
    writer.writeModelHead(*model_);
    writer.close();
  }
  {
    Writer writer(data);
    writer.writeModelData(*model_);
    writer.close();
  }
  expectSameModel(*loadModel({data, head}), *model_);
}

TEST_F(MemoryIoTest, SpanSinkRefusesToOverrun) {
  std::vector<std::byte> buffer(modelFileSize(*model_) + 1, std::byte{0x5a});
  const std::span<std::byte> tooSmall(buffer.data(), buffer.size() - 2);
  Writer writer(std::make_unique<SpanSink>(tooSmall));
  const Error error = captureError([&] { writer.writeModel(*model_); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(std::string(error.what()).find("too small"), std::string::npos) << error.what();
  EXPECT_EQ(buffer[buffer.size() - 2], std::byte{0x5a});
  EXPECT_EQ(buffer.back(), std::byte{0x5a});
}

TEST_F(MemoryIoTest, ParsedFromMemoryEqualsAndIsAligned) {
  std::vector<std::byte> bytes = modelFileBytes(*model_);
  // From an odd address: the reader's copy puts the data back on 64 bytes.
  std::vector<std::byte> shifted(bytes.size() + 1);
  std::copy(bytes.begin(), bytes.end(), shifted.begin() + 1);
  const std::shared_ptr<Model> loaded =
      loadModelFromMemory(std::span<const std::byte>(shifted).subspan(1));
  shifted.assign(shifted.size(), std::byte{0});  // the model owns its copy
  expectSameModel(*loaded, *model_);
  for (const TensorData &data : loaded->tensorDataList()) {
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(data.data()) % kDataAlignment, 0u) << data.name();
    ASSERT_TRUE(data.origin());
    EXPECT_EQ(data.origin()->file, kMemoryName);
  }
}

TEST_F(MemoryIoTest, TruncatedOrCorruptMemoryIsCorruptModelNamingMemory) {
  const std::vector<std::byte> bytes = modelFileBytes(*model_);
  for (std::size_t length : {std::size_t{0}, std::size_t{1}, std::size_t{63}, bytes.size() / 2,
                             bytes.size() - 1}) {
    const Error error = captureError(
        [&] { loadModelFromMemory(std::span<const std::byte>(bytes).first(length)); });
    EXPECT_EQ(error.code(), ErrorCode::CorruptModel) << length;
    EXPECT_NE(std::string(error.what()).find("'<memory>'"), std::string::npos) << error.what();
  }
  std::vector<std::byte> corrupt = bytes;
  corrupt[corrupt.size() / 2] ^= std::byte{0x01};
  const Error error = captureError([&] { loadModelFromMemory(corrupt); });
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel);
  EXPECT_NE(std::string(error.what()).find("<memory>"), std::string::npos) << error.what();
}

}  // namespace
}  // namespace mrt::popef::test
