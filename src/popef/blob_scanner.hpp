// scanBlobs: walks the blob headers of one file and checks the framing
// (magic, format version, header checksum, sizes, padding). Payload
// checksums are left to the caller (computedChecksum()): mrt-info lists a
// damaged blob, the Reader refuses one, and the Reader need not hash an
// executable it finds kept from a blob equal to this one (reader.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "popef/blob_type.hpp"
#include "popef/mapped_file.hpp"

namespace mrt::popef {

struct ScannedBlob {
  BlobLocation location;
  std::uint64_t payloadOffset = 0;  // in the file
  std::span<const std::byte> payload;  // into the mapping
  std::uint64_t storedChecksum = 0;

  // XXH3-64 of the payload, computed at each call (a pass over its bytes).
  std::uint64_t computedChecksum() const noexcept;
};

// Throws mrt::Error(CorruptModel) naming the file, blob index and byte offset
// for a framing error; an empty file is an error too.
std::vector<ScannedBlob> scanBlobs(const MappedFile &file);
// The same, appending each blob to `out` as it is found, so that a caller
// that catches the error still has the blobs before it (mrt-info lists them).
void scanBlobs(const MappedFile &file, std::vector<ScannedBlob> &out);

}  // namespace mrt::popef
