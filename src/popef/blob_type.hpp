// The kinds of blob a PopEF file holds, and where a blob came from (for error
// messages: "'m.popef': blob 3 (TensorData) at byte 4096: ...").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

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

// The same, formatted only where a message is made of it (it formats as
// describe() says, as an argument of fmt or of mrt::Error): a load that
// succeeds makes no message, and formatting every part's place up front
// was a tenth of a runner's creation. Refers to the location, which must
// outlive it.
class BlobWhere {
 public:
  explicit BlobWhere(const BlobLocation &location) : location_(&location), type_(location.type) {}
  BlobWhere(const std::optional<BlobLocation> &origin, BlobType type)
      : location_(origin ? &*origin : nullptr), type_(type) {}
  std::string str() const;

 private:
  const BlobLocation *location_;  // nullptr: built in memory
  BlobType type_;
};

}  // namespace mrt::popef

template <>
struct fmt::formatter<mrt::popef::BlobWhere> : fmt::formatter<std::string_view> {
  auto format(const mrt::popef::BlobWhere &where, fmt::format_context &ctx) const {
    return fmt::formatter<std::string_view>::format(where.str(), ctx);
  }
};
