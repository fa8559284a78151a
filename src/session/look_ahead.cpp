#include "session/look_ahead.hpp"

namespace mrt {

bool LookAhead::tryTake() {
  // Replicas running on their own threads take slots concurrently, so the
  // limit is checked and the slot taken in one step.
  std::uint64_t held = prepared_.load(std::memory_order_relaxed);
  do {
    if (limit_ && held >= *limit_) return false;
  } while (!prepared_.compare_exchange_weak(held, held + 1, std::memory_order_release, std::memory_order_relaxed));
  return true;
}

namespace {

class PrefetchingCallback final : public hwsim::StreamCallback {
 public:
  PrefetchingCallback(CallbackHandle fetch, StreamPrefetchFn prefetch, std::shared_ptr<LookAhead> lookAhead)
      : fetch_(std::move(fetch)), prefetch_(std::move(prefetch)), lookAhead_(std::move(lookAhead)) {}
  // Replaced while holding a prepared transfer: its slot is free again.
  ~PrefetchingCallback() override { drop(); }

  Result prefetch(void *p) override {
    if (!lookAhead_->tryTake()) return Result::NotAvailable;
    if (!prefetch_(p)) {
      lookAhead_->release();
      return Result::NotAvailable;
    }
    lookAhead_->prepared();
    held_ = true;
    return Result::Success;
  }
  void fetch(void *p) override { fetch_(p); }
  // The engine used the prepared transfer (or fetched one): the sync it was
  // prepared for has come.
  void complete() override { drop(); }
  void invalidatePrefetched() override { drop(); }

 private:
  void drop() {
    if (held_) lookAhead_->release();
    held_ = false;
  }

  CallbackHandle fetch_;
  StreamPrefetchFn prefetch_;
  std::shared_ptr<LookAhead> lookAhead_;
  bool held_ = false;
};

}  // namespace

std::unique_ptr<hwsim::StreamCallback> prefetchingCallback(CallbackHandle fetch, StreamPrefetchFn prefetch,
                                                           std::shared_ptr<LookAhead> lookAhead) {
  return std::make_unique<PrefetchingCallback>(std::move(fetch), std::move(prefetch), std::move(lookAhead));
}

}  // namespace mrt
