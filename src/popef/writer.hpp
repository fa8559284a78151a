// popef::Writer: writes blobs to one PopEF file. A model can be written whole
// (writeModel) or blob by blob, spread over several Writers/files, and blobs
// of several models can share one file (each names its executable).
//
//   popef::Writer writer("model.popef");
//   writer.writeModel(model);
//   writer.close();   // reports write errors; the destructor only closes
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "popef/blob_type.hpp"
#include "popef/blobs.hpp"
#include "popef/metadata.hpp"

namespace mrt::popef {

class Model;

class Writer {
 public:
  // Creates or truncates `path`. Throws mrt::Error (NotFound if the
  // directory does not exist, InvalidArgument if it cannot be created).
  explicit Writer(std::string path);
  ~Writer();
  Writer(const Writer &) = delete;
  Writer &operator=(const Writer &) = delete;

  // Each returns where the blob went. Throws mrt::Error(ResourceExhausted)
  // if the disk is full, InvalidArgument for an unencodable blob.
  BlobLocation writeMetadata(const Metadata &metadata);
  BlobLocation writeExecutable(std::string_view name, std::span<const std::byte> bytes);
  BlobLocation writeTensorData(std::string_view executable, const TensorData &data);
  BlobLocation writeFeedData(std::string_view executable, const FeedData &feed);
  BlobLocation writeOpaque(std::string_view executable, const OpaqueBlob &blob);
  // Metadata, Executable, then every TensorData, FeedData and Opaque blob.
  void writeModel(const Model &model);

  // Flushes and closes; throws on a write error. Idempotent.
  void close();

  const std::string &path() const noexcept { return path_; }
  std::uint64_t bytesWritten() const noexcept { return offset_; }

 private:
  BlobLocation writeBlob(BlobType type, std::span<const std::byte> descriptor,
                         std::span<const std::byte> data);
  void writeAll(std::span<const std::byte> bytes);

  std::string path_;
  int fd_ = -1;
  std::uint64_t offset_ = 0;
  std::size_t blobCount_ = 0;
};

}  // namespace mrt::popef
