// Targets in the C API (include/mrt_c.h, "Building models: targets and
// graphs"): the named systems of hwsim and custom "what if" rates.
#include "capi/target.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>

#include "capi/guard.hpp"
#include "capi/sized_struct.hpp"

namespace mrt::capi {

namespace {

// A caller must give at least ipu_version and num_ipus: the defaults of the
// other fields depend on them.
constexpr std::size_t kTargetMinSize = offsetof(mrt_target, num_ipus) + sizeof(uint32_t);
constexpr std::uint32_t kMaxIpus = 64;

mrt_target toC(const hwsim::Target &t) {
  mrt_target c{};
  c.struct_size = sizeof(mrt_target);
  c.name = t.name.c_str();
  c.ipu_version = static_cast<uint32_t>(t.ipuVersion);
  c.num_ipus = t.numIpus;
  c.tiles_per_ipu = t.tilesPerIpu;
  c.worker_contexts_per_tile = t.workerContextsPerTile;
  c.bytes_per_tile = t.bytesPerTile;
  c.clock_hz = t.clockHz;
  c.f32_matmul_flops_per_cycle = t.f32MatMulFlopsPerCycle;
  c.f16_matmul_flops_per_cycle = t.f16MatMulFlopsPerCycle;
  c.f32_vector_width = t.f32VectorWidth;
  c.f16_vector_width = t.f16VectorWidth;
  c.int_vector_width = t.intVectorWidth;
  c.transcendental_cycles_per_element = t.transcendentalCyclesPerElement;
  c.vertex_overhead_cycles = t.vertexOverheadCycles;
  c.exchange_bytes_per_cycle = t.exchangeBytesPerCycle;
  c.host_link_bytes_per_second = t.hostLinkBytesPerSecond;
  c.ipu_link_bytes_per_second = t.ipuLinkBytesPerSecond;
  c.internal_sync_cycles = t.internalSyncCycles;
  c.external_sync_cycles = t.externalSyncCycles;
  c.host_sync_cycles = t.hostSyncCycles;
  return c;
}

void requirePositive(double value, const char *argument, const char *field) {
  if (!(value > 0) || !std::isfinite(value)) {
    throw Error(ErrorCode::InvalidArgument, "{}->{} is {}; it must be a positive finite number", argument,
                field, value);
  }
}

void requireCount(std::uint64_t value, std::uint64_t max, const char *argument, const char *field) {
  if (value == 0 || value > max) {
    throw Error(ErrorCode::InvalidArgument, "{}->{} is {}; it must be 1 to {}", argument, field, value, max);
  }
}

}  // namespace

hwsim::Target targetOf(const mrt_target *target, const char *argument) {
  requireNotNull(target, argument);
  if (target->struct_size < kTargetMinSize) {
    throw Error(ErrorCode::InvalidArgument, "{}->struct_size is {}, expected at least {}", argument,
                target->struct_size, kTargetMinSize);
  }
  if (target->ipu_version != 2 && target->ipu_version != 21) {
    throw Error(ErrorCode::InvalidArgument, "{}->ipu_version is {}; it must be 2 (Mk2) or 21 (C600)",
                argument, target->ipu_version);
  }
  requireCount(target->num_ipus, kMaxIpus, argument, "num_ipus");
  // Start from the system's defaults so a shorter (older) struct reads fully.
  const hwsim::Target defaults =
      hwsim::Target::forVersion(static_cast<hwsim::IpuVersion>(target->ipu_version), target->num_ipus);
  mrt_target c = toC(defaults);
  std::memcpy(&c, target, std::min(target->struct_size, sizeof(mrt_target)));

  requireCount(c.tiles_per_ipu, 1u << 16, argument, "tiles_per_ipu");
  requireCount(c.worker_contexts_per_tile, 64, argument, "worker_contexts_per_tile");
  requireCount(c.bytes_per_tile, std::uint64_t{1} << 32, argument, "bytes_per_tile");
  requirePositive(c.clock_hz, argument, "clock_hz");
  requirePositive(c.f32_matmul_flops_per_cycle, argument, "f32_matmul_flops_per_cycle");
  requirePositive(c.f16_matmul_flops_per_cycle, argument, "f16_matmul_flops_per_cycle");
  requirePositive(c.f32_vector_width, argument, "f32_vector_width");
  requirePositive(c.f16_vector_width, argument, "f16_vector_width");
  requirePositive(c.int_vector_width, argument, "int_vector_width");
  requirePositive(c.transcendental_cycles_per_element, argument, "transcendental_cycles_per_element");
  requirePositive(c.vertex_overhead_cycles, argument, "vertex_overhead_cycles");
  requirePositive(c.exchange_bytes_per_cycle, argument, "exchange_bytes_per_cycle");
  requirePositive(c.host_link_bytes_per_second, argument, "host_link_bytes_per_second");
  requirePositive(c.ipu_link_bytes_per_second, argument, "ipu_link_bytes_per_second");
  requirePositive(c.internal_sync_cycles, argument, "internal_sync_cycles");
  requirePositive(c.external_sync_cycles, argument, "external_sync_cycles");
  requirePositive(c.host_sync_cycles, argument, "host_sync_cycles");

  hwsim::Target t = defaults;
  if (c.name != nullptr) t.name = c.name;
  t.tilesPerIpu = c.tiles_per_ipu;
  t.workerContextsPerTile = c.worker_contexts_per_tile;
  t.bytesPerTile = c.bytes_per_tile;
  t.clockHz = c.clock_hz;
  t.f32MatMulFlopsPerCycle = c.f32_matmul_flops_per_cycle;
  t.f16MatMulFlopsPerCycle = c.f16_matmul_flops_per_cycle;
  t.f32VectorWidth = c.f32_vector_width;
  t.f16VectorWidth = c.f16_vector_width;
  t.intVectorWidth = c.int_vector_width;
  t.transcendentalCyclesPerElement = c.transcendental_cycles_per_element;
  t.vertexOverheadCycles = c.vertex_overhead_cycles;
  t.exchangeBytesPerCycle = c.exchange_bytes_per_cycle;
  t.hostLinkBytesPerSecond = c.host_link_bytes_per_second;
  t.ipuLinkBytesPerSecond = c.ipu_link_bytes_per_second;
  t.internalSyncCycles = c.internal_sync_cycles;
  t.externalSyncCycles = c.external_sync_cycles;
  t.hostSyncCycles = c.host_sync_cycles;
  return t;
}

void fillTarget(const hwsim::Target &target, mrt_target *out, const char *argument) {
  fillSized(out, toC(target), kTargetMinSize, argument);
}

}  // namespace mrt::capi

namespace {

// The named systems; their name strings are static, so targets made here
// lend out static storage.
struct System {
  const char *key;
  hwsim::Target (*make)(unsigned numIpus);
};
constexpr System kSystems[] = {
    {"gc200", hwsim::Target::gc200},
    {"bow", hwsim::Target::bow},
    {"c600", hwsim::Target::c600},
    {"ipu-model-small", hwsim::Target::smallIpuModel},
};

bool equalsIgnoringCase(const char *a, const char *b) {
  for (; *a != '\0' && *b != '\0'; ++a, ++b) {
    if (std::tolower(static_cast<unsigned char>(*a)) != std::tolower(static_cast<unsigned char>(*b))) return false;
  }
  return *a == *b;
}

// hwsim names its targets with std::string; the C struct borrows the name,
// so lend out these literals instead.
const char *staticNameOf(const std::string &name) {
  static const char *const kNames[] = {"GC200", "Bow", "C600", "IPU-Model small"};
  for (const char *n : kNames) {
    if (name == n) return n;
  }
  return "";
}

}  // namespace

MRT_API mrt_status mrt_target_init_sized(const char *system, uint32_t num_ipus, mrt_target *out_target,
                                         size_t size) noexcept {
  return mrt::capi::guard(__func__, [&] {
    mrt::capi::requireNotNull(system, "system");
    mrt::capi::requireNotNull(out_target, "out_target");
    if (num_ipus == 0 || num_ipus > 64) {
      throw mrt::Error(mrt::ErrorCode::InvalidArgument, "num_ipus is {}; it must be 1 to 64", num_ipus);
    }
    for (const System &s : kSystems) {
      if (!equalsIgnoringCase(system, s.key)) continue;
      const hwsim::Target target = s.make(num_ipus);
      mrt_target c{};
      c.struct_size = sizeof(mrt_target);
      mrt::capi::fillTarget(target, &c, "out_target");
      c.name = staticNameOf(target.name);
      mrt::capi::initSized(out_target, c, size, MRT_TARGET_V1_SIZE, MRT_STRUCT_SIZE(mrt_target, host_sync_cycles),
                           "out_target");
      return;
    }
    throw mrt::Error(mrt::ErrorCode::NotFound,
                     "unknown system '{}'; the systems are gc200, bow, c600 and ipu-model-small", system);
  });
}

// The symbol of callers built before mrt_target_init_sized: V1 fields.
MRT_API mrt_status(mrt_target_init)(const char *system, uint32_t num_ipus, mrt_target *out_target) noexcept {
  return mrt_target_init_sized(system, num_ipus, out_target, MRT_TARGET_V1_SIZE);
}
