// The common payload layout of every blob: a 16-byte prefix, a FlatBuffer
// descriptor, zero padding, then the data section at a 64-aligned offset
// (see format.hpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "popef/blob_scanner.hpp"

namespace mrt::popef {

struct PayloadParts {
  std::span<const std::byte> descriptor;
  std::uint64_t descriptorOffset = 0;  // in the file
  std::span<const std::byte> data;
  std::uint64_t dataOffset = 0;  // in the file
};

// Throws mrt::Error(CorruptModel) naming the blob and byte offset if the
// prefix is inconsistent with the payload.
PayloadParts splitPayload(const ScannedBlob &blob);

// Prefix + descriptor + zero padding: everything of a payload before its data.
std::vector<std::byte> encodePayloadHead(std::span<const std::byte> descriptor);

}  // namespace mrt::popef
