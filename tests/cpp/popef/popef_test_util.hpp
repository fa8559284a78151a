// Helpers shared by the PopEF tests: a temporary directory, a sample model
// that uses every feature of the format, file byte access, and re-sealing of
// checksums so tests can corrupt a field behind the checksums.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "popef/model.hpp"

namespace mrt::popef::test {

class TempDir {
 public:
  // Under `base`, or the system temporary directory if empty.
  explicit TempDir(const std::filesystem::path &base = {});
  ~TempDir();
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  std::string file(const std::string &name) const { return (path_ / name).string(); }
  const std::filesystem::path &path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// /dev/shm if this system has it (tmpfs: file writes cost no disk I/O),
// else the system temporary directory.
std::filesystem::path memoryBackedTempBase();

// Deterministic pseudo-random bytes.
std::vector<std::byte> randomBytes(std::size_t size, std::uint64_t seed);

// A model with every field set to a non-default value: replication 2 on 2
// IPU21s, options, seed handle, a load/main/save flow, seven anchors (inputs
// with and without data, TensorData, FeedData, a remote buffer, outputs),
// two TensorData, one FeedData and one Opaque blob.
ModelParts sampleParts(const std::string &executable = "sample", std::uint64_t seed = 1);
std::shared_ptr<Model> sampleModel(const std::string &executable = "sample", std::uint64_t seed = 1);

// Writes the model to a single file.
void writeModelFile(const Model &model, const std::string &path);

std::vector<std::byte> readBytes(const std::string &path);
void writeBytes(const std::string &path, const std::vector<std::byte> &bytes);

// Recomputes the payload and header checksums of every blob whose header
// is intact enough to find (walks the headers as the writer laid them out).
void resealChecksums(std::vector<std::byte> &bytes);

struct BlobSpan {
  std::uint64_t offset;         // header
  std::uint64_t payloadOffset;  // payload start
  std::uint64_t payloadSize;
  std::uint32_t type;
};
// The blobs of a well-formed file.
std::vector<BlobSpan> blobSpans(const std::vector<std::byte> &bytes);

bool sameBytes(std::span<const std::byte> a, std::span<const std::byte> b);

// Every field and every byte of two models (blob origins aside), with gtest
// expectations that name the field that differs.
void expectSameModel(const Model &actual, const Model &expected);

// Runs fn and returns the mrt::Error it threw; fails the test if it throws
// nothing or something else.
mrt::Error captureError(const std::function<void()> &fn);

}  // namespace mrt::popef::test
