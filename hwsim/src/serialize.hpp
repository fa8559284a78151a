#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "exe_data.hpp"

namespace hwsim::detail {
std::vector<std::uint8_t> serializeExecutable(const ExecutableData &exe);
// Throws CorruptExecutable; never reads outside [buf, buf + size).
std::shared_ptr<ExecutableData> deserializeExecutable(const std::uint8_t *buf, std::size_t size);
// The same without copying the bytes first: they must be 8-byte aligned and
// the caller's own, so nothing changes them while they are verified and read
// (kept_executables.cpp keeps the very copy it verified).
std::shared_ptr<ExecutableData> deserializeOwnCopy(const std::uint8_t *buf, std::size_t size);
}  // namespace hwsim::detail
