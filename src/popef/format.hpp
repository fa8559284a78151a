// The byte layout of a libmrt PopEF file (docs/popef.md is the reference):
//
//   file    := blob*                 every blob starts at a multiple of 64
//   blob    := header payload pad    pad: zeros up to the next multiple of 64
//   header  := 64 bytes, little endian:
//                0  char[8] magic "MRTPOPEF"
//                8  u32     format version (kFormatVersion)
//               12  u32     blob type (BlobType)
//               16  u64     payload size in bytes
//               24  u64     XXH3-64 of the payload
//               32  u64     XXH3-64 of header bytes 0..31
//               40  24 bytes reserved, zero
//   payload := prefix descriptor pad data
//   prefix  := 16 bytes: u32 descriptor size, u32 reserved (zero),
//              u64 data offset (from the payload start; a multiple of 64,
//              exactly alignUp(16 + descriptor size))
//   descriptor := a FlatBuffer (src/popef/popef.fbs) naming the blob
//   data    := the rest of the payload: executable bytes, tensor bytes, ...
//
// Since the header is 64 bytes and blobs start 64-aligned, the data of every
// blob is 64-byte aligned in the file and hence in a memory map of it.
#pragma once

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "popef/blob_type.hpp"

namespace mrt::popef::format {

static_assert(std::endian::native == std::endian::little,
              "the PopEF codec reads little-endian fields in place");

inline constexpr std::array<char, 8> kMagic{'M', 'R', 'T', 'P', 'O', 'P', 'E', 'F'};
inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kAlignment = 64;
inline constexpr std::size_t kHeaderSize = 64;
inline constexpr std::size_t kHeaderHashedBytes = 32;
inline constexpr std::size_t kPayloadPrefixSize = 16;
// The FlatBuffers verifier only accepts buffers below 2 GiB; descriptors are
// names and shapes, so anything near that is corrupt anyway.
inline constexpr std::uint64_t kMaxDescriptorSize = 64u << 20;

namespace header_offset {
inline constexpr std::size_t kMagic = 0;
inline constexpr std::size_t kVersion = 8;
inline constexpr std::size_t kType = 12;
inline constexpr std::size_t kPayloadSize = 16;
inline constexpr std::size_t kPayloadChecksum = 24;
inline constexpr std::size_t kHeaderChecksum = 32;
inline constexpr std::size_t kReserved = 40;
}  // namespace header_offset

constexpr std::uint64_t alignUp(std::uint64_t value) noexcept {
  return (value + (kAlignment - 1)) & ~std::uint64_t{kAlignment - 1};
}

// Data offset of a payload whose descriptor has `descriptorSize` bytes.
constexpr std::uint64_t dataOffsetFor(std::uint64_t descriptorSize) noexcept {
  return alignUp(kPayloadPrefixSize + descriptorSize);
}

// XXH3-64 (seed 0), the checksum of payloads and headers.
std::uint64_t checksum(std::span<const std::byte> bytes) noexcept;

// Incremental XXH3-64 for payloads written from several pieces.
class ChecksumStream {
 public:
  ChecksumStream();
  ~ChecksumStream();
  ChecksumStream(const ChecksumStream &) = delete;
  ChecksumStream &operator=(const ChecksumStream &) = delete;
  void update(std::span<const std::byte> bytes) noexcept;
  std::uint64_t digest() const noexcept;

 private:
  void *state_;  // XXH3_state_t, kept out of this header
};

using HeaderBytes = std::array<std::byte, kHeaderSize>;

HeaderBytes encodeHeader(BlobType type, std::uint64_t payloadSize,
                         std::uint64_t payloadChecksum) noexcept;

// Little-endian field access on unaligned bytes.
template <typename T>
T load(std::span<const std::byte> bytes, std::size_t offset) noexcept {
  T value;
  __builtin_memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

template <typename T>
void store(std::span<std::byte> bytes, std::size_t offset, T value) noexcept {
  __builtin_memcpy(bytes.data() + offset, &value, sizeof(T));
}

}  // namespace mrt::popef::format
