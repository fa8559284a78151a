// mrt.hpp - header-only C++ wrapper over libmrt's C API (mrt_c.h).
// It uses the C API only, never the library's internals: everything here is
// what any C++ application could write itself, packaged once.
//
// Failures throw mrt::Error carrying the status code and the library's
// message. Callbacks are std::function objects owned by the library through
// the C API's user_data / user_data_free pair.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "mrt_c.h"

namespace mrt {

// A failed libmrt call: code() is the mrt_status, what() the message.
class Error : public std::runtime_error {
 public:
  Error(mrt_status code, const std::string &message) : std::runtime_error(message), code_(code) {}
  mrt_status code() const noexcept { return code_; }

 private:
  mrt_status code_;
};

// Throws mrt::Error for any status but MRT_OK, with this thread's last error
// message (read right away, before another call can replace it).
inline void check(mrt_status status) {
  if (status == MRT_OK) return;
  const char *message = mrt_last_error_message();
  throw Error(status, message && *message ? message : mrt_status_string(status));
}

inline std::string_view versionString() noexcept { return mrt_version_string(); }

// Throws unless the loaded library serves the version this header came with.
inline void checkVersion() { check(mrt_check_version(MRT_VERSION_MAJOR, MRT_VERSION_MINOR)); }

enum class LogLevel { Off = MRT_LOG_OFF, Err = MRT_LOG_ERR, Warn = MRT_LOG_WARN,
                      Info = MRT_LOG_INFO, Debug = MRT_LOG_DEBUG, Trace = MRT_LOG_TRACE };

inline void setLogLevel(LogLevel level) {
  check(mrt_set_log_level(static_cast<int32_t>(level)));
}
inline LogLevel logLevel() noexcept { return static_cast<LogLevel>(mrt_get_log_level()); }

using LogCallback = std::function<void(LogLevel, std::string_view)>;

// Sends libmrt's log messages to callback (empty: back to MRT_LOG_DEST).
// Called on the logging thread, never overlapping; must not throw (a throw is
// swallowed by the library and the message lost).
inline void setLogCallback(LogCallback callback) {
  if (!callback) {
    check(mrt_set_log_callback(nullptr, nullptr, nullptr));
    return;
  }
  auto *owned = new LogCallback(std::move(callback));
  check(mrt_set_log_callback(
      [](mrt_log_level level, const char *message, void *user_data) {
        try {
          (*static_cast<LogCallback *>(user_data))(static_cast<LogLevel>(level), message);
        } catch (...) {
        }
      },
      owned, [](void *user_data) { delete static_cast<LogCallback *>(user_data); }));
}

inline void logMessage(LogLevel level, const std::string &message) {
  check(mrt_log_message(static_cast<int32_t>(level), message.c_str()));
}

}  // namespace mrt
