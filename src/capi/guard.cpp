#include "capi/guard.hpp"

#include <exception>
#include <new>
#include <stdexcept>

#include "capi/last_error.hpp"
#include "common/logging.hpp"

namespace mrt::capi {

mrt_status fail(const char *function, mrt_status code, const std::string &message,
                RecoveryAction action) noexcept {
  try {
    setLastError(fmt::format("{}: {}", function, message), action);
    log::logger().debug("{} failed with {}: {}", function, mrt_status_string(code), message);
  } catch (...) {
    // Out of memory while reporting: the status code still tells the story.
  }
  return code;
}

void throwNull(const char *argument) {
  throw Error(ErrorCode::InvalidArgument, "{} must not be NULL", argument);
}

mrt_status failFromCurrentException(const char *function) noexcept {
  try {
    throw;
  } catch (const Error &e) {
    return fail(function, static_cast<mrt_status>(e.code()), e.what(), e.recoveryAction());
  } catch (const std::bad_alloc &) {
    return fail(function, MRT_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::invalid_argument &e) {
    return fail(function, MRT_INVALID_ARGUMENT, e.what());
  } catch (const std::out_of_range &e) {
    return fail(function, MRT_INVALID_ARGUMENT, e.what());
  } catch (const std::exception &e) {
    return fail(function, MRT_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(function, MRT_INTERNAL, "internal error: unknown exception");
  }
}

}  // namespace mrt::capi
