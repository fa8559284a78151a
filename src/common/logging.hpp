// The library's logger: spdlog underneath, one logger named "mrt".
// Starting level from MRT_LOG_LEVEL, destination from MRT_LOG_DEST; the C API
// can divert messages to a user callback (src/capi/logging.cpp).
#pragma once

#include <functional>
#include <string_view>

#include <spdlog/logger.h>

namespace mrt::log {

// Same order and values as mrt_log_level in mrt_c.h (checked there).
enum class Level : int { Off = 0, Err = 1, Warn = 2, Info = 3, Debug = 4, Trace = 5 };

// The logger every layer logs through: logger().debug("x = {}", x).
// Never destroyed, so threads that outlive static destruction can still log.
spdlog::logger &logger();

void setLevel(Level level);
Level level();

// Receives every emitted message instead of the destination. Calls are
// serialized; a message logged from inside the callback on the same thread
// (also by a library call the callback makes) is dropped rather than
// recursing, without touching the sink's lock.
using Callback = std::function<void(Level, std::string_view)>;

// Installs callback (empty: back to the destination) and returns the previous
// one, so the caller decides where it is destroyed. Once this returns, the
// previous callback is no longer running and will not be called again.
Callback replaceCallback(Callback callback);

// True while the calling thread is inside the callback.
bool insideCallback();

// Parses "OFF", "ERR"/"ERROR", "WARN"/"WARNING", "INFO", "DEBUG", "TRACE"
// (any case); false if text is none of them.
bool parseLevel(std::string_view text, Level &out);

}  // namespace mrt::log
