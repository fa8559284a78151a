// Counts the heap allocations of the whole process (every thread, every
// library): counting_malloc.cpp interposes malloc, calloc, realloc and the
// aligned allocators, which operator new and every C and C++ library use.
// For the allocation tests only; not with sanitizers, which interpose the
// same functions.
#pragma once

#include <cstdint>

namespace mrt_alloc_test {

// Allocations (malloc, calloc, realloc, aligned) since the program started.
std::uint64_t allocationCount() noexcept;

}  // namespace mrt_alloc_test
