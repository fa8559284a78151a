// Reading a model whose executable hwsim keeps already (kept under the
// blob's seal, reader.cpp): the reader finds it without checksumming the
// blob, and readExecutable returns it; a blob whose stored checksum or
// descriptor differs is not taken for it, so a wrong checksum is still
// refused with the checksum the bytes have.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "common/error.hpp"
#include "internal_example_models.hpp"
#include "popef/executable_check.hpp"
#include "popef/format.hpp"
#include "popef/reader.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef {
namespace {

namespace offset = format::header_offset;

// An example model of a size no other test of this binary loads.
std::shared_ptr<Model> uniqueModel(const std::string &name) {
  example_models::ExampleOptions options;
  options.size = 1237;
  auto model = example_models::buildExampleModel("add_one", options);
  ModelParts parts{model->metadata, {}, ExecutableBlob(name, model->executable().sharedBytes()),
                   model->tensorDataList(), model->feedDataList(), model->opaqueBlobs()};
  parts.metadata.setExecutable(name);
  return std::make_shared<Model>(std::move(parts));
}

std::size_t executableBlobIndex(const std::vector<std::byte> &bytes) {
  const auto spans = test::blobSpans(bytes);
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (format::load<std::uint32_t>(std::span(bytes).subspan(spans[i].offset), offset::kType) ==
        static_cast<std::uint32_t>(BlobType::Executable)) {
      return i;
    }
  }
  ADD_FAILURE() << "no Executable blob";
  return 0;
}

TEST(KeptExecutableRead, ASecondReadFindsTheExecutableTheFirstKept) {
  test::TempDir dir;
  const std::string path = dir.file("kept.popef");
  test::writeModelFile(*uniqueModel("kept"), path);
  const auto first = loadModel({path});
  const hwsim::Executable executable = readExecutable(*first);
  const auto second = loadModel({path});
  ASSERT_TRUE(second->executable().kept().valid());
  EXPECT_EQ(&readExecutable(*second).data(), &executable.data());
  EXPECT_EQ(second->executable().bytes().size(), first->executable().bytes().size());
}

TEST(KeptExecutableRead, AWrongStoredChecksumIsRefusedThoughTheBytesAreKept) {
  test::TempDir dir;
  const std::string path = dir.file("kept.popef");
  test::writeModelFile(*uniqueModel("wrong_sum"), path);
  readExecutable(*loadModel({path}));  // kept now
  std::vector<std::byte> bytes = test::readBytes(path);
  const test::BlobSpan blob = test::blobSpans(bytes)[executableBlobIndex(bytes)];
  const auto header = std::span(bytes).subspan(blob.offset, format::kHeaderSize);
  const std::uint64_t real = format::load<std::uint64_t>(header, offset::kPayloadChecksum);
  format::store<std::uint64_t>(header, offset::kPayloadChecksum, real + 1);
  format::store<std::uint64_t>(header, offset::kHeaderChecksum, format::checksum(header.first(format::kHeaderHashedBytes)));
  const std::string bad = dir.file("bad.popef");
  test::writeBytes(bad, bytes);
  const Error error = test::captureError([&] { loadModel({bad}); });
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel);
  EXPECT_NE(std::string(error.what()).find(fmt::format("payload checksum mismatch over bytes {}..{} (stored {:#018x}, computed {:#018x})",
                                                       blob.payloadOffset, blob.payloadOffset + blob.payloadSize, real + 1, real)),
            std::string::npos)
      << error.what();
  EXPECT_TRUE(loadModel({path})->executable().kept().valid());  // the good file still finds it
}

// The same executable bytes in a blob named otherwise (another descriptor):
// another seal, so the blob is checksummed, and the executable is still
// the kept one (hwsim compares the bytes when deserializing).
TEST(KeptExecutableRead, AnotherDescriptorIsCheckedAgain) {
  test::TempDir dir;
  const std::string path = dir.file("one.popef"), other = dir.file("two.popef");
  test::writeModelFile(*uniqueModel("one"), path);
  test::writeModelFile(*uniqueModel("two"), other);
  const hwsim::Executable executable = readExecutable(*loadModel({path}));
  const auto renamed = loadModel({other});
  EXPECT_FALSE(renamed->executable().kept().valid());
  EXPECT_EQ(&readExecutable(*renamed).data(), &executable.data());
  EXPECT_TRUE(loadModel({other})->executable().kept().valid());  // kept under its own seal now
}

}  // namespace
}  // namespace mrt::popef
