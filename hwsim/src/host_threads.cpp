#include "host_threads.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "hwsim/error.hpp"
#include "worker_pool.hpp"

namespace hwsim::detail {

unsigned hostThreads(const OptionFlags &options) {
  if (auto it = options.find("debug.cpuMultiThreadExecution"); it != options.end() && it->second == "false") return 1;
  const unsigned all = WorkerPool::instance().capacity() + 1;
  const auto it = options.find(kHostThreadsOption);
  if (it == options.end()) return all;
  // validateEngineOptions has made it a non-negative integer of at most 9 digits.
  const auto value = std::stoul(it->second);
  if (value == 0) {
    throw InvalidOption(kHostThreadsOption, fmt::format("option '{}': value '0' is not a thread count: give at least 1 "
                                                        "(1 runs compute sets on the calling thread)",
                                                        kHostThreadsOption));
  }
  return static_cast<unsigned>(std::min<unsigned long>(value, all));
}

}  // namespace hwsim::detail
