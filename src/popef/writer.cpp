#include "popef/writer.hpp"

#include <array>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <unistd.h>

#include "common/error.hpp"
#include "popef/descriptor_codec.hpp"
#include "popef/format.hpp"
#include "popef/model.hpp"
#include "popef/payload.hpp"

namespace mrt::popef {

FileSink::FileSink(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const int error = errno;
    throw Error(error == ENOENT ? ErrorCode::NotFound : ErrorCode::InvalidArgument,
                "'{}': cannot create PopEF file: {}", path_, std::strerror(error));
  }
}

FileSink::~FileSink() {
  if (fd_ >= 0) ::close(fd_);
}

void FileSink::close() {
  if (fd_ < 0) return;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    throw Error(ErrorCode::ResourceExhausted, "'{}': closing after {} bytes failed: {}", path_,
                written_, std::strerror(errno));
  }
}

void FileSink::write(std::span<const std::byte> bytes) {
  if (fd_ < 0) throw Error(ErrorCode::FailedPrecondition, "'{}': writer is closed", path_);
  while (!bytes.empty()) {
    const ssize_t written = ::write(fd_, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      throw Error(errno == ENOSPC ? ErrorCode::ResourceExhausted : ErrorCode::InvalidArgument,
                  "'{}': write at byte {} failed: {}", path_, written_, std::strerror(errno));
    }
    bytes = bytes.subspan(static_cast<std::size_t>(written));
    written_ += static_cast<std::uint64_t>(written);
  }
}

void SpanSink::write(std::span<const std::byte> bytes) {
  if (bytes.size() > buffer_.size() - used_) {
    throw Error(ErrorCode::InvalidArgument,
                "'{}': a buffer of {} bytes is too small, {} bytes are written at byte {}", name_,
                buffer_.size(), bytes.size(), used_);
  }
  if (!bytes.empty()) std::memcpy(buffer_.data() + used_, bytes.data(), bytes.size());
  used_ += bytes.size();
}

Writer::Writer(std::string path) : Writer(std::make_unique<FileSink>(std::move(path))) {}

Writer::Writer(std::unique_ptr<ByteSink> sink) : sink_(std::move(sink)) {
  if (!sink_) throw Error(ErrorCode::InvalidArgument, "popef::Writer needs a ByteSink");
}

Writer::~Writer() = default;

void Writer::close() {
  closed_ = true;
  sink_->close();
}

void Writer::writeAll(std::span<const std::byte> bytes) {
  if (closed_) throw Error(ErrorCode::FailedPrecondition, "'{}': writer is closed", path());
  sink_->write(bytes);
  offset_ += bytes.size();
}

BlobLocation Writer::writeBlob(BlobType type, std::span<const std::byte> descriptor,
                               std::span<const std::byte> data) {
  if (descriptor.size() > format::kMaxDescriptorSize) {
    throw Error(ErrorCode::InvalidArgument, "'{}': {} descriptor of {} bytes exceeds {} bytes",
                path(), toString(type), descriptor.size(), format::kMaxDescriptorSize);
  }
  const std::vector<std::byte> head = encodePayloadHead(descriptor);
  const std::uint64_t payloadSize = head.size() + data.size();
  std::uint64_t digest = 0;
  if (!sink_->countsOnly()) {
    format::ChecksumStream checksum;
    checksum.update(head);
    checksum.update(data);
    digest = checksum.digest();
  }
  const BlobLocation location{path(), blobCount_, type, offset_};
  const format::HeaderBytes header = format::encodeHeader(type, payloadSize, digest);
  writeAll(header);
  writeAll(head);
  writeAll(data);
  static constexpr std::array<std::byte, format::kAlignment> kZeros{};
  writeAll(std::span(kZeros).first(format::alignUp(offset_) - offset_));
  ++blobCount_;
  return location;
}

BlobLocation Writer::writeMetadata(const Metadata &metadata) {
  return writeBlob(BlobType::Metadata, encodeMetadata(metadata), {});
}

BlobLocation Writer::writeExecutable(std::string_view name, std::span<const std::byte> bytes) {
  const DataDescriptor descriptor{std::string(name), std::string(name), std::nullopt, 0};
  return writeBlob(BlobType::Executable, encodeDescriptor(BlobType::Executable, descriptor), bytes);
}

BlobLocation Writer::writeTensorData(std::string_view executable, const TensorData &data) {
  const DataDescriptor descriptor{std::string(executable), data.name(), data.tensorInfo(), 0};
  return writeBlob(BlobType::TensorData, encodeDescriptor(BlobType::TensorData, descriptor),
                   data.bytes());
}

BlobLocation Writer::writeFeedData(std::string_view executable, const FeedData &feed) {
  const DataDescriptor descriptor{std::string(executable), feed.name(), feed.tensorInfo(),
                                  feed.numTensors()};
  return writeBlob(BlobType::FeedData, encodeDescriptor(BlobType::FeedData, descriptor),
                   feed.bytes());
}

BlobLocation Writer::writeOpaque(std::string_view executable, const OpaqueBlob &blob) {
  const DataDescriptor descriptor{std::string(executable), blob.name(), std::nullopt, 0};
  return writeBlob(BlobType::Opaque, encodeDescriptor(BlobType::Opaque, descriptor), blob.bytes());
}

void Writer::writeModel(const Model &model) {
  writeModelHead(model);
  writeModelData(model);
}

void Writer::writeModelHead(const Model &model) {
  writeMetadata(model.metadata);
  writeExecutable(model.executable().name(), model.executable().bytes());
}

void Writer::writeModelData(const Model &model) {
  const std::string &executable = model.metadata.executable();
  for (const TensorData &data : model.tensorDataList()) writeTensorData(executable, data);
  for (const FeedData &feed : model.feedDataList()) writeFeedData(executable, feed);
  for (const OpaqueBlob &blob : model.opaqueBlobs()) writeOpaque(executable, blob);
}

std::uint64_t modelFileSize(const Model &model) {
  Writer counter(std::make_unique<CountingSink>());
  counter.writeModel(model);
  return counter.bytesWritten();
}

std::vector<std::byte> modelFileBytes(const Model &model) {
  std::vector<std::byte> bytes(modelFileSize(model));
  Writer writer(std::make_unique<SpanSink>(bytes));
  writer.writeModel(model);
  writer.close();
  return bytes;
}

}  // namespace mrt::popef
