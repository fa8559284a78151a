// Encoding and decoding of blob descriptors (the FlatBuffers of popef.fbs).
// Decoding runs the FlatBuffers verifier first and then checks every value a
// verifier cannot (enum ranges, negative dimensions, duplicate keys), so the
// result is safe to use whatever the bytes were.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "popef/blob_type.hpp"
#include "popef/metadata.hpp"
#include "popef/tensor_info.hpp"

namespace mrt::popef {

// What an Executable, TensorData, FeedData or Opaque descriptor holds. For an
// Executable, `executable` and `name` are the same.
struct DataDescriptor {
  std::string executable;
  std::string name;
  std::optional<TensorInfo> tensorInfo;  // TensorData and FeedData
  std::uint64_t numTensors = 0;          // FeedData
};

std::vector<std::byte> encodeMetadata(const Metadata &metadata);
std::vector<std::byte> encodeDescriptor(BlobType type, const DataDescriptor &descriptor);

// `where` names the blob ("'m.popef' blob 0 (Metadata) at byte 0"),
// `fileOffset` is where the descriptor starts in the file. Throws
// mrt::Error(CorruptModel).
Metadata decodeMetadata(std::span<const std::byte> bytes, const BlobWhere &where,
                        std::uint64_t fileOffset);
DataDescriptor decodeDescriptor(BlobType type, std::span<const std::byte> bytes,
                                const BlobWhere &where, std::uint64_t fileOffset);

}  // namespace mrt::popef
