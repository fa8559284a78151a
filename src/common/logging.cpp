#include "common/logging.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <spdlog/sinks/sink.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace mrt::log {

namespace {

constexpr Level kDefaultLevel = Level::Warn;
thread_local bool t_insideCallback = false;

spdlog::level::level_enum toSpdlog(Level level) {
  switch (level) {
    case Level::Off: return spdlog::level::off;
    case Level::Err: return spdlog::level::err;
    case Level::Warn: return spdlog::level::warn;
    case Level::Info: return spdlog::level::info;
    case Level::Debug: return spdlog::level::debug;
    case Level::Trace: return spdlog::level::trace;
  }
  return spdlog::level::off;
}

Level fromSpdlog(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return Level::Trace;
    case spdlog::level::debug: return Level::Debug;
    case spdlog::level::info: return Level::Info;
    case spdlog::level::warn: return Level::Warn;
    case spdlog::level::err:
    case spdlog::level::critical: return Level::Err;
    default: return Level::Off;
  }
}

// Sends each message either to the user callback or to the destination sink.
// One sink with one mutex, so swapping the callback and emitting a message
// can never interleave. Derived from sink rather than base_sink because a
// message logged from inside the callback (say by a failing mrt_* call the
// callback makes) must be dropped before taking the (non-recursive) mutex,
// not deadlock on it; the same goes for the flush the logger does after it.
class DispatchSink final : public spdlog::sinks::sink {
 public:
  explicit DispatchSink(std::shared_ptr<spdlog::sinks::sink> destination)
      : destination_(std::move(destination)) {}

  Callback replace(Callback callback) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(callback_, callback);
    return callback;
  }

  void log(const spdlog::details::log_msg &msg) override {
    if (t_insideCallback) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!callback_) {
      destination_->log(msg);
      return;
    }
    t_insideCallback = true;
    try {
      callback_(fromSpdlog(msg.level), std::string_view(msg.payload.data(), msg.payload.size()));
    } catch (...) {
      // A throwing callback must not take the library down; its message is lost.
    }
    t_insideCallback = false;
  }

  void flush() override {
    if (t_insideCallback) return;  // the message being flushed was dropped
    std::lock_guard<std::mutex> lock(mutex_);
    destination_->flush();
  }
  void set_pattern(const std::string &pattern) override {
    std::lock_guard<std::mutex> lock(mutex_);
    destination_->set_pattern(pattern);
  }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    std::lock_guard<std::mutex> lock(mutex_);
    destination_->set_formatter(std::move(formatter));
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<spdlog::sinks::sink> destination_;
  Callback callback_;
};

std::shared_ptr<spdlog::sinks::sink> destinationFromEnvironment(std::string &problem) {
  const char *dest = std::getenv("MRT_LOG_DEST");
  std::string value = dest ? dest : "stderr";
  if (value == "stdout") return std::make_shared<spdlog::sinks::stdout_sink_st>();
  if (value == "stderr" || value.empty()) return std::make_shared<spdlog::sinks::stderr_sink_st>();
  // spdlog would create the missing directories: a misspelt path must not
  // grow a tree of them and hide the log there.
  const std::filesystem::path parent = std::filesystem::path(value).parent_path();
  std::error_code error;
  if (!parent.empty() && !std::filesystem::is_directory(parent, error)) {
    problem = "MRT_LOG_DEST='" + value + "': the directory '" + parent.string() + "' does not exist; logging to stderr";
    return std::make_shared<spdlog::sinks::stderr_sink_st>();
  }
  try {
    return std::make_shared<spdlog::sinks::basic_file_sink_st>(value, /*truncate=*/false);
  } catch (const spdlog::spdlog_ex &e) {
    problem = "MRT_LOG_DEST='" + value + "' cannot be opened (" + e.what() + "); logging to stderr";
    return std::make_shared<spdlog::sinks::stderr_sink_st>();
  }
}

struct State {
  std::string destinationProblem;  // set while choosing the sink, logged once the logger exists
  std::shared_ptr<DispatchSink> sink;
  spdlog::logger logger;

  State()
      : sink(std::make_shared<DispatchSink>(destinationFromEnvironment(destinationProblem))),
        logger("mrt", sink) {
    logger.set_pattern("[%Y-%m-%d %H:%M:%S.%e] [mrt] [%l] [tid %t] %v");
    logger.flush_on(spdlog::level::trace);
    Level level = kDefaultLevel;
    const char *env = std::getenv("MRT_LOG_LEVEL");
    bool badLevel = env && *env && !parseLevel(env, level);
    logger.set_level(toSpdlog(level));
    if (badLevel)
      logger.warn("MRT_LOG_LEVEL='{}' is not one of OFF, ERR, WARN, INFO, DEBUG, TRACE; using WARN",
                  env);
    if (!destinationProblem.empty()) logger.error("{}", destinationProblem);
  }
};

State &state() {
  // Deliberately leaked: library threads may log during static destruction.
  static State *instance = new State();
  return *instance;
}

}  // namespace

spdlog::logger &logger() { return state().logger; }

void setLevel(Level level) { state().logger.set_level(toSpdlog(level)); }

Level level() { return fromSpdlog(state().logger.level()); }

Callback replaceCallback(Callback callback) { return state().sink->replace(std::move(callback)); }

bool insideCallback() { return t_insideCallback; }

bool parseLevel(std::string_view text, Level &out) {
  std::string upper(text);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  static const std::pair<const char *, Level> names[] = {
      {"OFF", Level::Off},   {"ERR", Level::Err},     {"ERROR", Level::Err},
      {"WARN", Level::Warn}, {"WARNING", Level::Warn}, {"INFO", Level::Info},
      {"DEBUG", Level::Debug}, {"TRACE", Level::Trace}};
  for (const auto &[name, value] : names) {
    if (upper == name) {
      out = value;
      return true;
    }
  }
  return false;
}

}  // namespace mrt::log
