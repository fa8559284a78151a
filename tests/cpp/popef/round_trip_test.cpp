// Write a model, read it back, compare every field and every byte; models
// split over files, several models in one file, and the lifetime of the
// TensorData held in memory (files read, or mapped when large).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "popef/mapped_file.hpp"
#include "popef/reader.hpp"
#include "popef/writer.hpp"
#include "popef_test_util.hpp"

namespace mrt::popef {
namespace {

using test::captureError;
using test::expectSameModel;
using test::sameBytes;
using test::sampleModel;
using test::TempDir;
using test::writeModelFile;

bool isAligned(const void *pointer, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(pointer) % alignment == 0;
}

// True if `pointer` lies in a region of this process mapped from `path`
// (read from /proc/self/maps), i.e. the bytes were not copied out.
bool isMappedFrom(const void *pointer, const std::string &path) {
  std::ifstream maps("/proc/self/maps");
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  for (std::string line; std::getline(maps, line);) {
    if (line.find(path) == std::string::npos) continue;
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::istringstream(line) >> std::hex >> begin >> dash >> end;
    if (address >= begin && address < end) return true;
  }
  return false;
}

bool anyMappingOf(const std::string &path) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(path) != std::string::npos) return true;
  }
  return false;
}

TEST(RoundTripTest, EveryFieldAndByteSurvives) {
  TempDir dir;
  const auto original = sampleModel();
  const std::string path = dir.file("sample.popef");
  writeModelFile(*original, path);
  const auto loaded = loadModel({path});
  expectSameModel(*loaded, *original);
  EXPECT_NO_THROW(loaded->verify());

  // Blob order of writeModel: Metadata, Executable, TensorData w, rb,
  // FeedData, Opaque; every blob starts 64-aligned.
  ASSERT_TRUE(loaded->metadataOrigin().has_value());
  EXPECT_EQ(loaded->metadataOrigin()->describe(), "'" + path + "' blob 0 (Metadata) at byte 0");
  ASSERT_TRUE(loaded->executable().origin().has_value());
  EXPECT_EQ(loaded->executable().origin()->index, 1u);
  EXPECT_EQ(loaded->tensorData("rb").origin()->index, 3u);
  EXPECT_EQ(loaded->opaqueBlobs()[0].origin()->index, 5u);
  for (const TensorData &data : loaded->tensorDataList()) {
    EXPECT_EQ(data.origin()->offset % 64, 0u);
    EXPECT_TRUE(isAligned(data.data(), 64)) << data.name();
  }
  EXPECT_TRUE(isAligned(loaded->feedData("feed").bytes().data(), 64));
  EXPECT_TRUE(isAligned(loaded->executable().bytes().data(), 64));
}

TEST(RoundTripTest, FileSizeIsWhatTheWriterCountedAndAMultipleOf64) {
  TempDir dir;
  const std::string path = dir.file("sample.popef");
  Writer writer(path);
  writer.writeModel(*sampleModel());
  writer.close();
  EXPECT_EQ(writer.bytesWritten() % 64, 0u);
  EXPECT_EQ(std::filesystem::file_size(path), writer.bytesWritten());
}

TEST(RoundTripTest, MinimalModelKeepsDefaults) {
  TempDir dir;
  ModelParts parts;
  parts.metadata.setExecutable("tiny");
  parts.executable = ExecutableBlob("tiny", SharedBytes::fromVector(test::randomBytes(1, 3)));
  const Model original(std::move(parts));
  writeModelFile(original, dir.file("tiny.popef"));
  const auto loaded = loadModel({dir.file("tiny.popef")});
  expectSameModel(*loaded, original);
  EXPECT_EQ(loaded->metadata.replicationFactor(), 1u);
  EXPECT_EQ(loaded->metadata.ipuVersion(), 2u);
  EXPECT_TRUE(loaded->metadata.isInference());
  EXPECT_TRUE(loaded->metadata.anchors().empty());
  EXPECT_FALSE(loaded->metadata.batchingDim().has_value());
}

// The batching dimension a compiler records (0 included) survives; none
// recorded reads back as none (MinimalModelKeepsDefaults).
TEST(RoundTripTest, BatchingDimSurvives) {
  TempDir dir;
  for (const std::uint32_t dim : {0u, 3u}) {
    ModelParts parts;
    parts.metadata.setExecutable("tiny");
    parts.metadata.setBatchingDim(dim);
    parts.executable = ExecutableBlob("tiny", SharedBytes::fromVector(test::randomBytes(1, 3)));
    const Model original(std::move(parts));
    writeModelFile(original, dir.file("tiny.popef"));
    const auto loaded = loadModel({dir.file("tiny.popef")});
    EXPECT_EQ(loaded->metadata.batchingDim(), std::optional<std::uint32_t>(dim));
  }
}

TEST(RoundTripTest, NamesWithUnusualBytesSurvive) {
  TempDir dir;
  ModelParts parts = test::sampleParts("m\xc3\xa9t\xc3\xa9o");
  std::vector<Anchor> anchors = parts.metadata.anchors();
  anchors[0].setName(std::string("x\0y", 3));  // embedded NUL
  anchors[0].setHandle("h2d \"x\" \xe2\x9c\x93");
  parts.metadata.setAnchors(anchors);
  parts.metadata.setEngineOptions({{"", "empty key"}, {"k", std::string(300, 'v')}});
  const Model original(std::move(parts));
  writeModelFile(original, dir.file("names.popef"));
  expectSameModel(*loadModel({dir.file("names.popef")}), original);
}

TEST(RoundTripTest, LargeTensorIsReadInPlace) {
  TempDir dir;
  ModelParts parts = test::sampleParts();
  std::vector<Anchor> anchors = parts.metadata.anchors();
  anchors.emplace_back("big", "h2d_big", TensorInfo(DataType::F32, {1024, 1024}),
                       std::vector<ProgramFlow::ProgramIndexType>{0}, TensorType::INPUT, false,
                       DataSource::TensorData);
  parts.metadata.setAnchors(anchors);
  parts.tensorData.emplace_back("big", TensorInfo(DataType::F32, {1024, 1024}),
                                SharedBytes::fromVector(test::randomBytes(4u << 20, 77)));
  const Model original(std::move(parts));
  const std::string path = dir.file("big.popef");
  writeModelFile(original, path);
  const auto loaded = loadModel({path});
  expectSameModel(*loaded, original);
  EXPECT_TRUE(isMappedFrom(loaded->tensorData("big").data(), path));
}

TEST(MappedDataTest, PointersStayValidWhileTheModelLives) {
  TempDir dir;
  const auto original = sampleModel();
  const std::string path = dir.file("read.popef");
  writeModelFile(*original, path);

  std::shared_ptr<Model> loaded;
  {
    auto reader = std::make_shared<Reader>();
    reader->parseFile(path);
    loaded = ModelBuilder(reader).createModel();
  }  // the reader and builder are gone; the model alone holds the file's image
  const std::byte *weights = loaded->tensorData("w").data();
  // A small file is read into memory, not mapped (MappedFile::kReadUpTo).
  EXPECT_FALSE(anyMappingOf(path));

  // With the file unlinked, the bytes remain.
  std::filesystem::remove(path);
  EXPECT_TRUE(sameBytes({weights, 128}, original->tensorData("w").bytes()));

  // A copy of one TensorData keeps the image after the model is gone.
  const TensorData copy = loaded->tensorData("w");
  loaded.reset();
  EXPECT_EQ(copy.data(), weights);
  EXPECT_TRUE(sameBytes(copy.bytes(), original->tensorData("w").bytes()));
}

// Files above MappedFile::kReadUpTo are mapped (here any file, with a
// limit of 0): the bytes are the file's pages, not a copy, and the mapping
// lives as long as the last piece cut from it.
TEST(MappedDataTest, ALargeFileIsMappedUntilItsLastHolderGoes) {
  TempDir dir;
  const auto original = sampleModel();
  const std::string path = dir.file("mapped.popef");
  writeModelFile(*original, path);
  auto file = MappedFile::open(path, 0);
  ASSERT_GT(file->bytes().size(), 64u);
  EXPECT_TRUE(isMappedFrom(file->bytes().data(), path));
  EXPECT_TRUE(sameBytes(file->bytes(), test::readBytes(path)));
  {
    const SharedBytes piece(file, file->bytes().subspan(8, 56));
    std::filesystem::remove(path);
    file.reset();
    EXPECT_TRUE(anyMappingOf(path));  // the piece holds it
    EXPECT_TRUE(isMappedFrom(piece.data(), path));
  }
  EXPECT_FALSE(anyMappingOf(path));  // released with its last holder
}

TEST(SplitModelTest, ModelSpreadOverTwoFiles) {
  TempDir dir;
  const auto original = sampleModel();
  const std::string &name = original->metadata.executable();
  const std::string graphPath = dir.file("graph.popef");
  const std::string weightsPath = dir.file("weights.popef");
  {
    Writer graph(graphPath);
    graph.writeMetadata(original->metadata);
    graph.writeExecutable(name, original->executable().bytes());
    graph.close();
    Writer weights(weightsPath);
    for (const TensorData &data : original->tensorDataList()) weights.writeTensorData(name, data);
    for (const FeedData &feed : original->feedDataList()) weights.writeFeedData(name, feed);
    for (const OpaqueBlob &blob : original->opaqueBlobs()) weights.writeOpaque(name, blob);
    weights.close();
  }
  for (const auto &paths : {std::vector{graphPath, weightsPath}, std::vector{weightsPath, graphPath}}) {
    const auto loaded = loadModel(paths);
    expectSameModel(*loaded, *original);
    EXPECT_EQ(loaded->metadataOrigin()->file, graphPath);
    EXPECT_EQ(loaded->tensorData("w").origin()->file, weightsPath);
    EXPECT_EQ(loaded->tensorData("w").origin()->index, 0u);
    EXPECT_EQ(loaded->tensorData("rb").origin()->file, weightsPath);
    EXPECT_EQ(loaded->executable().origin()->file, graphPath);
  }
  // Without the weights file the model is incomplete.
  const Error error = captureError([&] { loadModel({graphPath}); });
  EXPECT_EQ(error.code(), ErrorCode::CorruptModel);
  EXPECT_EQ(std::string(error.what()),
            "'" + graphPath + "' blob 0 (Metadata) at byte 0: anchor 'w' takes its data from "
            "TensorData 'w', which model 'sample' does not have");
}

TEST(MultiModelTest, TwoModelsInOneFilePickedByExecutableName) {
  TempDir dir;
  const auto alpha = sampleModel("alpha", 100);
  const auto beta = sampleModel("beta", 200);  // same tensor names, other bytes
  const std::string path = dir.file("two.popef");
  {
    Writer writer(path);
    writer.writeModel(*alpha);
    writer.writeModel(*beta);
    writer.close();
  }
  auto reader = std::make_shared<Reader>();
  reader->parseFile(path);
  EXPECT_EQ(reader->modelNames(), (std::vector<std::string>{"alpha", "beta"}));
  EXPECT_EQ(reader->blobs().size(), 12u);
  const ModelBuilder builder(reader);
  expectSameModel(*builder.createModel("alpha"), *alpha);
  expectSameModel(*builder.createModel("beta"), *beta);
  EXPECT_FALSE(sameBytes(builder.createModel("alpha")->tensorData("w").bytes(),
                         builder.createModel("beta")->tensorData("w").bytes()));
  EXPECT_EQ(builder.createModel("beta")->tensorData("w").origin()->index, 8u);

  const Error ambiguous = captureError([&] { builder.createModel(); });
  EXPECT_EQ(ambiguous.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(std::string(ambiguous.what()),
            "'" + path + "' hold 2 models ('alpha', 'beta'); pick one by executable name");
  const Error unknown = captureError([&] { loadModel({path}, "gamma"); });
  EXPECT_EQ(unknown.code(), ErrorCode::NotFound);
  EXPECT_EQ(std::string(unknown.what()),
            "no Metadata for executable 'gamma' in '" + path + "' (models: 'alpha', 'beta')");
}

TEST(MultiModelTest, ReaderCollectsBlobsOfEveryFileWithTheirLocations) {
  TempDir dir;
  writeModelFile(*sampleModel("one"), dir.file("one.popef"));
  writeModelFile(*sampleModel("two"), dir.file("two.popef"));
  auto reader = std::make_shared<Reader>();
  reader->parseFile(dir.file("one.popef"));
  reader->parseFile(dir.file("two.popef"));
  ASSERT_EQ(reader->blobs().size(), 12u);
  const ParsedBlob &tensor = reader->blobs()[8];
  EXPECT_EQ(tensor.location.file, dir.file("two.popef"));
  EXPECT_EQ(tensor.location.type, BlobType::TensorData);
  EXPECT_EQ(tensor.executable, "two");
  EXPECT_EQ(tensor.name, "w");
  EXPECT_EQ(tensor.tensorInfo, TensorInfo(DataType::F16, {16, 4}));
  EXPECT_EQ(ModelBuilder(reader).createModel("two")->metadata.packageHash(), "hwsim-0.1.0-two");
}

}  // namespace
}  // namespace mrt::popef
