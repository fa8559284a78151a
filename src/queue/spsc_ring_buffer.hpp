// mrt::SpscRingBuffer<BufferType>: the fixed-size, single-producer,
// single-consumer ring that carries InputData/OutputData pointers between the
// caller's thread and a replica's device thread (seed 001, "SpscRingBuffer").
//
// One producer thread calls writeLock/writeComplete/write; one consumer thread
// calls readLock/readComplete/readAvailable. invalidate(), readReset(),
// isValid(), getState(), numBuffers() and label() may be called from any
// thread; reset() and the destructor only while no other thread is inside a
// call on the ring (invalidate() first to get blocked threads out).
//
// Design, after rigtorp's SPSCQueue:
//   * Positions are 64-bit counts that never wrap in practice; each side also
//     keeps the matching slot index so the hot path never divides.
//   * The producer's published count and the consumer's published count live
//     on separate cache lines, and each side caches the other's count on a
//     line of its own, so a side only touches the other's line when its cached
//     view says the ring is full (producer) or empty (consumer).
//   * A side that cannot proceed polls while that pays (not while the peer
//     is parked here, not when its thread may use one CPU only, and for a
//     budget that adapts to how recent waits ended: AdaptiveSpin in
//     common/adaptive_spin.hpp), then parks on a futex. Its
//     peer checks a "sleeping" word after each publish, so nobody pays for a
//     syscall while nobody sleeps. That check needs a store-load barrier on
//     both sides (WakeFences): by default a sequentially consistent store and
//     load, a few cycles per publish. The membarrier alternative
//     (asymmetric_fence.hpp) saves them on the publishing side but costs the
//     parking side a syscall that interrupts every CPU running a thread of
//     the process, and when threads outnumber CPUs a side parks at every
//     request: measured with the whole process on one CPU it gained nothing
//     (docs/performance.md).
//   * A waiting consumer also prefetches the buffer it will read, so that
//     fetching it overlaps noticing the new count; a producer facing a full
//     ring waits for a quarter of it to drain while the consumer keeps
//     draining (waitUntilWritable). Both were measured with
//     bench/queue/bench_spsc_ring_buffer.cpp.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "common/error.hpp"
#include "common/logging.hpp"
#include "queue/asymmetric_fence.hpp"
#include "common/adaptive_spin.hpp"
#include "common/futex.hpp"

namespace mrt {

template <typename BufferType>
class SpscRingBuffer {
 public:
  // Signature of the function to call when readLock() times out.
  using ReadTimeoutCallback = std::function<void(SpscRingBuffer *)>;

  // How the wake handshake orders its store and load (asymmetric_fence.hpp).
  // Symmetric exists for kernels without membarrier and to measure the gain.
  enum class WakeFences {
    Automatic,  // membarrier when the kernel offers it, otherwise Symmetric
    Symmetric,  // sequentially consistent store and load on both sides (default)
  };

  // num_buffers: capacity (at least 1). label: the name used in getState()
  // and error messages. timeout_cb: called on the consumer's thread, with
  // this ring, every timeout_ns that readLock() keeps waiting for data
  // (never if timeout_ns is 0 or timeout_cb is empty).
  SpscRingBuffer(std::size_t num_buffers, const std::string &label,
                 ReadTimeoutCallback timeout_cb = nullptr,
                 std::chrono::nanoseconds timeout_ns = std::chrono::nanoseconds::zero(),
                 WakeFences fences = WakeFences::Symmetric)
      : num_buffers_(num_buffers),
        label_(label),
        timeout_cb_(std::move(timeout_cb)),
        timeout_(timeout_ns),
        asymmetric_fences_(fences == WakeFences::Automatic && detail::asymmetricFencesAvailable()) {
    if (num_buffers == 0) {
      throw Error(ErrorCode::InvalidArgument,
                  "SpscRingBuffer '{}': num_buffers must be at least 1, got 0", label_);
    }
    if (timeout_ns.count() < 0) {
      throw Error(ErrorCode::InvalidArgument,
                  "SpscRingBuffer '{}': timeout_ns must not be negative, got {}", label_,
                  timeout_ns.count());
    }
    buffers_.resize(num_buffers);
  }

  SpscRingBuffer(const SpscRingBuffer &other) = delete;
  SpscRingBuffer(const SpscRingBuffer &&other) noexcept = delete;
  SpscRingBuffer &operator=(const SpscRingBuffer &other) = delete;
  SpscRingBuffer &operator=(SpscRingBuffer &&other) noexcept = delete;
  ~SpscRingBuffer() = default;

  // ---- producer side -------------------------------------------------------

  // writeLock(), copy obj into the buffer, writeComplete(). Never blocks on an
  // invalidated ring: if the ring is full then, obj is dropped.
  void write(const BufferType &obj) {
    if (!write_locked_.load(std::memory_order_relaxed) &&
        write_pos_ - read_complete_cache_ != num_buffers_) [[likely]] {
      // Free buffer known without asking the consumer: fill and publish it
      // without the write-lock bookkeeping.
      buffers_[write_slot_] = obj;
      advanceWriteAndPublish();
      return;
    }
    BufferType *slot = writeLock();
    if (slot == &invalid_write_buffer_) {
      return;
    }
    *slot = obj;
    writeComplete();
  }

  // Returns the buffer to fill, blocking while the ring is full. Returns the
  // same buffer again while it stays write-locked. On an invalidated ring it
  // may return a scratch buffer: check isValid() before using the result.
  BufferType *writeLock() {
    if (write_locked_.load(std::memory_order_relaxed)) {
      return &buffers_[write_slot_];
    }
    if (write_pos_ - read_complete_cache_ == num_buffers_) [[unlikely]] {
      // Full as far as we know: look at the consumer's real count. acquire
      // pairs with readComplete's release, so the consumer is done reading
      // the slot before we overwrite it.
      read_complete_cache_ = read_complete_.load(std::memory_order_acquire);
      if (write_pos_ - read_complete_cache_ == num_buffers_ && !waitUntilWritable()) {
        return &invalid_write_buffer_;
      }
    }
    // relaxed: write_locked_ is producer state; other threads read it only for
    // getState().
    write_locked_.store(true, std::memory_order_relaxed);
    return &buffers_[write_slot_];
  }

  // Producer: the index (0 .. numBuffers()-1) of the buffer writeLock()
  // returns next, or returned while it stays write-locked.
  std::size_t writeSlot() const noexcept { return write_slot_; }

  // Producer: true if writeLock() would return at once (a buffer is free or
  // already write-locked, or the ring is invalidated). Only the producer adds
  // buffers, so the answer stays true until it writes.
  bool writeAvailable() {
    if (write_locked_.load(std::memory_order_relaxed) || !isValid()) {
      return true;
    }
    if (write_pos_ - read_complete_cache_ != num_buffers_) {
      return true;
    }
    // acquire: as in writeLock, the consumer is done with the slot it freed.
    read_complete_cache_ = read_complete_.load(std::memory_order_acquire);
    return write_pos_ - read_complete_cache_ != num_buffers_;
  }

  // Any thread: every buffer is written and not yet read-completed, so a
  // writeLock() would wait for the consumer. A snapshot: either side may
  // change it at once, and a buffer write-locked but not yet published does
  // not count.
  bool isFull() const {
    // acquire on both counts, as in readAvailable().
    return write_count_.load(std::memory_order_acquire) - read_complete_.load(std::memory_order_acquire) >=
           num_buffers_;
  }

  // Publishes the write-locked buffer to the consumer.
  void writeComplete() {
    if (!write_locked_.load(std::memory_order_relaxed)) [[unlikely]] {
      if (!isValid()) {
        return;  // writeLock() handed out a scratch buffer: nothing to publish
      }
      throw Error(ErrorCode::FailedPrecondition,
                  "SpscRingBuffer '{}': writeComplete() called without a write-locked buffer "
                  "({} of {} buffers written and not yet read-completed)",
                  label_, write_pos_ - read_complete_.load(std::memory_order_acquire),
                  num_buffers_);
    }
    write_locked_.store(false, std::memory_order_relaxed);
    advanceWriteAndPublish();
  }

  // ---- consumer side -------------------------------------------------------

  // Returns the next unread buffer, blocking while there is none. Several
  // buffers may be read-locked at once; each call returns the next one. On an
  // invalidated ring it may return a scratch buffer: check isValid().
  const BufferType &readLock() {
    applyPendingReadReset();
    const std::uint64_t position = read_lock_pos_.load(std::memory_order_relaxed);
    if (position == write_count_cache_) [[unlikely]] {
      // Empty as far as we know: look at the producer's real count. acquire
      // pairs with writeComplete's release, so the slot's contents written
      // before it are visible to us.
      write_count_cache_ = write_count_.load(std::memory_order_acquire);
      if (position == write_count_cache_ && !waitUntilReadable()) {
        return invalid_read_buffer_;
      }
    }
    const BufferType &buffer = buffers_[read_lock_slot_];
    // relaxed: only the consumer writes read_lock_pos_; other threads read it
    // for readAvailable()/getState() only.
    read_lock_pos_.store(read_lock_pos_.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
    if (++read_lock_slot_ == num_buffers_) {
      read_lock_slot_ = 0;
    }
    return buffer;
  }

  // Releases the oldest read-locked buffer back to the producer.
  void readComplete() {
    applyPendingReadReset();
    if (read_complete_pos_ == read_lock_pos_.load(std::memory_order_relaxed)) [[unlikely]] {
      if (!isValid()) {
        return;  // readLock() handed out a scratch buffer: nothing to release
      }
      throw Error(ErrorCode::FailedPrecondition,
                  "SpscRingBuffer '{}': readComplete() called with no read-locked buffer "
                  "({} of {} buffers readable)",
                  label_, write_count_.load(std::memory_order_acquire) - read_complete_pos_,
                  num_buffers_);
    }
    ++read_complete_pos_;
    if (++read_complete_slot_ == num_buffers_) {
      read_complete_slot_ = 0;
    }
    publish(read_complete_, read_complete_pos_, writer_sleeping_);
  }

  // Puts every read-locked buffer back at the front of the read queue, so the
  // next readLock() returns the oldest of them again. May be called from a
  // thread other than the consumer's: the consumer applies it at its next
  // call, and a readLock() blocked on an empty ring wakes up to do so.
  void readReset() {
    // seq_cst: pairs with the parking consumer's seq_cst store of its flag
    // and load of this one (see parkOnce), so it either sees the request or
    // we see it asleep and wake it.
    reset_pending_.store(true, std::memory_order_seq_cst);
    wakeIfParked(reader_sleeping_);
  }

  // True if readLock() would return a buffer without blocking.
  bool readAvailable() const {
    // acquire on both published counts: we only compare them, but a consumer
    // that then calls readLock() must not see older values than ours.
    const std::uint64_t written = write_count_.load(std::memory_order_acquire);
    const std::uint64_t next = reset_pending_.load(std::memory_order_acquire)
                                   ? read_complete_.load(std::memory_order_acquire)
                                   : read_lock_pos_.load(std::memory_order_relaxed);
    return written != next;
  }

  // ---- either side ---------------------------------------------------------

  // Makes every blocking call return at once, now and later, and wakes both
  // sides if they are parked. Buffers returned afterwards must be ignored.
  void invalidate() {
    // seq_cst: pairs with the parking sides' seq_cst flag store and validity
    // load, so a side about to park either sees false or gets woken below.
    valid_.store(false, std::memory_order_seq_cst);
    wakeIfParked(reader_sleeping_);
    wakeIfParked(writer_sleeping_);
  }

  // Back to the state after construction: empty, nothing locked, valid, all
  // buffers default-constructed. Precondition: no other thread is inside a
  // call on this ring, and the threads that use it next synchronise with the
  // caller (for example by being started or joined after).
  void reset() {
    std::fill(buffers_.begin(), buffers_.end(), BufferType{});
    write_pos_ = 0;
    write_slot_ = 0;
    read_complete_cache_ = 0;
    write_locked_.store(false, std::memory_order_relaxed);
    write_count_.store(0, std::memory_order_relaxed);
    read_lock_pos_.store(0, std::memory_order_relaxed);
    read_lock_slot_ = 0;
    read_complete_pos_ = 0;
    read_complete_slot_ = 0;
    write_count_cache_ = 0;
    read_complete_.store(0, std::memory_order_relaxed);
    reset_pending_.store(false, std::memory_order_relaxed);
    reader_sleeping_.store(0, std::memory_order_relaxed);
    writer_sleeping_.store(0, std::memory_order_relaxed);
    valid_.store(true, std::memory_order_seq_cst);
  }

  bool isValid() const {
    // acquire: whoever invalidated may have published state we act on next.
    return valid_.load(std::memory_order_acquire);
  }

  // One line describing the ring, prefixed with `prefix`, for debugging.
  std::string getState(const std::string &prefix) const {
    // Loaded in the order the counts chase each other (completed <= locked <=
    // written), so that a snapshot taken while both sides run never shows a
    // negative difference; free space is clamped for the same reason.
    const std::uint64_t completed = read_complete_.load(std::memory_order_acquire);
    const std::uint64_t read_locked = read_lock_pos_.load(std::memory_order_acquire);
    const std::uint64_t written = write_count_.load(std::memory_order_acquire);
    const std::uint64_t in_use = std::min<std::uint64_t>(written - completed, num_buffers_);
    return fmt::format(
        "{}SpscRingBuffer '{}': {}, {} buffers, written {}, read-locked {}, read-completed {}, "
        "unread {}, free {}, write-locked {}, read reset pending {}, consumer parked {}, "
        "producer parked {}",
        prefix, label_, isValid() ? "valid" : "invalidated", num_buffers_, written,
        read_locked - completed, completed, written - read_locked,
        num_buffers_ - in_use,
        write_locked_.load(std::memory_order_relaxed) ? "yes" : "no",
        reset_pending_.load(std::memory_order_relaxed) ? "yes" : "no",
        reader_sleeping_.load(std::memory_order_relaxed) != 0 ? "yes" : "no",
        writer_sleeping_.load(std::memory_order_relaxed) != 0 ? "yes" : "no");
  }

  // Logs getState(prefix) at info level (the label names the ring).
  void printState(const std::string &prefix) const { log::logger().info("{}", getState(prefix)); }

  std::size_t numBuffers() const { return num_buffers_; }
  const std::string &label() const { return label_; }

 private:
  static constexpr std::size_t kCacheLine = 64;  // x86-64 and most AArch64 cores
  // A producer facing a full ring waits for at most this many free buffers,
  // and for none beyond what is free once the consumer has not released a
  // buffer for kPollsWithoutRelease polls (see waitUntilWritable).
  static constexpr std::uint64_t kMaxBuffersToWaitFor = 256;
  static constexpr unsigned kPollsWithoutRelease = 32;

  using Clock = std::chrono::steady_clock;

  // Producer: moves past the buffer just filled and hands it to the consumer.
  void advanceWriteAndPublish() {
    ++write_pos_;
    if (++write_slot_ == num_buffers_) {
      write_slot_ = 0;
    }
    publish(write_count_, write_pos_, reader_sleeping_);
    if (write_pos_ - read_complete_cache_ == num_buffers_) [[unlikely]] {
      // Our view of the consumer's count says the ring is now full, which is
      // usually just stale. Refresh it here, where nothing waits for the
      // answer and the load's cache miss overlaps whatever we do next,
      // rather than in the next writeLock(), which would stall on it.
      read_complete_cache_ = read_complete_.load(std::memory_order_acquire);
    }
  }

  // Stores a side's new count and wakes the peer if it is parked.
  void publish(std::atomic<std::uint64_t> &count, std::uint64_t value,
               std::atomic<std::uint32_t> &peer_sleeping) {
    std::uint32_t sleeping;
    if (asymmetric_fences_) [[likely]] {
      // release: everything this side did to the slot (filled it, or finished
      // reading it) happens-before the peer's acquire load of the count.
      count.store(value, std::memory_order_release);
      // Compiler-only barrier: keep the flag load after the store in program
      // order. The hardware store-load barrier is the parking peer's
      // membarrier, which either makes our store visible to its re-check or
      // makes its flag visible to our load.
      std::atomic_signal_fence(std::memory_order_seq_cst);
      sleeping = peer_sleeping.load(std::memory_order_relaxed);
    } else {
      // seq_cst store then seq_cst load: the symmetric Dekker handshake with
      // the parking peer's seq_cst flag store and count load.
      count.store(value, std::memory_order_seq_cst);
      sleeping = peer_sleeping.load(std::memory_order_seq_cst);
    }
    if (sleeping != 0) [[unlikely]] {
      wakeIfParked(peer_sleeping);
    }
  }

  // Clears a side's sleeping flag and wakes it if it was set. exchange so
  // that only one waker makes the syscall; seq_cst for the handshakes with
  // invalidate() and readReset() (see those).
  static void wakeIfParked(std::atomic<std::uint32_t> &sleeping) {
    if (sleeping.exchange(0, std::memory_order_seq_cst) != 0) {
      detail::futexWake(sleeping);
    }
  }

  // Parks the calling side on `sleeping` unless `ready()` turns true first;
  // returns after a wake, a timeout or a spurious wakeup (callers loop).
  template <typename Ready>
  bool parkOnce(std::atomic<std::uint32_t> &sleeping, Ready ready,
                std::chrono::nanoseconds timeout) {
    // seq_cst: the flag must be visible before we re-check the peer's count
    // (store-load order); with asymmetric fences the membarrier below also
    // orders the peer's publish against this re-check.
    sleeping.store(1, std::memory_order_seq_cst);
    if (asymmetric_fences_) {
      detail::asymmetricFenceHeavy();
    }
    if (ready()) {
      sleeping.store(0, std::memory_order_relaxed);
      return true;
    }
    detail::futexWait(sleeping, 1, timeout);
    // Awake again: clear the flag so the peer's publish skips the syscall
    // while we re-check. Same location as the store above, so no reordering.
    sleeping.store(0, std::memory_order_relaxed);
    return false;
  }

  // Consumer: waits for an unread buffer. False if the ring was invalidated.
  bool waitUntilReadable() {
    const bool timed = timeout_cb_ && timeout_.count() > 0;
    Clock::time_point deadline = timed ? Clock::now() + timeout_ : Clock::time_point::max();
    // Consumer's view of "something to read": applies a pending readReset()
    // and refreshes the producer's count. seq_cst loads on the parking path
    // complete the handshakes; acquire while spinning (pairs with the
    // producer's release so the slot contents are visible).
    const auto readable = [this](std::memory_order order) {
      if (!valid_.load(order)) {
        return true;
      }
      if (reset_pending_.load(order)) {
        applyPendingReadReset();
      }
      write_count_cache_ = write_count_.load(order);
      return write_count_cache_ != read_lock_pos_.load(std::memory_order_relaxed);
    };
    const auto fire_timeout_if_due = [&] {
      if (timed && Clock::now() >= deadline) {
        timeout_cb_(this);
        deadline = Clock::now() + timeout_;
      }
    };
    // Polls while the producer is not parked in this ring (it may be about
    // to write), for as long as polls recently paid (common/adaptive_spin.hpp).
    const auto readable_soon = [&] {
      if (readable(std::memory_order_acquire)) {
        return true;
      }
      // Pull the slot we will read into our cache while we wait, so that
      // noticing the new count and fetching the slot overlap instead of
      // costing two cross-core transfers one after the other.
      prefetchForRead(&buffers_[read_lock_slot_]);
      return false;
    };
    const auto producer_running = [this] { return writer_sleeping_.load(std::memory_order_relaxed) == 0; };
    if (read_spin_.spin(readable_soon, producer_running)) {
      return isValid();
    }
    for (;;) {
      fire_timeout_if_due();
      const auto timeout = timed ? std::max(std::chrono::nanoseconds::zero(),
                                            std::chrono::nanoseconds(deadline - Clock::now()))
                                 : std::chrono::nanoseconds(-1);
      if (parkOnce(reader_sleeping_, [&] { return readable(std::memory_order_seq_cst); },
                   timeout)) {
        return isValid();
      }
    }
  }

  // Producer: waits for a free buffer. False if the ring was invalidated.
  //
  // A full ring means the consumer is the slower side. Refilling each buffer
  // the moment it is released keeps both threads writing the same few cache
  // lines of the ring (its buffers and the consumer's count), which costs
  // about a third of the throughput. So while the consumer keeps releasing
  // buffers, the producer holds out for a quarter of the ring: the data it
  // writes still lands behind everything already queued, so the consumer
  // never waits for it. Once the consumer stops releasing (it may want a new
  // buffer before it releases more), the producer takes what is free.
  bool waitUntilWritable() {
    const auto writable = [this](std::memory_order order) {
      if (!valid_.load(order)) {
        return true;
      }
      read_complete_cache_ = read_complete_.load(order);
      return write_pos_ - read_complete_cache_ != num_buffers_;
    };
    const std::uint64_t worth_waiting_for =
        std::clamp<std::uint64_t>(num_buffers_ / 4, 1, kMaxBuffersToWaitFor);
    std::uint64_t last_seen = read_complete_cache_;
    unsigned polls_without_release = 0;
    const auto worth_writing = [&] {
      if (!writable(std::memory_order_acquire)) {
        return false;
      }
      if (!isValid() || num_buffers_ - (write_pos_ - read_complete_cache_) >= worth_waiting_for) {
        return true;
      }
      polls_without_release = read_complete_cache_ == last_seen ? polls_without_release + 1 : 0;
      last_seen = read_complete_cache_;
      return polls_without_release >= kPollsWithoutRelease;
    };
    const auto consumer_running = [this] { return reader_sleeping_.load(std::memory_order_relaxed) == 0; };
    // Once polling stops, any free buffer will do.
    if (write_spin_.spin(worth_writing, consumer_running) || writable(std::memory_order_acquire)) {
      return isValid();
    }
    for (;;) {
      if (parkOnce(writer_sleeping_, [&] { return writable(std::memory_order_seq_cst); },
                   std::chrono::nanoseconds(-1))) {
        return isValid();
      }
    }
  }

  // Consumer: carries out a readReset() requested since our last call.
  void applyPendingReadReset() {
    // relaxed check: a request we miss now is applied at the next call or by
    // the parking handshake; the exchange takes it exactly once.
    if (reset_pending_.load(std::memory_order_relaxed) &&
        reset_pending_.exchange(false, std::memory_order_acq_rel)) [[unlikely]] {
      read_lock_pos_.store(read_complete_pos_, std::memory_order_relaxed);
      read_lock_slot_ = read_complete_slot_;
    }
  }

  static void prefetchForRead(const BufferType *buffer) {
    const auto first = reinterpret_cast<std::uintptr_t>(buffer) & ~(kCacheLine - 1);
    const auto last = reinterpret_cast<std::uintptr_t>(buffer + 1) - 1;
    for (std::uintptr_t line = first; line <= last; line += kCacheLine) {
      __builtin_prefetch(reinterpret_cast<const void *>(line), 0, 3);
    }
  }

  // Read-only after construction, read by both sides.
  const std::size_t num_buffers_;
  const std::string label_;
  const ReadTimeoutCallback timeout_cb_;
  const std::chrono::nanoseconds timeout_;
  const bool asymmetric_fences_;
  std::vector<BufferType> buffers_;

  // Producer's published count: buffers written so far. The consumer reads
  // this line only when its cached copy says the ring is empty.
  alignas(kCacheLine) std::atomic<std::uint64_t> write_count_{0};

  // Producer-only state.
  alignas(kCacheLine) std::uint64_t write_pos_ = 0;  // == write_count_, without the atomic load
  std::uint64_t read_complete_cache_ = 0;            // last read_complete_ we saw
  std::size_t write_slot_ = 0;                       // write_pos_ % num_buffers_
  std::atomic<bool> write_locked_{false};
  detail::AdaptiveSpin write_spin_;                   // how long a producer facing a full ring polls

  // Consumer's published count: buffers read-completed (free again).
  alignas(kCacheLine) std::atomic<std::uint64_t> read_complete_{0};

  // Consumer-only state (read_lock_pos_ is atomic only so that other threads
  // may read it for readAvailable()/getState()).
  alignas(kCacheLine) std::atomic<std::uint64_t> read_lock_pos_{0};  // buffers read-locked so far
  std::uint64_t write_count_cache_ = 0;                              // last write_count_ we saw
  std::uint64_t read_complete_pos_ = 0;  // == read_complete_, without the atomic load
  std::size_t read_lock_slot_ = 0;       // read_lock_pos_ % num_buffers_
  std::size_t read_complete_slot_ = 0;   // read_complete_pos_ % num_buffers_
  detail::AdaptiveSpin read_spin_;       // how long a consumer facing an empty ring polls

  // Rarely written control words, read on the fast paths.
  alignas(kCacheLine) std::atomic<bool> valid_{true};
  std::atomic<bool> reset_pending_{false};
  std::atomic<std::uint32_t> reader_sleeping_{0};  // futex word: consumer parked
  std::atomic<std::uint32_t> writer_sleeping_{0};  // futex word: producer parked

  // What writeLock()/readLock() hand out on an invalidated ring, one per side
  // so that the two never share memory.
  alignas(kCacheLine) BufferType invalid_write_buffer_{};
  alignas(kCacheLine) BufferType invalid_read_buffer_{};
};

}  // namespace mrt
