// The host memory limit (include/mrt_c.h, "Host memory limit"), over
// src/common/host_memory.
#include "capi/guard.hpp"
#include "common/host_memory.hpp"

extern "C" {

MRT_API void mrt_set_host_memory_limit(uint64_t bytes) noexcept { mrt::setHostMemoryLimit(bytes); }

MRT_API uint64_t mrt_host_memory_limit(void) noexcept { return mrt::hostMemoryLimit(); }

MRT_API uint64_t mrt_host_memory_reserved(void) noexcept { return mrt::hostMemoryReserved(); }

}  // extern "C"
