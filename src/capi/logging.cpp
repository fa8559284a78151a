// The logging part of the C API, over common/logging.
#include <memory>
#include <string>
#include <utility>

#include "capi/guard.hpp"
#include "capi/user_data.hpp"
#include "common/logging.hpp"

static_assert(static_cast<int>(mrt::log::Level::Off) == MRT_LOG_OFF);
static_assert(static_cast<int>(mrt::log::Level::Err) == MRT_LOG_ERR);
static_assert(static_cast<int>(mrt::log::Level::Warn) == MRT_LOG_WARN);
static_assert(static_cast<int>(mrt::log::Level::Info) == MRT_LOG_INFO);
static_assert(static_cast<int>(mrt::log::Level::Debug) == MRT_LOG_DEBUG);
static_assert(static_cast<int>(mrt::log::Level::Trace) == MRT_LOG_TRACE);

namespace {

mrt::log::Level checkedLevel(int32_t value, bool allowOff) {
  int lowest = allowOff ? MRT_LOG_OFF : MRT_LOG_ERR;
  if (value < lowest || value > MRT_LOG_TRACE)
    throw mrt::Error(mrt::ErrorCode::InvalidArgument, "log level {} is not in {}..{}", value,
                     lowest, static_cast<int>(MRT_LOG_TRACE));
  return static_cast<mrt::log::Level>(value);
}

// Hands the user's callback back at library unload, so its user_data_free
// runs exactly once even if the application never replaces it.
struct ReleaseCallbackAtUnload {
  ~ReleaseCallbackAtUnload() {
    try {
      mrt::log::replaceCallback(nullptr);
    } catch (...) {
    }
  }
} releaseCallbackAtUnload;

}  // namespace

extern "C" {

MRT_API mrt_status mrt_set_log_level(int32_t level) noexcept {
  return mrt::capi::guard(__func__, [&] { mrt::log::setLevel(checkedLevel(level, true)); });
}

MRT_API mrt_log_level mrt_get_log_level(void) noexcept {
  try {
    return static_cast<mrt_log_level>(mrt::log::level());
  } catch (...) {
    return MRT_LOG_OFF;
  }
}

MRT_API mrt_status mrt_set_log_callback(mrt_log_fn fn, void *user_data,
                                        void (*user_data_free)(void *)) noexcept {
  return mrt::capi::guard(__func__, [&] {
    auto owner = mrt::capi::ownUserData(user_data, user_data_free);
    if (mrt::log::insideCallback())
      throw mrt::Error(mrt::ErrorCode::FailedPrecondition,
                       "cannot replace the log callback from inside the log callback");
    mrt::log::Callback callback;
    if (fn) {
      callback = [fn, owner = std::move(owner)](mrt::log::Level level, std::string_view message) {
        std::string text(message);  // the C callback needs a terminated string
        fn(static_cast<mrt_log_level>(level), text.c_str(), owner->get());
      };
    }
    // The previous callback is destroyed here, outside the sink's lock, which
    // runs its user_data_free.
    mrt::log::replaceCallback(std::move(callback));
  });
}

MRT_API mrt_status mrt_log_message(int32_t level, const char *message) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::requireNotNull(message, "message");
    auto internal = checkedLevel(level, false);
    auto &logger = mrt::log::logger();
    switch (internal) {
      case mrt::log::Level::Err: logger.error("{}", message); break;
      case mrt::log::Level::Warn: logger.warn("{}", message); break;
      case mrt::log::Level::Info: logger.info("{}", message); break;
      case mrt::log::Level::Debug: logger.debug("{}", message); break;
      default: logger.trace("{}", message); break;
    }
  });
}

}  // extern "C"
