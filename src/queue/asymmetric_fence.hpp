// Asymmetric store-load fences for the ring buffer's sleep/wake handshake.
// Private to src/queue/.
//
// Waking a parked peer is a Dekker pattern: the fast side stores an index and
// then loads the peer's "sleeping" flag; the slow side stores the flag and
// then loads the index. Each side needs a store-load barrier between its two
// accesses, or both can miss each other and the sleeper never wakes. A real
// barrier (mfence / a locked instruction) on every write would drain the
// store buffer, including the store to the contended index line, and cost
// far more than the rest of the fast path.
//
// Linux's membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) moves that cost to the
// rare side: it runs a full barrier on every CPU currently running a thread
// of this process before it returns. So the fast side only has to keep its
// store and load in program order (a compiler barrier), and the side about to
// sleep, which is entering the kernel anyway, pays for one membarrier. This is
// the technique of folly's asymmetricThreadFenceHeavy and liburcu.
//
// Rings use this only when built with WakeFences::Automatic (the default is
// Symmetric: when threads share CPUs a side parks at every request, and a
// membarrier per park costs more than it saves). Where membarrier is missing
// (old kernels, seccomp filters) Automatic falls back to sequentially
// consistent operations on both sides.
#pragma once

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mrt::detail {

// True once this process is registered for expedited private membarriers.
// Registration happens on first use and holds for the process lifetime.
inline bool asymmetricFencesAvailable() noexcept {
  static const bool available = [] {
    const long commands = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
      return false;
    }
    return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
  }();
  return available;
}

// The slow side's barrier: after it returns, every other thread of the process
// has executed a full memory barrier, so either their earlier stores are
// visible to our next loads, or their next loads see our earlier stores.
// Only valid once asymmetricFencesAvailable() returned true.
inline void asymmetricFenceHeavy() noexcept {
  syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

}  // namespace mrt::detail
