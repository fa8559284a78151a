#include "popef/format.hpp"

#include <new>

#include <xxhash.h>

namespace mrt::popef::format {

std::uint64_t checksum(std::span<const std::byte> bytes) noexcept {
  return XXH3_64bits(bytes.data(), bytes.size());
}

ChecksumStream::ChecksumStream() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(static_cast<XXH3_state_t *>(state_));
}

ChecksumStream::~ChecksumStream() { XXH3_freeState(static_cast<XXH3_state_t *>(state_)); }

void ChecksumStream::update(std::span<const std::byte> bytes) noexcept {
  XXH3_64bits_update(static_cast<XXH3_state_t *>(state_), bytes.data(), bytes.size());
}

std::uint64_t ChecksumStream::digest() const noexcept {
  return XXH3_64bits_digest(static_cast<const XXH3_state_t *>(state_));
}

HeaderBytes encodeHeader(BlobType type, std::uint64_t payloadSize,
                         std::uint64_t payloadChecksum) noexcept {
  HeaderBytes header{};
  const std::span<std::byte> bytes(header);
  __builtin_memcpy(bytes.data() + header_offset::kMagic, kMagic.data(), kMagic.size());
  store<std::uint32_t>(bytes, header_offset::kVersion, kFormatVersion);
  store<std::uint32_t>(bytes, header_offset::kType, static_cast<std::uint32_t>(type));
  store<std::uint64_t>(bytes, header_offset::kPayloadSize, payloadSize);
  store<std::uint64_t>(bytes, header_offset::kPayloadChecksum, payloadChecksum);
  store<std::uint64_t>(bytes, header_offset::kHeaderChecksum,
                       checksum(bytes.first(kHeaderHashedBytes)));
  return header;
}

}  // namespace mrt::popef::format
