// The kinds of blob a PopEF file holds, and where a blob came from (for error
// messages: "'m.popef': blob 3 (TensorData) at byte 4096: ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mrt::popef {

// Numbering is part of the file format (docs/popef.md): only append.
enum class BlobType : std::uint32_t {
  Metadata = 1,
  Executable = 2,
  TensorData = 3,
  FeedData = 4,
  Opaque = 5,
};

std::string_view toString(BlobType type) noexcept;
std::optional<BlobType> blobTypeFromValue(std::uint32_t value) noexcept;

struct BlobLocation {
  std::string file;             // the path as given to the reader
  std::size_t index = 0;        // 0-based position of the blob in its file
  BlobType type = BlobType::Opaque;
  std::uint64_t offset = 0;     // byte offset of the blob header in the file

  // "'m.popef' blob 3 (TensorData) at byte 4096"
  std::string describe() const;
};

// Where a model part came from: a blob of a file, or built in memory.
std::string describe(const std::optional<BlobLocation> &origin, BlobType type);

}  // namespace mrt::popef
