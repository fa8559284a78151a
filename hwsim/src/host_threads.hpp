// The engine option host.threads: how many host threads (the calling one
// included) may run one engine's compute sets. Default: every CPU the process
// may use; larger values are cut to that (a configuration written for a big
// machine still runs on a small one); 1, like
// debug.cpuMultiThreadExecution=false, runs them on the calling thread.
#pragma once

#include "hwsim/options.hpp"

namespace hwsim::detail {

inline constexpr const char *kHostThreadsOption = "host.threads";

// The threads allowed by the (validated) options.
unsigned hostThreads(const OptionFlags &options);

}  // namespace hwsim::detail
