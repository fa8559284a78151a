// mrt::SpscRingBuffer between two threads pinned to cores 0 and 1:
//   * throughput of pointer-sized items (items/s), next to a minimal
//     cached-index SPSC queue as the baseline for that figure;
//   * round-trip latency, a request over one ring and the reply over another,
//     next to a plain atomic ping-pong in which each thread owns its own cache
//     line: the cross-core hardware limit.
// This machine's cross-core latency switches between a fast and a slow state
// every few tens of seconds, so BM_RoundTripVsPingPong and
// BM_ThroughputVsMinimalQueue alternate the ring and its baseline in chunks of
// a millisecond or less on the same pair of threads and report their ratio;
// compare only figures measured side by side.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "queue/spsc_ring_buffer.hpp"

namespace {

using Item = void *;  // pointer-sized, like the InputData/OutputData pointers
using Ring = mrt::SpscRingBuffer<Item>;
constexpr std::size_t kCacheLine = 64;

Item itemOf(std::uint64_t n) { return reinterpret_cast<Item>(static_cast<std::uintptr_t>(n)); }
std::uint64_t numberOf(Item item) { return reinterpret_cast<std::uintptr_t>(item); }

// Pins the calling thread to one CPU for its lifetime and restores the old
// mask afterwards. Does nothing where that CPU does not exist (setaffinity
// fails).
class PinThisThread {
 public:
  explicit PinThisThread(int cpu) {
    // Not "is cpu in our current mask": a thread inherits its creator's mask,
    // which is already pinned to the other CPU.
    pinned_ = pthread_getaffinity_np(pthread_self(), sizeof(previous_), &previous_) == 0 &&
              cpu < CPU_SETSIZE;
    if (pinned_) {
      cpu_set_t only;
      CPU_ZERO(&only);
      CPU_SET(cpu, &only);
      pinned_ = pthread_setaffinity_np(pthread_self(), sizeof(only), &only) == 0;
    }
  }
  ~PinThisThread() {
    if (pinned_) {
      pthread_setaffinity_np(pthread_self(), sizeof(previous_), &previous_);
    }
  }
  PinThisThread(const PinThisThread &) = delete;
  PinThisThread &operator=(const PinThisThread &) = delete;

 private:
  cpu_set_t previous_{};
  bool pinned_ = false;
};

// ---- throughput --------------------------------------------------------------

constexpr std::uint64_t kItemsPerIteration = 1 << 16;

Ring::WakeFences fencesOf(const benchmark::State &state) {
  return state.range(1) == 0 ? Ring::WakeFences::Automatic : Ring::WakeFences::Symmetric;
}

// Items 1, 2, 3, ... through write(); the consumer readLock()s and
// readComplete()s each one and checks the order. Item 0 stops it.
void BM_RingThroughput(benchmark::State &state) {
  PinThisThread pin_producer(0);
  Ring ring(static_cast<std::size_t>(state.range(0)), "throughput", nullptr,
            std::chrono::nanoseconds::zero(), fencesOf(state));
  std::uint64_t out_of_order = 0;
  std::thread consumer([&] {
    PinThisThread pin_consumer(1);
    for (std::uint64_t expected = 1;; ++expected) {
      const std::uint64_t got = numberOf(ring.readLock());
      ring.readComplete();
      if (got == 0) {
        break;
      }
      out_of_order += got != expected;
    }
  });
  std::uint64_t next = 1;
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < kItemsPerIteration; ++i) {
      ring.write(itemOf(next++));
    }
  }
  ring.write(itemOf(0));
  consumer.join();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kItemsPerIteration));
  state.counters["out_of_order"] = static_cast<double>(out_of_order);
}
BENCHMARK(BM_RingThroughput)
    ->ArgNames({"buffers", "symmetric"})
    ->Args({1024, 0})
    ->Args({8192, 0})
    ->Args({8192, 1})
    ->UseRealTime();

// The baseline for throughput: the smallest correct SPSC queue with cached
// indices on separate cache lines and nothing else (no blocking, no read
// locks, no wakeups): what the hardware gives a queue of this shape.
class MinimalSpscQueue {
 public:
  explicit MinimalSpscQueue(std::size_t capacity) : slots_(capacity + 1) {}

  void push(Item item) {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    const std::size_t next = head + 1 == slots_.size() ? 0 : head + 1;
    while (next == tail_cache_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
    }
    slots_[head] = item;
    head_.store(next, std::memory_order_release);
  }

  Item pop() {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    while (tail == head_cache_) {
      head_cache_ = head_.load(std::memory_order_acquire);
    }
    const Item item = slots_[tail];
    tail_.store(tail + 1 == slots_.size() ? 0 : tail + 1, std::memory_order_release);
    return item;
  }

 private:
  std::vector<Item> slots_;
  alignas(kCacheLine) std::atomic<std::size_t> head_{0};
  alignas(kCacheLine) std::size_t tail_cache_ = 0;
  alignas(kCacheLine) std::atomic<std::size_t> tail_{0};
  alignas(kCacheLine) std::size_t head_cache_ = 0;
};

void BM_MinimalQueueThroughput(benchmark::State &state) {
  PinThisThread pin_producer(0);
  MinimalSpscQueue queue(static_cast<std::size_t>(state.range(0)));
  std::uint64_t out_of_order = 0;
  std::thread consumer([&] {
    PinThisThread pin_consumer(1);
    for (std::uint64_t expected = 1;; ++expected) {
      const std::uint64_t got = numberOf(queue.pop());
      if (got == 0) {
        break;
      }
      out_of_order += got != expected;
    }
  });
  std::uint64_t next = 1;
  for (auto _ : state) {
    for (std::uint64_t i = 0; i < kItemsPerIteration; ++i) {
      queue.push(itemOf(next++));
    }
  }
  queue.push(itemOf(0));
  consumer.join();
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kItemsPerIteration));
  state.counters["out_of_order"] = static_cast<double>(out_of_order);
}
BENCHMARK(BM_MinimalQueueThroughput)->ArgName("buffers")->Arg(1024)->Arg(8192)->UseRealTime();

// Alternates chunks of items through the ring and through the minimal queue
// on the same two threads, so that both see the same machine state, and
// reports each one's rate and ring / minimal. A chunk ends when the consumer
// has taken its last item. One iteration = one chunk of each.
constexpr std::uint64_t kThroughputChunk = 1 << 16;

void BM_ThroughputVsMinimalQueue(benchmark::State &state) {
  PinThisThread pin_producer(0);
  const auto buffers = static_cast<std::size_t>(state.range(0));
  Ring ring(buffers, "throughput");
  MinimalSpscQueue queue(buffers);
  std::atomic<std::uint64_t> chunks_consumed{0};
  std::uint64_t out_of_order = 0;
  std::thread consumer([&] {
    PinThisThread pin_consumer(1);
    std::uint64_t ring_expected = 1;
    std::uint64_t queue_expected = 1;
    for (;;) {  // item 0 on the ring stops it; the same check on both sides
      for (std::uint64_t i = 0; i < kThroughputChunk; ++i, ++ring_expected) {
        const std::uint64_t got = numberOf(ring.readLock());
        ring.readComplete();
        if (got == 0) {
          return;
        }
        out_of_order += got != ring_expected;
      }
      chunks_consumed.fetch_add(1, std::memory_order_release);
      for (std::uint64_t i = 0; i < kThroughputChunk; ++i, ++queue_expected) {
        const std::uint64_t got = numberOf(queue.pop());
        if (got == 0) {
          return;
        }
        out_of_order += got != queue_expected;
      }
      chunks_consumed.fetch_add(1, std::memory_order_release);
    }
  });
  using Clock = std::chrono::steady_clock;
  Clock::duration ring_time{};
  Clock::duration queue_time{};
  std::uint64_t next_ring = 1;
  std::uint64_t next_queue = 1;
  std::uint64_t chunks = 0;
  const auto wait_for_consumer = [&] {
    ++chunks;
    while (chunks_consumed.load(std::memory_order_acquire) != chunks) {
    }
  };
  for (auto _ : state) {
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < kThroughputChunk; ++i) {
      ring.write(itemOf(next_ring++));
    }
    wait_for_consumer();
    const auto ring_done = Clock::now();
    for (std::uint64_t i = 0; i < kThroughputChunk; ++i) {
      queue.push(itemOf(next_queue++));
    }
    wait_for_consumer();
    const auto queue_done = Clock::now();
    ring_time += ring_done - start;
    queue_time += queue_done - ring_done;
  }
  ring.write(itemOf(0));
  consumer.join();
  const double items = static_cast<double>(state.iterations() * kThroughputChunk);
  const double ring_rate = items / std::chrono::duration<double>(ring_time).count();
  const double queue_rate = items / std::chrono::duration<double>(queue_time).count();
  state.counters["ring_items_per_s"] = ring_rate;
  state.counters["minimal_items_per_s"] = queue_rate;
  state.counters["ring/minimal"] = ring_rate / queue_rate;
  state.counters["out_of_order"] = static_cast<double>(out_of_order);
}
BENCHMARK(BM_ThroughputVsMinimalQueue)->ArgName("buffers")->Arg(1024)->UseRealTime()->MinTime(1.0);

// ---- round trip ---------------------------------------------------------------

constexpr std::size_t kRoundTripBuffers = 16;

// One ring round trip: the request goes out, the echo comes back.
std::uint64_t ringRoundTrip(Ring &requests, Ring &replies, std::uint64_t n) {
  requests.write(itemOf(n));
  const std::uint64_t echoed = numberOf(replies.readLock());
  replies.readComplete();
  return echoed;
}

// The echo side of a ring round trip. False when asked to stop (item 0).
bool ringEcho(Ring &requests, Ring &replies) {
  const Item request = requests.readLock();
  requests.readComplete();
  if (request == nullptr) {
    return false;
  }
  replies.write(request);
  return true;
}

void BM_RingRoundTrip(benchmark::State &state) {
  PinThisThread pin_requester(0);
  Ring requests(kRoundTripBuffers, "requests");
  Ring replies(kRoundTripBuffers, "replies");
  std::thread echo([&] {
    PinThisThread pin_echo(1);
    while (ringEcho(requests, replies)) {
    }
  });
  std::uint64_t n = 1;
  std::uint64_t wrong_replies = 0;
  for (auto _ : state) {
    wrong_replies += ringRoundTrip(requests, replies, n) != n;
    ++n;
  }
  requests.write(itemOf(0));
  echo.join();
  state.counters["wrong_replies"] = static_cast<double>(wrong_replies);
}
BENCHMARK(BM_RingRoundTrip)->UseRealTime();

// Each thread writes only its own cache line and spins reading the other's.
// Two ways to spin: plain loads as fast as the core issues them, or with the
// pause hint between loads, which on some machines is the faster of the two
// (fewer loads compete with the other core for the line). The ring is
// compared with whichever was faster.
struct PingPongLines {
  alignas(kCacheLine) std::atomic<std::uint64_t> ping{0};  // written by the requester
  alignas(kCacheLine) std::atomic<std::uint64_t> pong{0};  // written by the echo thread
};
constexpr std::uint64_t kStopPingPong = ~std::uint64_t{0};

enum class Spin { Plain, Pause };

template <Spin spin>
std::uint64_t spinUntilChanged(const std::atomic<std::uint64_t> &line, std::uint64_t old) {
  std::uint64_t seen;
  while ((seen = line.load(std::memory_order_acquire)) == old) {
    if constexpr (spin == Spin::Pause) {
      mrt::detail::cpuRelax();
    }
  }
  return seen;
}

template <Spin spin>
void pingPongRoundTrip(PingPongLines &lines, std::uint64_t n) {
  lines.ping.store(n, std::memory_order_release);
  spinUntilChanged<spin>(lines.pong, n - 1);
}

// Echoes ping number `n`. False when asked to stop.
template <Spin spin>
bool pingPongEcho(PingPongLines &lines, std::uint64_t n) {
  if (spinUntilChanged<spin>(lines.ping, n - 1) == kStopPingPong) {
    return false;
  }
  lines.pong.store(n, std::memory_order_release);
  return true;
}

template <Spin spin>
void BM_AtomicPingPong(benchmark::State &state) {
  PinThisThread pin_requester(0);
  PingPongLines lines;
  std::thread echo([&] {
    PinThisThread pin_echo(1);
    for (std::uint64_t n = 1; pingPongEcho<spin>(lines, n); ++n) {
    }
  });
  std::uint64_t n = 1;
  for (auto _ : state) {
    pingPongRoundTrip<spin>(lines, n++);
  }
  lines.ping.store(kStopPingPong, std::memory_order_release);
  echo.join();
}
BENCHMARK(BM_AtomicPingPong<Spin::Plain>)->UseRealTime();
BENCHMARK(BM_AtomicPingPong<Spin::Pause>)->UseRealTime();

// Alternates chunks of ring round trips and of both ping-pongs on the same two
// threads, so that all three see the same machine state, and reports the mean
// round trip of each and ring / (the faster ping-pong). One iteration = one
// chunk of each.
constexpr int kChunk = 2000;

void BM_RoundTripVsPingPong(benchmark::State &state) {
  PinThisThread pin_requester(0);
  Ring requests(kRoundTripBuffers, "requests");
  Ring replies(kRoundTripBuffers, "replies");
  PingPongLines lines;
  std::thread echo([&] {
    PinThisThread pin_echo(1);
    for (std::uint64_t n = 1;;) {
      for (int i = 0; i < kChunk; ++i) {
        if (!ringEcho(requests, replies)) {
          return;
        }
      }
      for (int i = 0; i < kChunk; ++i) {
        pingPongEcho<Spin::Plain>(lines, n++);
      }
      for (int i = 0; i < kChunk; ++i) {
        pingPongEcho<Spin::Pause>(lines, n++);
      }
    }
  });
  using Clock = std::chrono::steady_clock;
  Clock::duration ring_time{};
  Clock::duration plain_time{};
  Clock::duration pause_time{};
  std::uint64_t ring_n = 1;
  std::uint64_t ping_n = 1;
  std::uint64_t wrong_replies = 0;
  for (auto _ : state) {
    const auto start = Clock::now();
    for (int i = 0; i < kChunk; ++i, ++ring_n) {
      wrong_replies += ringRoundTrip(requests, replies, ring_n) != ring_n;
    }
    const auto ring_done = Clock::now();
    for (int i = 0; i < kChunk; ++i) {
      pingPongRoundTrip<Spin::Plain>(lines, ping_n++);
    }
    const auto plain_done = Clock::now();
    for (int i = 0; i < kChunk; ++i) {
      pingPongRoundTrip<Spin::Pause>(lines, ping_n++);
    }
    const auto pause_done = Clock::now();
    ring_time += ring_done - start;
    plain_time += plain_done - ring_done;
    pause_time += pause_done - plain_done;
  }
  requests.write(itemOf(0));
  echo.join();
  const double trips = static_cast<double>(state.iterations()) * kChunk;
  const auto mean_ns = [trips](Clock::duration total) {
    return std::chrono::duration<double, std::nano>(total).count() / trips;
  };
  const double ring_ns = mean_ns(ring_time);
  const double plain_ns = mean_ns(plain_time);
  const double pause_ns = mean_ns(pause_time);
  state.counters["ring_rt_ns"] = ring_ns;
  state.counters["pingpong_rt_ns"] = plain_ns;
  state.counters["pingpong_pause_rt_ns"] = pause_ns;
  state.counters["ring/pingpong"] = ring_ns / std::min(plain_ns, pause_ns);
  state.counters["wrong_replies"] = static_cast<double>(wrong_replies);
}
BENCHMARK(BM_RoundTripVsPingPong)->UseRealTime()->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
