// poplar::StreamCallbackHandle: what a model_runtime::CallbackFactory
// returns. libmrt has no Poplar; this holds any callable taking the stream's
// buffer (void *), as Poplar's handle does for a lambda, or nothing (nullptr:
// "keep the anchor's current callback").
#pragma once

#include <cstddef>
#include <functional>
#include <type_traits>
#include <utility>

namespace poplar {

class StreamCallbackHandle {
 public:
  StreamCallbackHandle() = default;
  StreamCallbackHandle(std::nullptr_t) {}
  template <class F, class = std::enable_if_t<std::is_invocable_v<F &, void *> &&
                                              !std::is_same_v<std::decay_t<F>, StreamCallbackHandle>>>
  StreamCallbackHandle(F function) : function_(std::move(function)) {}

  explicit operator bool() const { return static_cast<bool>(function_); }
  void operator()(void *buffer) const { function_(buffer); }

 private:
  std::function<void(void *)> function_;
};

}  // namespace poplar
