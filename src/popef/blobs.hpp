// The non-metadata parts of a model: its executable, its TensorData and
// FeedData (bytes that feed input anchors) and Opaque blobs (anything else a
// producer wants to keep with the model). Their bytes are SharedBytes: when
// read from a file they point straight into the memory map, never copied.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <hwsim/executable.hpp>

#include "popef/blob_type.hpp"
#include "popef/shared_bytes.hpp"
#include "popef/tensor_info.hpp"

namespace mrt::popef {

// A named run of bytes this layer does not interpret: the shared part of
// the executable and opaque blobs.
class NamedBytesBlob {
 public:
  NamedBytesBlob() = default;
  NamedBytesBlob(std::string name, SharedBytes bytes, std::optional<BlobLocation> origin = {})
      : name_(std::move(name)), bytes_(std::move(bytes)), origin_(std::move(origin)) {}

  const std::string &name() const noexcept { return name_; }
  std::span<const std::byte> bytes() const noexcept { return bytes_.bytes(); }
  const SharedBytes &sharedBytes() const noexcept { return bytes_; }
  const std::optional<BlobLocation> &origin() const noexcept { return origin_; }

 private:
  std::string name_;
  SharedBytes bytes_;
  std::optional<BlobLocation> origin_;
};

// A serialized hwsim executable, linked to its Metadata by name. This layer
// treats the bytes as opaque; hwsim verifies them when it deserializes.
//
// Read from a file, it also carries its blob's seal (the payload checksum
// and the bytes before the executable's, all verified: hwsim keeps it with
// the executable it deserializes), and the executable hwsim already kept
// under that seal, if the reader found one (readExecutable returns it).
class ExecutableBlob : public NamedBytesBlob {
 public:
  using NamedBytesBlob::NamedBytesBlob;
  ExecutableBlob(std::string name, SharedBytes bytes, std::optional<BlobLocation> origin,
                 std::vector<std::uint8_t> seal, hwsim::Executable kept)
      : NamedBytesBlob(std::move(name), std::move(bytes), std::move(origin)),
        seal_(std::move(seal)),
        kept_(std::move(kept)) {}

  std::span<const std::uint8_t> seal() const noexcept { return seal_; }
  const hwsim::Executable &kept() const noexcept { return kept_; }

 private:
  std::vector<std::uint8_t> seal_;
  hwsim::Executable kept_;  // empty: deserialize the bytes
};

// The bytes of one tensor (a weight, an initial state, a remote buffer's
// content), matched to an anchor by name. When read from a file, data() is
// 64-byte aligned and points into the read-only memory map.
class TensorData {
 public:
  TensorData() = default;
  TensorData(std::string name, TensorInfo info, SharedBytes bytes,
             std::optional<BlobLocation> origin = {})
      : name_(std::move(name)), info_(std::move(info)), bytes_(std::move(bytes)),
        origin_(std::move(origin)) {}

  const std::string &name() const noexcept { return name_; }
  const TensorInfo &tensorInfo() const noexcept { return info_; }
  std::span<const std::byte> bytes() const noexcept { return bytes_.bytes(); }
  const std::byte *data() const noexcept { return bytes_.data(); }
  std::size_t size() const noexcept { return bytes_.size(); }
  const SharedBytes &sharedBytes() const noexcept { return bytes_; }
  const std::optional<BlobLocation> &origin() const noexcept { return origin_; }

 private:
  std::string name_;
  TensorInfo info_;
  SharedBytes bytes_;
  std::optional<BlobLocation> origin_;
};

// A sequence of numTensors() tensors of tensorInfo() each, stored back to
// back, fed to an input anchor one after another (wrapping around).
class FeedData {
 public:
  FeedData() = default;
  FeedData(std::string name, TensorInfo info, std::uint64_t numTensors, SharedBytes bytes,
           std::optional<BlobLocation> origin = {})
      : name_(std::move(name)), info_(std::move(info)), numTensors_(numTensors),
        bytes_(std::move(bytes)), origin_(std::move(origin)) {}

  const std::string &name() const noexcept { return name_; }
  // The shape and type of one element of the feed.
  const TensorInfo &tensorInfo() const noexcept { return info_; }
  std::uint64_t numTensors() const noexcept { return numTensors_; }
  std::span<const std::byte> bytes() const noexcept { return bytes_.bytes(); }
  // The i-th tensor of the feed; i < numTensors() (the model checked sizes).
  std::span<const std::byte> tensor(std::uint64_t i) const noexcept {
    const auto size = static_cast<std::size_t>(info_.sizeInBytes());
    return bytes_.bytes().subspan(static_cast<std::size_t>(i) * size, size);
  }
  const SharedBytes &sharedBytes() const noexcept { return bytes_; }
  const std::optional<BlobLocation> &origin() const noexcept { return origin_; }

 private:
  std::string name_;
  TensorInfo info_;
  std::uint64_t numTensors_ = 0;
  SharedBytes bytes_;
  std::optional<BlobLocation> origin_;
};

// Bytes the runtime does not interpret, kept with the model (for example a
// framework's own description of it).
class OpaqueBlob : public NamedBytesBlob {
 public:
  using NamedBytesBlob::NamedBytesBlob;
};

}  // namespace mrt::popef
