// RecyclingAllocator<T>: an allocator for the small objects a ModelRunner
// makes and frees at every request (the request's record and Completion,
// the node of the pending list), so that a serving loop in its steady state
// makes no heap allocation. Single objects come from a process-wide cache
// of freed blocks of their size in whole cache lines; arrays and blocks
// beyond the cache's bound go to operator new.
//
// Why process-wide: a Completion may outlive its runner (an mrt_future kept
// after mrt_model_runner_destroy), so its block cannot go back to a cache
// the runner owns. The cache is never destroyed, so blocks freed during
// static destruction still have somewhere to go.
//
// Any thread may allocate and free. Each thread keeps a few freed blocks
// of each size of its own, in front of the process-wide cache, which is
// guarded by a mutex (an uncontended lock costs about what malloc does):
// clients on several threads, each serving its own requests, would
// otherwise take turns at that mutex at every request (measured with two
// clients on two replicas, docs/performance.md "Waits between threads").
// A thread's blocks go to the process-wide cache when it ends. Under
// AddressSanitizer blocks are not recycled, so that a use after free is
// still reported.
#pragma once

#include <cstddef>
#include <mutex>
#include <new>

namespace mrt {
namespace detail {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kRecycleBlocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kRecycleBlocks = false;
#else
inline constexpr bool kRecycleBlocks = true;
#endif
#else
inline constexpr bool kRecycleBlocks = true;
#endif

// Freed blocks of Size bytes aligned to Align, as a list linked through the
// blocks themselves.
template <std::size_t Size, std::size_t Align>
class BlockCache {
 public:
  static_assert(Size >= sizeof(void *) && Align >= alignof(void *));

  static BlockCache &instance() {
    static BlockCache *cache = new BlockCache;  // never destroyed (see the file comment)
    return *cache;
  }

  void *take() {
    if (ThreadBlocks *own = threadBlocks(); own != nullptr && own->free != nullptr) {
      Free *block = own->free;
      own->free = block->next;
      --own->count;
      return block;
    }
    {
      std::lock_guard lock(mutex_);
      if (Free *block = free_) {
        free_ = block->next;
        --count_;
        return block;
      }
    }
    return ::operator new(Size, std::align_val_t(Align));
  }

  void give(void *pointer) noexcept {
    if (ThreadBlocks *own = threadBlocks(); own != nullptr && own->count < kThreadBlocks) {
      own->free = new (pointer) Free{own->free};
      ++own->count;
      return;
    }
    giveShared(pointer);
  }

 private:
  // Enough for the requests in flight of a busy process; what an unusual
  // burst frees beyond it goes back to the heap.
  static constexpr std::size_t kMaxBlocks = 4096;
  // A thread's own: about a client's window of requests in flight.
  static constexpr std::size_t kThreadBlocks = 32;

  struct Free {
    Free *next;
  };

  // This thread's blocks; handed to the process-wide cache when it ends.
  struct ThreadBlocks {
    Free *free = nullptr;
    std::size_t count = 0;
  };

  // Null once this thread's blocks were handed back (a block freed by a
  // later thread-exit destructor goes to the process-wide cache).
  static ThreadBlocks *threadBlocks() noexcept {
    thread_local bool handed_back = false;  // trivially destructible: readable until the thread is gone
    struct Owner {
      ThreadBlocks blocks;
      ~Owner() {
        handed_back = true;
        while (Free *block = blocks.free) {
          blocks.free = block->next;
          instance().giveShared(block);
        }
      }
    };
    if (handed_back) return nullptr;
    thread_local Owner owner;
    return &owner.blocks;
  }

  void giveShared(void *pointer) noexcept {
    {
      std::lock_guard lock(mutex_);
      if (count_ < kMaxBlocks) {
        free_ = new (pointer) Free{free_};
        ++count_;
        return;
      }
    }
    ::operator delete(pointer, std::align_val_t(Align));  // unsized: clang enables sized deallocation only on request
  }

  std::mutex mutex_;
  Free *free_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace detail

template <class T>
class RecyclingAllocator {
 public:
  using value_type = T;

  RecyclingAllocator() noexcept = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U> &) noexcept {}  // NOLINT(google-explicit-constructor)

  T *allocate(std::size_t n) {
    if (n == 1 && detail::kRecycleBlocks) return static_cast<T *>(cache().take());
    return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(kAlign)));
  }

  void deallocate(T *pointer, std::size_t n) noexcept {
    if (n == 1 && detail::kRecycleBlocks) return cache().give(pointer);
    ::operator delete(pointer, std::align_val_t(kAlign));
  }

  template <class U>
  bool operator==(const RecyclingAllocator<U> &) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const RecyclingAllocator<U> &) const noexcept {
    return false;
  }

 private:
  // Whole cache lines: two clients' requests in flight on two CPUs never
  // share one. Blocks of 32 bytes (the pending list's nodes) next to another
  // thread's made the two clients' CPUs take the line from each other at
  // every request (bench_handoffs, BM_TwoClientsVsOne).
  static constexpr std::size_t kCacheLine = 64;
  static constexpr std::size_t kAlign = alignof(T) > kCacheLine ? alignof(T) : kCacheLine;
  static constexpr std::size_t kSize = (sizeof(T) + kAlign - 1) / kAlign * kAlign;
  static detail::BlockCache<kSize, kAlign> &cache() { return detail::BlockCache<kSize, kAlign>::instance(); }
};

}  // namespace mrt
