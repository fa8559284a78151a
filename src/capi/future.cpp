// mrt_future_*: waiting for, and being called back by, asynchronous requests.
// A request's own failure is reported through the future (status and
// message), never through the thread's last error: the per-thread message
// only describes a failed call on a future handle itself.
#include "capi/future.hpp"

#include <chrono>
#include <string>

#include "capi/callback_scope.hpp"
#include "capi/guard.hpp"
#include "capi/user_data.hpp"

namespace {

using mrt::Error;
using mrt::ErrorCode;
using mrt::capi::requireNotNull;

const mrt::Completion &completionOf(const mrt_future *future) {
  requireNotNull(future, "future");
  return *future->completion;
}

}  // namespace

extern "C" {

MRT_API bool mrt_future_is_ready(const mrt_future *future) noexcept {
  return future != nullptr && future->completion->isReady();
}

MRT_API mrt_status mrt_future_wait(mrt_future *future, int64_t timeout_ns) noexcept {
  mrt_status requestStatus = MRT_OK;
  mrt_status callStatus = mrt::capi::guard(__func__, [&] {
    const auto &completion = completionOf(future);
    if (!completion.wait(std::chrono::nanoseconds(timeout_ns))) {
      throw Error(ErrorCode::DeadlineExceeded, "the request is not done after {} ns", timeout_ns);
    }
    requestStatus = static_cast<mrt_status>(completion.code());
  });
  return callStatus != MRT_OK ? callStatus : requestStatus;
}

MRT_API mrt_status mrt_future_status(const mrt_future *future,
                                     mrt_status *out_request_status) noexcept {
  return mrt::capi::guard(__func__, [&] {
    const auto &completion = completionOf(future);
    requireNotNull(out_request_status, "out_request_status");
    *out_request_status = static_cast<mrt_status>(completion.code());
  });
}

MRT_API const char *mrt_future_error_message(const mrt_future *future) noexcept {
  if (future == nullptr || !future->completion->isReady()) return "";
  return future->completion->message().c_str();
}

MRT_API int32_t mrt_future_recovery_action(const mrt_future *future) noexcept {
  if (future == nullptr || !future->completion->isReady()) return MRT_RECOVERY_NONE;
  return static_cast<int32_t>(future->completion->recoveryAction());
}

MRT_API mrt_status mrt_future_on_ready(mrt_future *future, mrt_future_ready_fn fn, void *user_data,
                                       void (*user_data_free)(void *)) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto owner = mrt::capi::ownUserData(user_data, user_data_free);
    requireNotNull(future, "future");
    if (fn == nullptr) throw Error(ErrorCode::InvalidArgument, "fn must not be NULL");
    // The callback holds the user data, so user_data_free runs once the
    // callback has fired and been released by the completion.
    future->completion->onReady([fn, owner = std::move(owner)](ErrorCode code, const std::string &) {
      const mrt::capi::LibraryCallbackScope scope;
      fn(static_cast<mrt_status>(code), owner->get());
    });
  });
}

MRT_API void mrt_future_destroy(mrt_future *future) noexcept { delete future; }

}  // extern "C"
