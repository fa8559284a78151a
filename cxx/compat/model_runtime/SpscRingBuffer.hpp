// model_runtime::SpscRingBuffer (seed 001): a fixed-size ring of buffers
// between one producer thread (writeLock/writeComplete) and one consumer
// thread (readLock/readComplete), header-only for applications that build
// their own pipelines the seed's way. libmrt's queue manager has its own
// lock-free ring inside the library; this one is a mutex and condition
// variable, simple and ThreadSanitizer-clean. invalidate(), isValid(),
// readAvailable() and getState() may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "model_runtime/QueueManager.hpp"

namespace model_runtime {

template <typename BufferType>
class SpscRingBuffer {
 public:
  // Called by a readLock() that waited timeout_ns, again every timeout_ns
  // until a buffer is available; on the consumer thread, without the lock
  // (it may invalidate() the ring).
  using ReadTimeoutCallback = std::function<void(SpscRingBuffer *)>;

  SpscRingBuffer(const SpscRingBuffer &other) = delete;
  SpscRingBuffer(const SpscRingBuffer &&other) noexcept = delete;
  SpscRingBuffer &operator=(const SpscRingBuffer &other) = delete;
  SpscRingBuffer &operator=(SpscRingBuffer &&other) noexcept = delete;

  // Throws std::invalid_argument naming the ring if num_buffers is 0.
  SpscRingBuffer(std::size_t num_buffers, const std::string &label, ReadTimeoutCallback timeout_cb = nullptr,
                 std::chrono::nanoseconds timeout_ns = std::chrono::nanoseconds::zero())
      : buffers_(checkedSize(num_buffers, label)),
        label_(label),
        timeoutCallback_(std::move(timeout_cb)),
        timeout_(timeout_ns) {}
  ~SpscRingBuffer() = default;

  void write(const BufferType &obj) {
    BufferType *dst = writeLock();
    if (!isValid()) return;
    *dst = obj;
    writeComplete();
  }

  // Blocks until a buffer is free or the ring is invalidated (check isValid()).
  BufferType *writeLock() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return !valid_ || written_ < buffers_.size(); });
    writeLocked_ = valid_;
    return &buffers_[(head_ + written_) % buffers_.size()];
  }
  // Throws std::logic_error if no buffer is write-locked.
  void writeComplete() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!writeLocked_) throw std::logic_error("SpscRingBuffer '" + label_ + "': writeComplete without writeLock");
      writeLocked_ = false;
      ++written_;
    }
    changed_.notify_all();
  }

  // Blocks until a written buffer is not yet read-locked (readReset() makes
  // the read-locked ones so again) or the ring is invalidated (check isValid()).
  const BufferType &readLock() {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto ready = [this] { return !valid_ || readLocked_ < written_; };
    while (!ready()) {
      if (timeoutCallback_ && timeout_ > std::chrono::nanoseconds::zero()) {
        if (!changed_.wait_for(lock, timeout_, ready)) {
          lock.unlock();
          timeoutCallback_(this);
          lock.lock();
        }
      } else {
        changed_.wait(lock, ready);
      }
    }
    if (!valid_) return buffers_[head_];
    return buffers_[(head_ + readLocked_++) % buffers_.size()];
  }
  // Frees the oldest read-locked buffer; throws std::logic_error if none.
  void readComplete() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (readLocked_ == 0) throw std::logic_error("SpscRingBuffer '" + label_ + "': readComplete without readLock");
      head_ = (head_ + 1) % buffers_.size();
      --readLocked_;
      --written_;
    }
    changed_.notify_all();
  }
  // Puts the read-locked buffers back at the front of the reading order.
  void readReset() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      readLocked_ = 0;
    }
    changed_.notify_all();
  }
  bool readAvailable() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return readLocked_ < written_;
  }

  // Every blocked and later call returns at once; buffers returned from now
  // on are invalid.
  void invalidate() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      valid_ = false;
    }
    changed_.notify_all();
  }
  // Back to the initial state: valid and empty.
  void reset() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      valid_ = true;
      head_ = written_ = readLocked_ = 0;
      writeLocked_ = false;
    }
    changed_.notify_all();
  }
  bool isValid() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return valid_;
  }

  std::string getState(const std::string &prefix) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return prefix + label_ + ": " + std::to_string(written_) + "/" + std::to_string(buffers_.size()) +
           " written, " + std::to_string(readLocked_) + " read-locked, write lock " + (writeLocked_ ? "held" : "free") +
           (valid_ ? "" : ", invalidated");
  }
  std::size_t numBuffers() const { return buffers_.size(); }
  const std::string &label() const { return label_; }

 private:
  static std::size_t checkedSize(std::size_t num_buffers, const std::string &label) {
    if (num_buffers == 0) throw std::invalid_argument("SpscRingBuffer '" + label + "': num_buffers must be positive");
    return num_buffers;
  }

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<BufferType> buffers_;
  const std::string label_;
  const ReadTimeoutCallback timeoutCallback_;
  const std::chrono::nanoseconds timeout_;
  std::size_t head_ = 0;        // the oldest buffer not yet read-completed
  std::size_t written_ = 0;     // written buffers from head_, read-locked included
  std::size_t readLocked_ = 0;  // read-locked buffers from head_
  bool writeLocked_ = false;
  bool valid_ = true;
};

using InputRingBuffer = SpscRingBuffer<InputData>;
using OutputRingBuffer = SpscRingBuffer<OutputData>;

}  // namespace model_runtime
