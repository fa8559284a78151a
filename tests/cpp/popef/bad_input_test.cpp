// Every kind of bad input gives mrt::Error with CorruptModel (NotFound for a
// missing file) and a message naming the file, the blob and the byte offset.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "popef/format.hpp"
#include "popef/reader.hpp"
#include "popef/writer.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef {
namespace {

using test::blobSpans;
using test::captureError;
using test::readBytes;
using test::resealChecksums;
using test::sampleModel;
using test::writeBytes;
namespace offset = format::header_offset;

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.file("bad.popef");
    test::writeModelFile(*sampleModel(), dir_.file("good.popef"));
    good_ = readBytes(dir_.file("good.popef"));
    spans_ = blobSpans(good_);
    ASSERT_EQ(spans_.size(), 6u);  // Metadata, Executable, 2 TensorData, FeedData, Opaque
  }

  // Writes `bytes` to the test file and returns the error loading it gives.
  Error loadError(const std::vector<std::byte> &bytes) {
    writeBytes(path_, bytes);
    return captureError([&] { loadModel({path_}); });
  }

  void expectCorrupt(const Error &error, const std::string &expected) {
    EXPECT_EQ(error.code(), ErrorCode::CorruptModel) << error.what();
    EXPECT_EQ(std::string(error.what()), "'" + path_ + "' " + expected);
  }

  template <typename T>
  void setHeaderField(std::vector<std::byte> &bytes, std::size_t blob, std::size_t field, T value) {
    format::store<T>(std::span(bytes).subspan(spans_[blob].offset), field, value);
  }

  test::TempDir dir_;
  std::string path_;
  std::vector<std::byte> good_;
  std::vector<test::BlobSpan> spans_;
};

TEST_F(BadInputTest, MissingFileIsNotFound) {
  const std::string missing = dir_.file("missing.popef");
  const Error error = captureError([&] { loadModel({missing}); });
  EXPECT_EQ(error.code(), ErrorCode::NotFound);
  EXPECT_EQ(std::string(error.what()), "'" + missing + "': no such PopEF file");
  EXPECT_EQ(captureError([&] { loadModel({dir_.file("no/such/dir.popef")}); }).code(),
            ErrorCode::NotFound);
}

TEST_F(BadInputTest, DirectoryIsRefused) {
  const std::string directory = dir_.path().string();
  const Error error = captureError([&] { loadModel({directory}); });
  EXPECT_EQ(error.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(std::string(error.what()), "'" + directory + "': is a directory, not a PopEF file");
}

TEST_F(BadInputTest, EmptyFile) {
  const Error error = loadError({});
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel);
  EXPECT_EQ(std::string(error.what()),
            "'" + path_ + "': empty file, expected at least one blob at byte 0");
}

TEST_F(BadInputTest, TruncatedInsideAHeader) {
  std::vector<std::byte> bytes = good_;
  bytes.resize(spans_[2].offset + 10);
  expectCorrupt(loadError(bytes),
                fmt::format("blob 2 at byte {}: truncated file, the blob header needs 64 bytes "
                            "but only 10 are left",
                            spans_[2].offset));
}

TEST_F(BadInputTest, TruncatedInsideAPayload) {
  std::vector<std::byte> bytes = good_;
  bytes.resize(spans_[1].payloadOffset + 100);
  expectCorrupt(loadError(bytes),
                fmt::format("blob 1 (Executable) at byte {}: payload of {} bytes at byte {} runs "
                            "past the end of the file ({} bytes, truncated?)",
                            spans_[1].offset, spans_[1].payloadSize, spans_[1].payloadOffset,
                            bytes.size()));
}

TEST_F(BadInputTest, TruncatedInsideThePadding) {
  // The last blob's payload ends before a 64-byte boundary; cut the padding.
  const test::BlobSpan &last = spans_.back();
  const std::uint64_t payloadEnd = last.payloadOffset + last.payloadSize;
  ASSERT_NE(payloadEnd % 64, 0u);
  std::vector<std::byte> bytes = good_;
  bytes.resize(payloadEnd + 1);
  expectCorrupt(loadError(bytes),
                fmt::format("blob 5 (Opaque) at byte {}: truncated file, padding after the "
                            "payload needs bytes {}..{} but the file has {}",
                            last.offset, payloadEnd, format::alignUp(payloadEnd), bytes.size()));
}

TEST_F(BadInputTest, WrongMagic) {
  std::vector<std::byte> bytes = good_;
  bytes[0] = std::byte{'X'};
  expectCorrupt(loadError(bytes),
                "blob 0 at byte 0: wrong magic 'XRTPOPEF' (expected 'MRTPOPEF'), not a PopEF file");
  bytes = good_;
  bytes[spans_[3].offset + 7] = std::byte{0};
  expectCorrupt(loadError(bytes), fmt::format("blob 3 at byte {}: wrong magic 'MRTPOPE?' "
                                              "(expected 'MRTPOPEF')",
                                              spans_[3].offset));
}

TEST_F(BadInputTest, UnknownFormatVersion) {
  std::vector<std::byte> bytes = good_;
  setHeaderField<std::uint32_t>(bytes, 4, offset::kVersion, 2);
  expectCorrupt(loadError(bytes),
                fmt::format("blob 4 at byte {}: unknown format version 2 at byte {} (this reader "
                            "knows version 1)",
                            spans_[4].offset, spans_[4].offset + 8));
}

TEST_F(BadInputTest, HeaderChecksumMismatch) {
  std::vector<std::byte> bytes = good_;
  setHeaderField<std::uint32_t>(bytes, 2, offset::kType, 5);  // TensorData -> Opaque
  const Error error = loadError(bytes);
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel);
  EXPECT_TRUE(std::string(error.what()).starts_with(fmt::format(
      "'{}' blob 2 at byte {}: header checksum mismatch (stored 0x", path_, spans_[2].offset)))
      << error.what();
}

TEST_F(BadInputTest, PayloadChecksumMismatch) {
  std::vector<std::byte> bytes = good_;
  const test::BlobSpan &weights = spans_[2];
  bytes[weights.payloadOffset + weights.payloadSize - 1] ^= std::byte{0x01};
  const Error error = loadError(bytes);
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel);
  EXPECT_TRUE(std::string(error.what()).starts_with(fmt::format(
      "'{}' blob 2 (TensorData) at byte {}: payload checksum mismatch over bytes {}..{} (stored 0x",
      path_, weights.offset, weights.payloadOffset, weights.payloadOffset + weights.payloadSize)))
      << error.what();
}

TEST_F(BadInputTest, PayloadSizePastTheEndOfTheFile) {
  std::vector<std::byte> bytes = good_;
  setHeaderField<std::uint64_t>(bytes, 5, offset::kPayloadSize, ~std::uint64_t{0} - 10);
  resealChecksums(bytes);  // only the header checksum can be fixed: the payload is "huge"
  const std::uint64_t headerAt = spans_[5].offset;
  // The test helper cannot walk a blob that does not fit; seal its header by hand.
  const std::span<std::byte> header = std::span(bytes).subspan(headerAt, format::kHeaderSize);
  format::store<std::uint64_t>(header, offset::kHeaderChecksum,
                               format::checksum(header.first(format::kHeaderHashedBytes)));
  expectCorrupt(loadError(bytes),
                fmt::format("blob 5 (Opaque) at byte {}: payload of {} bytes at byte {} runs past "
                            "the end of the file ({} bytes, truncated?)",
                            headerAt, ~std::uint64_t{0} - 10, headerAt + 64, bytes.size()));
}

TEST_F(BadInputTest, DescriptorSizePastThePayload) {
  std::vector<std::byte> bytes = good_;
  const test::BlobSpan &feed = spans_[4];
  // A descriptor claimed 1 MiB long: its data offset no longer fits.
  const std::span<std::byte> payload = std::span(bytes).subspan(feed.payloadOffset, feed.payloadSize);
  format::store<std::uint32_t>(payload, 0, 1u << 20);
  format::store<std::uint64_t>(payload, 8, format::dataOffsetFor(1u << 20));
  resealChecksums(bytes);
  expectCorrupt(loadError(bytes),
                fmt::format("blob 4 (FeedData) at byte {}: data offset {} at byte {} runs past the "
                            "end of the {}-byte payload",
                            feed.offset, format::dataOffsetFor(1u << 20), feed.payloadOffset + 8,
                            feed.payloadSize));
}

TEST_F(BadInputTest, NonZeroPaddingAndReservedBytes) {
  std::vector<std::byte> bytes = good_;
  const test::BlobSpan &last = spans_.back();
  const std::uint64_t payloadEnd = last.payloadOffset + last.payloadSize;
  bytes[payloadEnd] = std::byte{7};
  expectCorrupt(loadError(bytes),
                fmt::format("blob 5 (Opaque) at byte {}: padding bytes {}..{} after the payload "
                            "are not zero",
                            last.offset, payloadEnd, format::alignUp(payloadEnd)));
  bytes = good_;
  bytes[spans_[1].offset + 50] = std::byte{1};
  expectCorrupt(loadError(bytes),
                fmt::format("blob 1 at byte {}: reserved header bytes {}..{} are not zero",
                            spans_[1].offset, spans_[1].offset + 40, spans_[1].offset + 64));
}

TEST_F(BadInputTest, UnknownBlobType) {
  std::vector<std::byte> bytes = good_;
  setHeaderField<std::uint32_t>(bytes, 3, offset::kType, 9);
  resealChecksums(bytes);
  expectCorrupt(loadError(bytes),
                fmt::format("blob 3 at byte {}: unknown blob type 9", spans_[3].offset));
}

TEST_F(BadInputTest, DescriptorOfAnotherBlobType) {
  // A TensorData descriptor presented as a FeedData blob.
  std::vector<std::byte> bytes = good_;
  setHeaderField<std::uint32_t>(bytes, 2, offset::kType,
                                static_cast<std::uint32_t>(BlobType::FeedData));
  resealChecksums(bytes);
  expectCorrupt(loadError(bytes),
                fmt::format("blob 2 (FeedData) at byte {}: descriptor at byte {} does not carry "
                            "the FeedData identifier 'MRTF'",
                            spans_[2].offset, spans_[2].payloadOffset + 16));
}

TEST_F(BadInputTest, UnverifiableFlatBuffer) {
  std::vector<std::byte> bytes = good_;
  const test::BlobSpan &meta = spans_[0];
  const std::uint64_t descriptorAt = meta.payloadOffset + 16;
  const auto descriptorSize = format::load<std::uint32_t>(std::span(bytes), meta.payloadOffset);
  // Point the root table outside the buffer; identifier and checksums stay valid.
  format::store<std::uint32_t>(std::span(bytes), descriptorAt, 0x7ffffff0u);
  resealChecksums(bytes);
  expectCorrupt(loadError(bytes),
                fmt::format("blob 0 (Metadata) at byte 0: descriptor FlatBuffer at byte {} ({} "
                            "bytes) fails verification",
                            descriptorAt, descriptorSize));
}

TEST_F(BadInputTest, DuplicateTensorNames) {
  const auto model = sampleModel();
  {
    Writer writer(path_);
    writer.writeModel(*model);
    writer.writeTensorData("sample", model->tensorData("w"));  // blob 6
    writer.close();
  }
  const Error error = captureError([&] { loadModel({path_}); });
  const std::uint64_t sixthAt = good_.size();
  expectCorrupt(error, fmt::format("blob 6 (TensorData) at byte {}: duplicate TensorData name 'w' "
                                   "(first in '{}' blob 2 (TensorData) at byte {})",
                                   sixthAt, path_, spans_[2].offset));
}

TEST_F(BadInputTest, DuplicateTensorNamesAcrossFiles) {
  const auto model = sampleModel();
  const std::string extra = dir_.file("extra.popef");
  {
    Writer writer(extra);
    writer.writeTensorData("sample", model->tensorData("rb"));
    writer.close();
  }
  const Error error = captureError([&] { loadModel({dir_.file("good.popef"), extra}); });
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel);
  EXPECT_EQ(std::string(error.what()),
            fmt::format("'{}' blob 0 (TensorData) at byte 0: duplicate TensorData name 'rb' (first "
                        "in '{}' blob 3 (TensorData) at byte {})",
                        extra, dir_.file("good.popef"), spans_[3].offset));
}

TEST_F(BadInputTest, MetadataNamingAMissingExecutable) {
  const auto model = sampleModel();
  {
    Writer writer(path_);
    writer.writeMetadata(model->metadata);
    for (const TensorData &data : model->tensorDataList()) writer.writeTensorData("sample", data);
    writer.close();
  }
  expectCorrupt(captureError([&] { loadModel({path_}); }),
                "blob 0 (Metadata) at byte 0: the metadata names executable 'sample', which no "
                "parsed file holds");
}

TEST_F(BadInputTest, AnchorNamingAMissingTensor) {
  const auto model = sampleModel();
  {
    Writer writer(path_);
    writer.writeMetadata(model->metadata);
    writer.writeExecutable("sample", model->executable().bytes());
    writer.writeTensorData("sample", model->tensorData("w"));
    writer.writeFeedData("sample", model->feedData("feed"));
    writer.close();  // no TensorData 'rb'
  }
  expectCorrupt(captureError([&] { loadModel({path_}); }),
                "blob 0 (Metadata) at byte 0: anchor 'rb' takes its data from TensorData 'rb', "
                "which model 'sample' does not have");
}

TEST_F(BadInputTest, TensorDataOfAnotherModelDoesNotCount) {
  const auto model = sampleModel();
  {
    Writer writer(path_);
    writer.writeMetadata(model->metadata);
    writer.writeExecutable("sample", model->executable().bytes());
    writer.writeTensorData("sample", model->tensorData("w"));
    writer.writeTensorData("other", model->tensorData("rb"));
    writer.writeFeedData("sample", model->feedData("feed"));
    writer.close();
  }
  expectCorrupt(captureError([&] { loadModel({path_}); }),
                "blob 0 (Metadata) at byte 0: anchor 'rb' takes its data from TensorData 'rb', "
                "which model 'sample' does not have");
}

TEST_F(BadInputTest, InvalidMetadataIsRefusedWhenParsed) {
  Metadata metadata = sampleModel()->metadata;
  metadata.setReplicationFactor(0);
  {
    Writer writer(path_);
    writer.writeMetadata(metadata);
    writer.close();
  }
  auto reader = std::make_shared<Reader>();
  expectCorrupt(captureError([&] { reader->parseFile(path_); }),
                "blob 0 (Metadata) at byte 0: replicationFactor must be at least 1, got 0");
  EXPECT_TRUE(reader->blobs().empty());  // nothing of a bad file is kept
}

TEST_F(BadInputTest, TensorDataOfTheWrongSize) {
  const auto model = sampleModel();
  const TensorData &w = model->tensorData("w");
  {
    Writer writer(path_);
    writer.writeModel(*model);
    writer.writeTensorData("sample", TensorData("odd", w.tensorInfo(), SharedBytes::copyOf(
                                                                           w.bytes().first(100))));
    writer.close();
  }
  expectCorrupt(captureError([&] { loadModel({path_}); }),
                fmt::format("blob 6 (TensorData) at byte {}: TensorData 'odd' holds 100 bytes but "
                            "F16[16,4] needs 128",
                            good_.size()));
}

TEST_F(BadInputTest, FailedParseLeavesTheReaderUsable) {
  auto reader = std::make_shared<Reader>();
  reader->parseFile(dir_.file("good.popef"));
  std::vector<std::byte> bytes = good_;
  bytes[spans_[2].payloadOffset] ^= std::byte{0x10};
  writeBytes(path_, bytes);
  EXPECT_EQ(captureError([&] { reader->parseFile(path_); }).code(), ErrorCode::CorruptModel);
  EXPECT_EQ(reader->blobs().size(), 6u);
  EXPECT_EQ(ModelBuilder(reader).createModel()->metadata.executable(), "sample");
}

TEST_F(BadInputTest, NoPathsAndNoModels) {
  EXPECT_EQ(captureError([] { loadModel({}); }).code(), ErrorCode::InvalidArgument);
  const auto model = sampleModel();
  {
    Writer writer(path_);
    writer.writeTensorData("sample", model->tensorData("w"));
    writer.close();
  }
  const Error error = captureError([&] { loadModel({path_}); });
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel);
  EXPECT_EQ(std::string(error.what()), "no Metadata blob in '" + path_ + "'");
}

}  // namespace
}  // namespace mrt::popef
