#pragma once

#include "exe_data.hpp"
#include "hwsim/error.hpp"

namespace hwsim::detail {
// Throws Error(kind) (CorruptExecutable for kind == CorruptExecutable) at the first inconsistency.
void checkExecutable(const ExecutableData &exe, ErrorKind kind);
}  // namespace hwsim::detail
