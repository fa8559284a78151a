#include "popef/payload.hpp"

#include <algorithm>
#include <cstring>

#include "common/error.hpp"
#include "popef/format.hpp"

namespace mrt::popef {

using format::load;

PayloadParts splitPayload(const ScannedBlob &blob) {
  const auto payload = blob.payload;
  const BlobWhere where(blob.location);
  if (payload.size() < format::kPayloadPrefixSize) {
    throw Error(ErrorCode::CorruptModel,
                "{}: payload of {} bytes at byte {} is shorter than its {}-byte prefix", where,
                payload.size(), blob.payloadOffset, format::kPayloadPrefixSize);
  }
  const auto descriptorSize = load<std::uint32_t>(payload, 0);
  const auto reserved = load<std::uint32_t>(payload, 4);
  const auto dataOffset = load<std::uint64_t>(payload, 8);
  if (descriptorSize == 0 || descriptorSize > format::kMaxDescriptorSize) {
    throw Error(ErrorCode::CorruptModel, "{}: descriptor size {} at byte {} is out of range (1..{})",
                where, descriptorSize, blob.payloadOffset, format::kMaxDescriptorSize);
  }
  if (reserved != 0) {
    throw Error(ErrorCode::CorruptModel, "{}: reserved prefix field at byte {} is {}, not zero",
                where, blob.payloadOffset + 4, reserved);
  }
  const std::uint64_t expectedDataOffset = format::dataOffsetFor(descriptorSize);
  if (dataOffset != expectedDataOffset) {
    throw Error(ErrorCode::CorruptModel,
                "{}: data offset {} at byte {} should be {} for a {}-byte descriptor", where,
                dataOffset, blob.payloadOffset + 8, expectedDataOffset, descriptorSize);
  }
  if (dataOffset > payload.size()) {
    throw Error(ErrorCode::CorruptModel,
                "{}: data offset {} at byte {} runs past the end of the {}-byte payload", where,
                dataOffset, blob.payloadOffset + 8, payload.size());
  }
  const auto padding = payload.subspan(format::kPayloadPrefixSize + descriptorSize,
                                       dataOffset - format::kPayloadPrefixSize - descriptorSize);
  if (!std::all_of(padding.begin(), padding.end(), [](std::byte b) { return b == std::byte{0}; })) {
    throw Error(ErrorCode::CorruptModel, "{}: padding after the descriptor at byte {} is not zero",
                where, blob.payloadOffset + format::kPayloadPrefixSize + descriptorSize);
  }
  PayloadParts parts;
  parts.descriptor = payload.subspan(format::kPayloadPrefixSize, descriptorSize);
  parts.descriptorOffset = blob.payloadOffset + format::kPayloadPrefixSize;
  parts.data = payload.subspan(dataOffset);
  parts.dataOffset = blob.payloadOffset + dataOffset;
  return parts;
}

std::vector<std::byte> encodePayloadHead(std::span<const std::byte> descriptor) {
  const std::uint64_t dataOffset = format::dataOffsetFor(descriptor.size());
  std::vector<std::byte> head(dataOffset, std::byte{0});
  format::store<std::uint32_t>(head, 0, static_cast<std::uint32_t>(descriptor.size()));
  format::store<std::uint64_t>(head, 8, dataOffset);
  std::memcpy(head.data() + format::kPayloadPrefixSize, descriptor.data(), descriptor.size());
  return head;
}

}  // namespace mrt::popef
