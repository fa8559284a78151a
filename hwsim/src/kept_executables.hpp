// Executables deserialized lately, kept with their bytes, so that loading
// the same executable again (another runner of the same PopEF file, a
// server reloading a model, replicas created one by one) costs a memcmp of
// its bytes instead of a FlatBuffers verification, a deserialization and
// the consistency checks (issue 14, "cheap runner creation": 40-60% of
// creating a runner for a model with many vertices).
//
// What is returned is always an executable verified from bytes equal to
// the ones given: a hit compares every byte with the copy that was
// verified, and corrupt bytes are never kept, so they fail every time.
// ExecutableData is immutable once made, so runners share it.
//
// The process keeps the kKeptExecutables most recently loaded ones, at
// most kKeptExecutableBytes of serialized bytes in all (their deserialized
// form and engine plans take about as much again, see engine_plan.hpp);
// one larger than that is not kept. MRT_HWSIM_KEPT_EXECUTABLES_MIB (read
// once per process, 0 to 1024) sets the bytes, and 0 keeps none.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "exe_data.hpp"

namespace hwsim::detail {

inline constexpr std::size_t kKeptExecutables = 8;
inline constexpr std::size_t kKeptExecutableBytes = std::size_t{64} << 20;

// deserializeExecutable(bytes, size), or the executable kept for the same bytes.
std::shared_ptr<const ExecutableData> deserializeKept(const std::uint8_t *bytes, std::size_t size);

}  // namespace hwsim::detail
