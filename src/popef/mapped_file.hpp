// MappedFile: the image of a whole file in memory, read (small files) or
// mapped read-only (large ones), or copied from a caller's buffer
// (mrt_model_load_from_memory). Held by
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
  // device or socket), CorruptModel if it cannot be opened, read or mapped.
  // Files of at most readUpTo bytes are read into memory, larger ones
  // mapped (kReadUpTo: see there).
  static std::shared_ptr<const MappedFile> open(const std::string &path, std::size_t readUpTo = kReadUpTo);
  // Up to this size a file is read, larger ones are mapped. Reading copies
  // every byte into memory the rest of a runner's creation then evicts from
  // the caches, so the checksums and the Load program's scatter read it
  // again from memory; a mapping copies nothing. Measured in runner
  // creation (bench_runner_creation, Xeon, 2 vCPUs): a 0.5 MB mlp 187-205
  // us read against 157-168 us mapped, 1.9 MB (mlp batch 1024) 543-579
  // against 360-422 us; a 130 KB file (add_one) mapped cost 9 us more
  // pinned to one CPU, as its 32 pages take longer to map than to copy.
  // A large file read into a fresh buffer would also cost a page fault per
  // page (docs/popef.md, "Loading speed").
  static constexpr std::size_t kReadUpTo = std::size_t{256} << 10;
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
