#include "common/batch_scheduling.hpp"

#include <sched.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "common/logging.hpp"

namespace mrt::detail {

bool useBatchScheduling() noexcept {
  thread_local bool set = false;
  if (set) return true;
  const sched_param param{};  // SCHED_BATCH has no priority: 0
  // 0: the calling thread (Linux schedules threads, not processes).
  if (sched_setscheduler(0, SCHED_BATCH, &param) == 0) return set = true;
  const int error = errno;
  static std::atomic<bool> logged{false};
  if (!logged.exchange(true)) {
    try {
      log::logger().info("device threads keep their scheduling policy: SCHED_BATCH was refused ({}); threads "
                         "sharing CPUs will hand requests over less efficiently",
                         std::strerror(error));
    } catch (...) {
    }
  }
  return false;
}

}  // namespace mrt::detail
