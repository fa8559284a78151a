#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "exe_data.hpp"

namespace hwsim::detail {
std::vector<std::uint8_t> serializeExecutable(const ExecutableData &exe);
// Throws CorruptExecutable; never reads outside [buf, buf + size).
std::shared_ptr<ExecutableData> deserializeExecutable(const std::uint8_t *buf, std::size_t size);
}  // namespace hwsim::detail
