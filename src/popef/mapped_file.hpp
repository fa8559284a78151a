// MappedFile: a whole file mapped read-only into memory, or the image of one
// copied from a caller's buffer (mrt_model_load_from_memory). Held by
// shared_ptr; every SharedBytes cut from it shares that ownership, so the
// mapping (or copy) lives exactly as long as the last model part that points
// into it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "popef/shared_bytes.hpp"

namespace mrt::popef {

class MappedFile {
 public:
  // Throws mrt::Error: NotFound if the path does not exist, InvalidArgument
  // (without blocking) if it is not a regular file (a directory, FIFO,
  // device or socket), CorruptModel if it cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::string &path);
  // A copy of `bytes` in a kDataAlignment-aligned allocation, so that blobs
  // land on the same boundaries as in a mapped file; `name` stands for the
  // path in messages ("<memory>").
  static std::shared_ptr<const MappedFile> copyOf(std::string name, std::span<const std::byte> bytes);

  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const std::string &path() const noexcept { return path_; }
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

 private:
  MappedFile(std::string path, const std::byte *data, std::size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  MappedFile(std::string name, SharedBytes copy)
      : path_(std::move(name)), data_(copy.data()), size_(copy.size()), copy_(std::move(copy)) {}

  std::string path_;
  const std::byte *data_;
  std::size_t size_;
  SharedBytes copy_;  // owns the bytes of a copy; empty for a mapping
};

}  // namespace mrt::popef
