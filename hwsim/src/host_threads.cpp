#include "host_threads.hpp"

#include <algorithm>
#include <string>

#include "worker_pool.hpp"

namespace hwsim::detail {

unsigned hostThreads(const OptionFlags &options) {
  if (auto it = options.find("debug.cpuMultiThreadExecution"); it != options.end() && it->second == "false") return 1;
  const unsigned all = WorkerPool::instance().capacity() + 1;
  const auto it = options.find(kHostThreadsOption);
  if (it == options.end()) return all;
  // validateEngineOptions has made it a positive integer of at most 9 digits.
  return static_cast<unsigned>(std::min<unsigned long>(std::stoul(it->second), all));
}

}  // namespace hwsim::detail
