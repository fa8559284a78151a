// popef::Writer: writes blobs to one PopEF file image. A model can be written
// whole (writeModel) or blob by blob, spread over several Writers/files, and
// blobs of several models can share one file (each names its executable).
//
//   popef::Writer writer("model.popef");
//   writer.writeModel(model);
//   writer.close();   // reports write errors; the destructor only closes
//
// The bytes go to a ByteSink: a file (the path constructor), a caller's
// buffer (SpanSink) or nowhere but a count (CountingSink, to size a buffer
// first). The blob encoding is the Writer's alone, so every sink gets the
// same bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "popef/blob_type.hpp"
#include "popef/blobs.hpp"
#include "popef/metadata.hpp"

namespace mrt::popef {

class Model;

// Where a Writer's bytes go, in order.
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // Appends bytes; throws mrt::Error naming name() on failure.
  virtual void write(std::span<const std::byte> bytes) = 0;
  // Finishes; throws on an error not reported yet. Idempotent.
  virtual void close() {}
  // Stands for the file in BlobLocations and messages: a path or "<memory>".
  virtual const std::string &name() const noexcept = 0;
  // True if the bytes are only counted, never read: the Writer then skips
  // computing checksums (the header keeps its size).
  virtual bool countsOnly() const noexcept { return false; }
};

// Creates or truncates a file. Throws mrt::Error (NotFound if the directory
// does not exist, InvalidArgument if it cannot be created); writes throw
// ResourceExhausted if the disk is full.
class FileSink final : public ByteSink {
 public:
  explicit FileSink(std::string path);
  ~FileSink() override;
  FileSink(const FileSink &) = delete;
  FileSink &operator=(const FileSink &) = delete;
  void write(std::span<const std::byte> bytes) override;
  void close() override;
  const std::string &name() const noexcept override { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t written_ = 0;
};

// Writes into a caller's buffer of fixed size (borrowed); more bytes than it
// holds throw InvalidArgument naming both sizes.
class SpanSink final : public ByteSink {
 public:
  explicit SpanSink(std::span<std::byte> buffer, std::string name = "<memory>")
      : buffer_(buffer), name_(std::move(name)) {}
  void write(std::span<const std::byte> bytes) override;
  const std::string &name() const noexcept override { return name_; }

 private:
  std::span<std::byte> buffer_;
  std::size_t used_ = 0;
  std::string name_;
};

// Counts the bytes a model takes without keeping them (Writer::bytesWritten).
class CountingSink final : public ByteSink {
 public:
  void write(std::span<const std::byte>) override {}
  const std::string &name() const noexcept override { return name_; }
  bool countsOnly() const noexcept override { return true; }

 private:
  std::string name_ = "<memory>";
};

class Writer {
 public:
  // Writes to a FileSink of `path` (which says what it throws).
  explicit Writer(std::string path);
  explicit Writer(std::unique_ptr<ByteSink> sink);
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
  // The two halves of writeModel, for a model split over two files (the
  // program in one, its data in another): Metadata and Executable ...
  void writeModelHead(const Model &model);
  // ... and the TensorData, FeedData and Opaque blobs (a model may have none).
  void writeModelData(const Model &model);

  // Flushes and closes; throws on a write error. Idempotent.
  void close();

  const std::string &path() const noexcept { return sink_->name(); }
  std::uint64_t bytesWritten() const noexcept { return offset_; }

 private:
  BlobLocation writeBlob(BlobType type, std::span<const std::byte> descriptor,
                         std::span<const std::byte> data);
  void writeAll(std::span<const std::byte> bytes);

  std::unique_ptr<ByteSink> sink_;
  bool closed_ = false;
  std::uint64_t offset_ = 0;
  std::size_t blobCount_ = 0;
};

// The size of `model` as one PopEF file (writeModel into a CountingSink).
std::uint64_t modelFileSize(const Model &model);
// The bytes of `model` as one PopEF file, encoded straight into one
// allocation of modelFileSize() bytes.
std::vector<std::byte> modelFileBytes(const Model &model);

}  // namespace mrt::popef
