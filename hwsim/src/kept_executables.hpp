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
// most kKeptExecutableBytes of serialized bytes in all; one larger than
// that is not kept. What they hold is more: their deserialized form and
// the engine plans made for them (engine_plan.hpp) take 2-6 times their
// serialized bytes (5.7 times for a 20,000-vertex model with two plans),
// so the default keeps up to about 100 MiB after every runner is gone.
// MRT_HWSIM_KEPT_EXECUTABLES_MIB (read once per process, 0 to 1024) sets
// the bytes, and 0 keeps none.
//
// A loader that verified the bytes inside a container of its own (PopEF's
// blob checksum covers the executable and a descriptor before it) gives a
// seal: bytes of its own, opaque here, kept with the entry (the most recent
// one given for its bytes). findKept() then answers "were bytes equal to
// these verified under an equal seal?", so such a loader need not check
// its container again (issue 14: the checksum was a third of a small
// model's runner creation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "exe_data.hpp"

namespace hwsim::detail {

inline constexpr std::size_t kKeptExecutables = 8;
inline constexpr std::size_t kKeptExecutableBytes = std::size_t{16} << 20;

// deserializeExecutable(bytes, size), or the executable kept for the same
// bytes; a non-empty `seal` is kept with them.
std::shared_ptr<const ExecutableData> deserializeKept(const std::uint8_t *bytes, std::size_t size,
                                                      std::span<const std::uint8_t> seal = {});
// The executable kept for bytes equal to these under a seal equal to
// `seal`, or null (always for an empty seal).
std::shared_ptr<const ExecutableData> findKept(const std::uint8_t *bytes, std::size_t size,
                                               std::span<const std::uint8_t> seal);

}  // namespace hwsim::detail
