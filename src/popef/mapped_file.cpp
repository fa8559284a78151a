#include "popef/mapped_file.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.hpp"

namespace mrt::popef {

namespace {

// Closes the descriptor on every path out of open(); the mapping does not
// need it once made.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// What a file that is not a regular file is, for messages.
const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "a special file";
}

// Reads the whole file into `data` (size bytes, its size when opened);
// the bytes read, fewer if it was truncated meanwhile.
std::size_t readAll(int fd, const std::string &path, std::byte *data, std::size_t size) {
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::pread(fd, data + done, size - done, static_cast<off_t>(done));
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorCode::CorruptModel, "'{}': cannot read: {}", path, std::strerror(errno));
    }
    done += static_cast<std::size_t>(got);
  }
  return done;
}

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::string &path, std::size_t readUpTo) {
  // O_NONBLOCK: opening a FIFO without a writer (or a device) must not wait;
  // it is refused below. It changes nothing for a regular file.
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR) {
      throw Error(ErrorCode::NotFound, "'{}': no such PopEF file", path);
    }
    throw Error(ErrorCode::CorruptModel, "'{}': cannot open: {}", path, std::strerror(error));
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    throw Error(ErrorCode::CorruptModel, "'{}': cannot stat: {}", path, std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode)) {
    throw Error(ErrorCode::InvalidArgument, "'{}': is {}, not a PopEF file", path, kindOf(info.st_mode));
  }
  const auto size = static_cast<std::size_t>(info.st_size);
  if (size == 0) {
    // mmap rejects length 0; an empty file is reported by the blob scanner.
    return std::shared_ptr<const MappedFile>(std::unique_ptr<MappedFile>(new MappedFile(path, nullptr, 0)));
  }
  if (size <= readUpTo) {
    SharedBytes bytes =
        SharedBytes::alignedFilledBy(size, [&](std::byte *data) { return readAll(fd.get(), path, data, size); });
    return std::shared_ptr<const MappedFile>(new MappedFile(path, std::move(bytes)));
  }
  // MAP_POPULATE: the reader checksums every byte right away, so fault the
  // whole file in with one call instead of one page fault per 4 KiB.
  void *map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
  if (map == MAP_FAILED) {
    throw Error(ErrorCode::CorruptModel, "'{}': cannot map {} bytes: {}", path, size,
                std::strerror(errno));
  }
  // unique_ptr first: if the shared_ptr control block cannot be allocated,
  // the MappedFile (and so the mapping) is still released.
  std::unique_ptr<MappedFile> mapped;
  try {
    mapped.reset(new MappedFile(path, static_cast<const std::byte *>(map), size));
  } catch (...) {
    ::munmap(map, size);
    throw;
  }
  return std::shared_ptr<const MappedFile>(std::move(mapped));
}

std::shared_ptr<const MappedFile> MappedFile::copyOf(std::string name,
                                                    std::span<const std::byte> bytes) {
  return std::shared_ptr<const MappedFile>(
      new MappedFile(std::move(name), SharedBytes::alignedCopyOf(bytes)));
}

MappedFile::~MappedFile() {
  if (copy_.owner() == nullptr && data_ != nullptr) ::munmap(const_cast<std::byte *>(data_), size_);
}

}  // namespace mrt::popef
