// The cap on host memory that models make the runtime allocate. A model file
// says how large its device memory, remote buffers and streams are; the
// runtime allocates them on the host (the simulated device lives there), so a
// file that lies would otherwise get whatever it asks for, up to an OOM kill.
// Every such allocation is reserved here first, against one process-wide
// limit: MRT_HOST_MEMORY_LIMIT (bytes, with an optional K, M, G or T suffix)
// or mrt_set_host_memory_limit(), by default half the machine's memory.
#pragma once

#include <cstdint>

#include "common/lazy_text.hpp"

namespace mrt {

std::uint64_t hostMemoryLimit() noexcept;
// 0 restores the default (the environment's or half the machine's memory).
void setHostMemoryLimit(std::uint64_t bytes) noexcept;
std::uint64_t hostMemoryReserved() noexcept;

// Holds `bytes` of the limit until destroyed. Throws
// mrt::Error(ResourceExhausted) naming `what()`, the bytes and the limit if
// they do not fit beside what is reserved already.
class HostMemoryReservation {
 public:
  HostMemoryReservation() = default;
  HostMemoryReservation(std::uint64_t bytes, LazyText what);
  ~HostMemoryReservation();
  HostMemoryReservation(HostMemoryReservation &&other) noexcept;
  HostMemoryReservation &operator=(HostMemoryReservation &&other) noexcept;
  HostMemoryReservation(const HostMemoryReservation &) = delete;
  HostMemoryReservation &operator=(const HostMemoryReservation &) = delete;

  std::uint64_t bytes() const noexcept { return bytes_; }

 private:
  std::uint64_t bytes_ = 0;
};

}  // namespace mrt
