#include "common/host_memory.hpp"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <utility>

#include "common/error.hpp"
#include "common/logging.hpp"

namespace mrt {

namespace {

std::atomic<std::uint64_t> g_reserved{0};
std::atomic<std::uint64_t> g_limit{0};  // 0: not set by the API, use defaultLimit()

std::uint64_t halfOfPhysicalMemory() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || pageSize <= 0) return std::uint64_t{8} << 30;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize) / 2;
}

// "1073741824", "512M", "16G"; 0 if the text is not such a size.
std::uint64_t parseSize(const char *text) noexcept {
  char *end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text) return 0;
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'K': case 'k': shift = 10; ++end; break;
    case 'M': case 'm': shift = 20; ++end; break;
    case 'G': case 'g': shift = 30; ++end; break;
    case 'T': case 't': shift = 40; ++end; break;
    default: return 0;
  }
  if (*end != '\0' || value > (~0ULL >> shift)) return 0;
  return static_cast<std::uint64_t>(value) << shift;
}

std::uint64_t defaultLimit() noexcept {
  static const std::uint64_t limit = [] {
    const char *text = std::getenv("MRT_HOST_MEMORY_LIMIT");
    if (text != nullptr && *text != '\0') {
      if (const std::uint64_t bytes = parseSize(text)) return bytes;
      log::logger().warn("MRT_HOST_MEMORY_LIMIT='{}' is not a size in bytes (e.g. 4G); using half the "
                         "machine's memory",
                         text);
    }
    return halfOfPhysicalMemory();
  }();
  return limit;
}

}  // namespace

std::uint64_t hostMemoryLimit() noexcept {
  const std::uint64_t set = g_limit.load(std::memory_order_relaxed);
  return set != 0 ? set : defaultLimit();
}

void setHostMemoryLimit(std::uint64_t bytes) noexcept { g_limit.store(bytes, std::memory_order_relaxed); }

std::uint64_t hostMemoryReserved() noexcept { return g_reserved.load(std::memory_order_relaxed); }

HostMemoryReservation::HostMemoryReservation(std::uint64_t bytes, LazyText what) {
  const std::uint64_t limit = hostMemoryLimit();
  std::uint64_t reserved = g_reserved.load(std::memory_order_relaxed);
  do {
    if (bytes > limit || reserved > limit - bytes) {
      throw Error(ErrorCode::ResourceExhausted,
                  "{} needs {} bytes of host memory, but only {} of the limit of {} bytes are free "
                  "(MRT_HOST_MEMORY_LIMIT or mrt_set_host_memory_limit() raise it)",
                  what(), bytes, reserved > limit ? 0 : limit - reserved, limit);
    }
  } while (!g_reserved.compare_exchange_weak(reserved, reserved + bytes, std::memory_order_relaxed));
  bytes_ = bytes;
}

HostMemoryReservation::~HostMemoryReservation() {
  if (bytes_ != 0) g_reserved.fetch_sub(bytes_, std::memory_order_relaxed);
}

HostMemoryReservation::HostMemoryReservation(HostMemoryReservation &&other) noexcept
    : bytes_(std::exchange(other.bytes_, 0)) {}

HostMemoryReservation &HostMemoryReservation::operator=(HostMemoryReservation &&other) noexcept {
  if (this != &other) {
    if (bytes_ != 0) g_reserved.fetch_sub(bytes_, std::memory_order_relaxed);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

}  // namespace mrt
