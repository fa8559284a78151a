// MappedFile: a whole file mapped read-only into memory. Held by shared_ptr;
// every SharedBytes cut from it shares that ownership, so the mapping lives
// exactly as long as the last model part that points into it.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace mrt::popef {

class MappedFile {
 public:
  // Throws mrt::Error: NotFound if the path does not exist, InvalidArgument
  // (without blocking) if it is not a regular file (a directory, FIFO,
  // device or socket), CorruptModel if it cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::string &path);

  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const std::string &path() const noexcept { return path_; }
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

 private:
  MappedFile(std::string path, const std::byte *data, std::size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  const std::byte *data_;
  std::size_t size_;
};

}  // namespace mrt::popef
