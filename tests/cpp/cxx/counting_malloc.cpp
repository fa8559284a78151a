// The interposed allocators of counting_malloc.hpp: each counts, then calls
// glibc's own (__libc_*), which the dynamic linker would otherwise have
// bound every library's calls to.
#include "counting_malloc.hpp"

#include <errno.h>
#include <stddef.h>

#include <atomic>

extern "C" {
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t count, size_t size);
void *__libc_realloc(void *pointer, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
}

namespace {
std::atomic<std::uint64_t> g_allocations{0};

void count() noexcept { g_allocations.fetch_add(1, std::memory_order_relaxed); }
}  // namespace

namespace mrt_alloc_test {
std::uint64_t allocationCount() noexcept { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace mrt_alloc_test

extern "C" {

void *malloc(size_t size) {
  count();
  return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
  count();
  return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
  count();
  return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
  // glibc's checks: a power of two multiple of sizeof(void *).
  if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
  count();
  void *pointer = __libc_memalign(alignment, size);
  if (pointer == nullptr) return ENOMEM;
  *out = pointer;
  return 0;
}

}  // extern "C"
