// LibraryCallbackScope: marks the calling thread as running a user callback
// that the library invoked (a future's on_ready, a runner's flush_callback).
// Those usually run on a runner's device thread, and destroying the runner
// joins that thread: mrt_model_runner_destroy asks insideLibraryCallback()
// and, if so, leaves the destruction to a thread of its own instead of
// joining itself (std::system_error "Resource deadlock avoided").
#pragma once

namespace mrt::capi {

inline thread_local int libraryCallbackDepth = 0;

class LibraryCallbackScope {
 public:
  LibraryCallbackScope() noexcept { ++libraryCallbackDepth; }
  ~LibraryCallbackScope() { --libraryCallbackDepth; }
  LibraryCallbackScope(const LibraryCallbackScope &) = delete;
  LibraryCallbackScope &operator=(const LibraryCallbackScope &) = delete;
};

inline bool insideLibraryCallback() noexcept { return libraryCallbackDepth > 0; }

}  // namespace mrt::capi
