#include "popef/blob_scanner.hpp"

#include <algorithm>
#include <string_view>

#include "common/error.hpp"
#include "popef/format.hpp"

namespace mrt::popef {

namespace {

using format::load;
namespace offset = format::header_offset;

bool allZero(std::span<const std::byte> bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
}

// Prints the magic found, replacing bytes that are not printable.
std::string printable(std::span<const std::byte> bytes) {
  std::string text;
  for (const std::byte b : bytes) {
    const auto c = static_cast<char>(b);
    text += (c >= 0x20 && c < 0x7f) ? c : '?';
  }
  return text;
}

}  // namespace

std::uint64_t ScannedBlob::computedChecksum() const noexcept { return format::checksum(payload); }

std::vector<ScannedBlob> scanBlobs(const MappedFile &file) {
  std::vector<ScannedBlob> blobs;
  scanBlobs(file, blobs);
  return blobs;
}

void scanBlobs(const MappedFile &file, std::vector<ScannedBlob> &out) {
  const std::span<const std::byte> bytes = file.bytes();
  const std::string &path = file.path();
  if (bytes.empty()) {
    throw Error(ErrorCode::CorruptModel, "'{}': empty file, expected at least one blob at byte 0",
                path);
  }
  std::uint64_t at = 0;
  std::size_t index = 0;
  for (; at < bytes.size(); ++index) {
    const std::uint64_t left = bytes.size() - at;
    if (left < format::kHeaderSize) {
      throw Error(ErrorCode::CorruptModel,
                  "'{}' blob {} at byte {}: truncated file, the blob header needs {} bytes but "
                  "only {} are left",
                  path, index, at, format::kHeaderSize, left);
    }
    const auto header = bytes.subspan(at, format::kHeaderSize);
    const auto magic = header.subspan(offset::kMagic, format::kMagic.size());
    if (!std::equal(magic.begin(), magic.end(), format::kMagic.begin(), format::kMagic.end(),
                    [](std::byte a, char b) { return a == static_cast<std::byte>(b); })) {
      throw Error(ErrorCode::CorruptModel,
                  "'{}' blob {} at byte {}: wrong magic '{}' (expected '{}'){}", path, index, at,
                  printable(magic), std::string_view(format::kMagic.data(), format::kMagic.size()),
                  index == 0 ? ", not a PopEF file" : "");
    }
    const auto version = load<std::uint32_t>(header, offset::kVersion);
    if (version != format::kFormatVersion) {
      throw Error(ErrorCode::CorruptModel,
                  "'{}' blob {} at byte {}: unknown format version {} at byte {} (this reader "
                  "knows version {})",
                  path, index, at, version, at + offset::kVersion, format::kFormatVersion);
    }
    const auto storedHeaderChecksum = load<std::uint64_t>(header, offset::kHeaderChecksum);
    const auto headerChecksum = format::checksum(header.first(format::kHeaderHashedBytes));
    if (storedHeaderChecksum != headerChecksum) {
      throw Error(ErrorCode::CorruptModel,
                  "'{}' blob {} at byte {}: header checksum mismatch (stored {:#018x}, computed "
                  "{:#018x})",
                  path, index, at, storedHeaderChecksum, headerChecksum);
    }
    if (!allZero(header.subspan(offset::kReserved))) {
      throw Error(ErrorCode::CorruptModel,
                  "'{}' blob {} at byte {}: reserved header bytes {}..{} are not zero", path, index,
                  at, at + offset::kReserved, at + format::kHeaderSize);
    }
    const auto rawType = load<std::uint32_t>(header, offset::kType);
    const auto type = blobTypeFromValue(rawType);
    if (!type) {
      throw Error(ErrorCode::CorruptModel, "'{}' blob {} at byte {}: unknown blob type {}", path,
                  index, at, rawType);
    }
    const BlobLocation location{path, index, *type, at};
    const auto payloadSize = load<std::uint64_t>(header, offset::kPayloadSize);
    const std::uint64_t payloadOffset = at + format::kHeaderSize;
    const std::uint64_t payloadRoom = bytes.size() - payloadOffset;
    if (payloadSize > payloadRoom) {
      throw Error(ErrorCode::CorruptModel,
                  "{}: payload of {} bytes at byte {} runs past the end of the file ({} bytes, "
                  "truncated?)",
                  location.describe(), payloadSize, payloadOffset, bytes.size());
    }
    const std::uint64_t payloadEnd = payloadOffset + payloadSize;
    const std::uint64_t next = format::alignUp(payloadEnd);
    if (next > bytes.size()) {
      throw Error(ErrorCode::CorruptModel,
                  "{}: truncated file, padding after the payload needs bytes {}..{} but the file "
                  "has {}",
                  location.describe(), payloadEnd, next, bytes.size());
    }
    if (!allZero(bytes.subspan(payloadEnd, next - payloadEnd))) {
      throw Error(ErrorCode::CorruptModel, "{}: padding bytes {}..{} after the payload are not zero",
                  location.describe(), payloadEnd, next);
    }
    ScannedBlob blob;
    blob.location = location;
    blob.payloadOffset = payloadOffset;
    blob.payload = bytes.subspan(payloadOffset, payloadSize);
    blob.storedChecksum = load<std::uint64_t>(header, offset::kPayloadChecksum);
    out.push_back(std::move(blob));
    at = next;
  }
}

}  // namespace mrt::popef
