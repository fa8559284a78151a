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

namespace hwsim::detail {

namespace {

// The destroyed arenas kept for reuse (zeroed_arena.hpp), process-wide.
class KeptArenas {
 public:
  static KeptArenas &instance() {
    static auto *kept = new KeptArenas;  // never destroyed: arenas may outlive static destruction
    return *kept;
  }

  // A kept arena of exactly `bytes`, or null.
  std::uint8_t *take(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < arenas_.size(); ++i) {
      if (arenas_[i].bytes != bytes) continue;
      const Arena arena = arenas_[i];
      arenas_.erase(arenas_.begin() + static_cast<std::ptrdiff_t>(i));
      written_ -= arena.written;
      return arena.data;
    }
    return nullptr;
  }

  // Zeroes the arena and keeps it, unmapping the oldest kept ones beyond
  // the limits; false: the arena alone is over them, the caller unmaps it.
  bool keep(std::uint8_t *data, std::size_t bytes) noexcept {
    try {
      const std::size_t page = pageBytes();
      std::vector<unsigned char> resident((bytes + page - 1) / page);
      if (::mincore(data, bytes, resident.data()) != 0) return false;
      std::size_t written = 0;
      for (const unsigned char r : resident) written += (r & 1u) ? page : 0;
      if (written > ZeroedArena::kKeptBytes) return false;
      zero(data, bytes, resident);
      std::array<Arena, ZeroedArena::kKeptArenas> evicted{};
      std::size_t numEvicted = 0;
      {
        std::lock_guard lock(mutex_);
        while (!arenas_.empty() &&
               (arenas_.size() >= ZeroedArena::kKeptArenas || written_ + written > ZeroedArena::kKeptBytes)) {
          evicted[numEvicted++] = arenas_.front();
          written_ -= arenas_.front().written;
          arenas_.erase(arenas_.begin());
        }
        arenas_.push_back({data, bytes, written});  // within the capacity reserved at construction
        written_ += written;
      }
      for (std::size_t i = 0; i < numEvicted; ++i) ::munmap(evicted[i].data, evicted[i].bytes);
      return true;
    } catch (...) {  // the vector: no memory to keep it with
      return false;
    }
  }

 private:
  struct Arena {
    std::uint8_t *data;
    std::size_t bytes;
    std::size_t written;  // resident bytes when kept
  };

  static std::size_t pageBytes() {
    static const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    return page;
  }

  // memset of the resident pages (the written ones, and the zero pages
  // reads mapped); MADV_DONTNEED of the others, whose bytes may be in swap.
  static void zero(std::uint8_t *data, std::size_t bytes, const std::vector<unsigned char> &resident) {
    const std::size_t page = pageBytes();
    std::size_t run = 0;
    while (run < resident.size()) {
      const bool in = resident[run] & 1u;
      std::size_t end = run;
      while (end < resident.size() && static_cast<bool>(resident[end] & 1u) == in) ++end;
      const std::size_t from = run * page, to = std::min(end * page, bytes);
      if (in) std::memset(data + from, 0, to - from);
      else ::madvise(data + from, to - from, MADV_DONTNEED);
      run = end;
    }
  }

  KeptArenas() { arenas_.reserve(ZeroedArena::kKeptArenas); }

  std::mutex mutex_;
  std::vector<Arena> arenas_;  // oldest first
  std::size_t written_ = 0;  // of the arenas kept
};

}  // namespace

ZeroedArena::ZeroedArena(std::size_t bytes) : bytes_(bytes) {
  if (std::uint8_t *kept = KeptArenas::instance().take(bytes)) {
    data_ = kept;
    reused_ = true;
    return;
  }
  void *memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
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
