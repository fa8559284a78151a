#include "zeroed_arena.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include <support/process_singleton.hpp>

#include "mib_limit.hpp"

namespace hwsim::detail {

namespace {

constexpr const char *kLimitVariable = "MRT_HWSIM_KEPT_ARENAS_MIB";

// The destroyed arenas kept for reuse (zeroed_arena.hpp), process-wide.
class KeptArenas {
 public:
  static KeptArenas &instance() { return support::processSingleton<KeptArenas>(); }
  KeptArenas()
      : limit_(mibLimitFromEnvironment(kLimitVariable, ZeroedArena::kKeptMappedBytes >> 20, ZeroedArena::kKeptBytes)) {
    arenas_.reserve(ZeroedArena::kKeptArenas);
  }
  std::mutex &mutex() { return mutex_; }

  // A kept arena of exactly `bytes`, or null.
  std::uint8_t *take(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < arenas_.size(); ++i) {
      if (arenas_[i].bytes != bytes) continue;
      const Arena arena = arenas_[i];
      arenas_.erase(arenas_.begin() + static_cast<std::ptrdiff_t>(i));
      forget(arena);
      return arena.data;
    }
    return nullptr;
  }

  // Zeroes the arena and keeps it, unmapping the oldest kept ones beyond
  // the limits; false: the arena alone is over them, the caller unmaps it.
  bool keep(std::uint8_t *data, std::size_t bytes) noexcept {
    if (limit_ == 0 || bytes > ZeroedArena::kKeptMappedBytes) return false;
    try {
      const std::size_t page = pageBytes();
      std::vector<unsigned char> pages((bytes + page - 1) / page);
      if (::mincore(data, bytes, pages.data()) != 0) return false;
      const std::size_t written = markWritten(data, bytes, pages);
      if (written > limit_) return false;
      zero(data, bytes, pages);
      std::array<Arena, ZeroedArena::kKeptArenas> evicted{};
      std::size_t numEvicted = 0;
      {
        std::lock_guard lock(mutex_);
        while (!arenas_.empty() && (arenas_.size() >= ZeroedArena::kKeptArenas ||
                                    written_ + written > limit_ ||
                                    mapped_ + bytes > ZeroedArena::kKeptMappedBytes)) {
          evicted[numEvicted++] = arenas_.front();
          forget(arenas_.front());
          arenas_.erase(arenas_.begin());
        }
        arenas_.push_back({data, bytes, written});  // within the capacity reserved at construction
        written_ += written;
        mapped_ += bytes;
      }
      for (std::size_t i = 0; i < numEvicted; ++i) ::munmap(evicted[i].data, evicted[i].bytes);
      return true;
    } catch (...) {  // the vector: no memory to keep it with
      return false;
    }
  }

  // Unmaps every kept arena: a mapping failed, and the address space or
  // commit charge they hold may be what it lacked.
  void drop() noexcept {
    std::array<Arena, ZeroedArena::kKeptArenas> all{};
    std::size_t count = 0;
    {
      std::lock_guard lock(mutex_);
      for (const Arena &arena : arenas_) all[count++] = arena;
      arenas_.clear();  // keeps the capacity keep() relies on
      written_ = 0;
      mapped_ = 0;
    }
    for (std::size_t i = 0; i < count; ++i) ::munmap(all[i].data, all[i].bytes);
  }

 private:
  struct Arena {
    std::uint8_t *data;
    std::size_t bytes;
    std::size_t written;  // bytes of written pages when kept
  };

  static std::size_t pageBytes() {
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
  }

  void forget(const Arena &arena) {
    written_ -= arena.written;
    mapped_ -= arena.bytes;
  }

  // Marks (2) the resident pages holding a byte other than zero and returns
  // their bytes. A resident page of zeros is left alone: most are the
  // kernel's shared zero page, mapped by a read, and writing to them would
  // take a page of memory each.
  static std::size_t markWritten(const std::uint8_t *data, std::size_t bytes, std::vector<unsigned char> &pages) {
    const std::size_t page = pageBytes();
    static const std::vector<std::uint8_t> zeros(pageBytes());
    std::size_t written = 0;
    for (std::size_t i = 0; i < pages.size(); ++i) {
      if (!(pages[i] & 1u)) {
        pages[i] = 0;
        continue;
      }
      const std::size_t from = i * page, len = std::min(page, bytes - from);
      pages[i] = std::memcmp(data + from, zeros.data(), len) != 0 ? 2 : 1;
      written += pages[i] == 2 ? page : 0;
    }
    return written;
  }

  // memset of the written pages; MADV_DONTNEED of the pages not resident,
  // whose bytes may be in swap. Resident pages of zeros stay as they are.
  static void zero(std::uint8_t *data, std::size_t bytes, const std::vector<unsigned char> &pages) {
    const std::size_t page = pageBytes();
    std::size_t run = 0;
    while (run < pages.size()) {
      const unsigned char kind = pages[run];
      std::size_t end = run;
      while (end < pages.size() && pages[end] == kind) ++end;
      const std::size_t from = run * page, to = std::min(end * page, bytes);
      if (kind == 2) std::memset(data + from, 0, to - from);
      else if (kind == 0) ::madvise(data + from, to - from, MADV_DONTNEED);
      run = end;
    }
  }

  const std::size_t limit_;  // of written bytes kept

  std::mutex mutex_;
  std::vector<Arena> arenas_;  // oldest first
  std::size_t written_ = 0;  // of the arenas kept
  std::size_t mapped_ = 0;   // their sizes
};

}  // namespace

std::size_t ZeroedArena::keptBytesFor(const char *request, std::string &warning) {
  return mibLimitFor(kLimitVariable, request, kKeptMappedBytes >> 20, kKeptBytes, warning);
}

ZeroedArena::ZeroedArena(std::size_t bytes) : bytes_(bytes) {
  if (std::uint8_t *kept = KeptArenas::instance().take(bytes)) {
    data_ = kept;
    reused_ = true;
    return;
  }
  const auto mapZeroPages = [bytes] {
    return ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  };
  void *memory = mapZeroPages();
  if (memory == MAP_FAILED) {
    KeptArenas::instance().drop();
    memory = mapZeroPages();
  }
  if (memory == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::uint8_t *>(memory);
}

ZeroedArena::~ZeroedArena() { release(); }

ZeroedArena::ZeroedArena(ZeroedArena &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      reused_(std::exchange(other.reused_, false)) {}

ZeroedArena &ZeroedArena::operator=(ZeroedArena &&other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    reused_ = std::exchange(other.reused_, false);
  }
  return *this;
}

void ZeroedArena::release() noexcept {
  if (data_ != nullptr && !KeptArenas::instance().keep(data_, bytes_)) ::munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
  reused_ = false;
}

}  // namespace hwsim::detail
