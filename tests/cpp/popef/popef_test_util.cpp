#include "popef_test_util.hpp"

#include <cstring>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <cstring>
#include <unistd.h>

#include "popef/format.hpp"
#include "popef/writer.hpp"

namespace mrt::popef::test {

TempDir::TempDir(const std::filesystem::path &base) {
  const std::filesystem::path parent = base.empty() ? std::filesystem::temp_directory_path() : base;
  std::string pattern = (parent / "mrt-popef-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path memoryBackedTempBase() {
  const std::filesystem::path shm = "/dev/shm";
  std::error_code error;
  if (std::filesystem::is_directory(shm, error) && ::access(shm.c_str(), W_OK) == 0) return shm;
  return std::filesystem::temp_directory_path();
}

std::vector<std::byte> randomBytes(std::size_t size, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<std::byte> bytes(size);
  for (std::byte &b : bytes) b = static_cast<std::byte>(generator() & 0xff);
  return bytes;
}

ModelParts sampleParts(const std::string &executable, std::uint64_t seed) {
  ModelParts parts;
  Metadata &m = parts.metadata;
  m.setExecutable(executable);
  m.setReplicationFactor(2);
  m.setNumIpus(2);
  m.setIpuVersion(Metadata::kIpu21);
  m.setIsInference(false);
  m.setEngineOptions({{"debug.instrument", "true"}, {"target.workerThreads", "4"}});
  m.setDeviceOptions({{"ipuLinkDomainSize", "4"}});
  m.setSeedHandle("seed");
  m.setPackageHash("hwsim-0.1.0-" + executable);
  m.setProgramFlow(ProgramFlow({0}, {1, 2}, {3},
                               {{0, "load"}, {1, "main"}, {2, "main_tail"}, {3, "save"}}));
  using T = TensorType;
  m.setAnchors({
      Anchor("x", "h2d_x", TensorInfo(DataType::F32, {2, 16}), {1}, T::INPUT, true),
      Anchor("w", "h2d_w", TensorInfo(DataType::F16, {16, 4}), {0}, T::INPUT, false,
             DataSource::TensorData),
      Anchor("feed", "h2d_feed", TensorInfo(DataType::S32, {3}), {1}, T::INPUT, false,
             DataSource::FeedData),
      Anchor("rb", "h2d_rb", TensorInfo(DataType::U8, {8}), {0}, T::INPUT, false,
             DataSource::TensorData, RemoteBufferInfo{"rb_buf", 2}),
      Anchor("y", "d2h_y", TensorInfo(DataType::F32, {2, 4}), {1, 2}, T::OUTPUT, true),
      Anchor("state", "d2h_state", TensorInfo(DataType::F64, {4}), {3}, T::OUTPUT),
      Anchor("seed", "seed", TensorInfo(DataType::U64, {2}), {0}, T::INPUT),
  });
  parts.executable = ExecutableBlob(executable, SharedBytes::fromVector(randomBytes(1000, seed)));
  parts.tensorData.emplace_back("w", TensorInfo(DataType::F16, {16, 4}),
                                SharedBytes::fromVector(randomBytes(128, seed + 1)));
  parts.tensorData.emplace_back("rb", TensorInfo(DataType::U8, {8}),
                                SharedBytes::fromVector(randomBytes(8, seed + 2)));
  parts.feedData.emplace_back("feed", TensorInfo(DataType::S32, {3}), 5,
                              SharedBytes::fromVector(randomBytes(60, seed + 3)));
  const std::string text = "framework description of " + executable;
  std::vector<std::byte> opaque(text.size());
  std::memcpy(opaque.data(), text.data(), text.size());
  parts.opaqueBlobs.emplace_back("framework", SharedBytes::fromVector(std::move(opaque)));
  return parts;
}

std::shared_ptr<Model> sampleModel(const std::string &executable, std::uint64_t seed) {
  return std::make_shared<Model>(sampleParts(executable, seed));
}

void writeModelFile(const Model &model, const std::string &path) {
  Writer writer(path);
  writer.writeModel(model);
  writer.close();
}

std::vector<std::byte> readBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> bytes(chars.size());
  std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

void writeBytes(const std::string &path, const std::vector<std::byte> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<BlobSpan> blobSpans(const std::vector<std::byte> &bytes) {
  namespace offset = format::header_offset;
  std::vector<BlobSpan> spans;
  std::uint64_t at = 0;
  const std::span<const std::byte> all(bytes);
  while (at + format::kHeaderSize <= bytes.size()) {
    const auto header = all.subspan(at, format::kHeaderSize);
    const auto size = format::load<std::uint64_t>(header, offset::kPayloadSize);
    if (size > bytes.size() - at - format::kHeaderSize) break;
    spans.push_back({at, at + format::kHeaderSize, size,
                     format::load<std::uint32_t>(header, offset::kType)});
    at = format::alignUp(at + format::kHeaderSize + size);
  }
  return spans;
}

void resealChecksums(std::vector<std::byte> &bytes) {
  namespace offset = format::header_offset;
  const std::span<std::byte> all(bytes);
  for (const BlobSpan &blob : blobSpans(bytes)) {
    const auto header = all.subspan(blob.offset, format::kHeaderSize);
    format::store<std::uint64_t>(header, offset::kPayloadChecksum,
                                 format::checksum(all.subspan(blob.payloadOffset, blob.payloadSize)));
    format::store<std::uint64_t>(header, offset::kHeaderChecksum,
                                 format::checksum(header.first(format::kHeaderHashedBytes)));
  }
}

bool sameBytes(std::span<const std::byte> a, std::span<const std::byte> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
}

// Every field and every byte of two models, blob origins aside.
void expectSameModel(const Model &actual, const Model &expected) {
  // Field by field first, so a failure says which field differs.
  const Metadata &a = actual.metadata;
  const Metadata &e = expected.metadata;
  EXPECT_EQ(a.executable(), e.executable());
  EXPECT_EQ(a.replicationFactor(), e.replicationFactor());
  EXPECT_EQ(a.numIpus(), e.numIpus());
  EXPECT_EQ(a.ipuVersion(), e.ipuVersion());
  EXPECT_EQ(a.isInference(), e.isInference());
  EXPECT_EQ(a.engineOptions(), e.engineOptions());
  EXPECT_EQ(a.deviceOptions(), e.deviceOptions());
  EXPECT_EQ(a.seedHandle(), e.seedHandle());
  EXPECT_EQ(a.packageHash(), e.packageHash());
  EXPECT_EQ(a.programFlow().load(), e.programFlow().load());
  EXPECT_EQ(a.programFlow().main(), e.programFlow().main());
  EXPECT_EQ(a.programFlow().save(), e.programFlow().save());
  EXPECT_EQ(a.programFlow().programsMap(), e.programFlow().programsMap());
  ASSERT_EQ(a.anchors().size(), e.anchors().size());
  for (std::size_t i = 0; i < a.anchors().size(); ++i) {
    const Anchor &x = a.anchors()[i];
    const Anchor &y = e.anchors()[i];
    EXPECT_EQ(x.name(), y.name());
    EXPECT_EQ(x.handle(), y.handle());
    EXPECT_EQ(x.tensorInfo(), y.tensorInfo()) << x.name();
    EXPECT_EQ(x.programs(), y.programs()) << x.name();
    EXPECT_EQ(x.isPerReplica(), y.isPerReplica()) << x.name();
    EXPECT_EQ(x.type(), y.type()) << x.name();
    EXPECT_EQ(x.dataSource(), y.dataSource()) << x.name();
    EXPECT_EQ(x.remoteBuffer(), y.remoteBuffer()) << x.name();
  }
  EXPECT_EQ(a, e);  // and whatever a future field adds

  EXPECT_EQ(actual.executable().name(), expected.executable().name());
  EXPECT_TRUE(sameBytes(actual.executable().bytes(), expected.executable().bytes()));
  ASSERT_EQ(actual.tensorDataList().size(), expected.tensorDataList().size());
  for (const TensorData &want : expected.tensorDataList()) {
    const TensorData *got = actual.findTensorData(want.name());
    ASSERT_NE(got, nullptr) << want.name();
    EXPECT_EQ(got->tensorInfo(), want.tensorInfo());
    EXPECT_TRUE(sameBytes(got->bytes(), want.bytes())) << want.name();
  }
  ASSERT_EQ(actual.feedDataList().size(), expected.feedDataList().size());
  for (const FeedData &want : expected.feedDataList()) {
    const FeedData *got = actual.findFeedData(want.name());
    ASSERT_NE(got, nullptr) << want.name();
    EXPECT_EQ(got->tensorInfo(), want.tensorInfo());
    EXPECT_EQ(got->numTensors(), want.numTensors());
    EXPECT_TRUE(sameBytes(got->bytes(), want.bytes())) << want.name();
  }
  ASSERT_EQ(actual.opaqueBlobs().size(), expected.opaqueBlobs().size());
  for (const OpaqueBlob &want : expected.opaqueBlobs()) {
    const OpaqueBlob *got = actual.findOpaque(want.name());
    ASSERT_NE(got, nullptr) << want.name();
    EXPECT_TRUE(sameBytes(got->bytes(), want.bytes())) << want.name();
  }
}

mrt::Error captureError(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const mrt::Error &error) {
    return error;
  } catch (const std::exception &other) {
    ADD_FAILURE() << "expected mrt::Error, got " << typeid(other).name() << ": " << other.what();
    return mrt::Error(ErrorCode::Internal, "unexpected exception");
  }
  ADD_FAILURE() << "expected mrt::Error, nothing was thrown";
  return mrt::Error(ErrorCode::Ok, "nothing thrown");
}

}  // namespace mrt::popef::test
