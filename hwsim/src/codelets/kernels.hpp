// The host implementations of the compute codelets, compiled once per x86-64
// level (hwsim/kernels/, hwsim_add_kernels in hwsim/CMakeLists.txt) so one
// portable build runs the instructions of the machine it is on. One level is
// chosen per process, at first use: the best the CPU supports, or the one
// MRT_HWSIM_ISA names (for tests and comparisons).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "codelets/registry.hpp"

namespace hwsim::detail {

// x86-64 micro-architecture levels (psABI): baseline (SSE2), v3 (AVX2, FMA,
// F16C, BMI1/2), v4 (v3 + AVX-512 F/BW/CD/DQ/VL). Other architectures build
// the baseline kernels only.
enum class KernelIsa : std::uint8_t { Baseline, V3, V4 };
inline constexpr KernelIsa kAllKernelIsas[] = {KernelIsa::Baseline, KernelIsa::V3, KernelIsa::V4};

// One level's execute functions, and those given a prepared Geometry
// (codelets/conv_geometry.hpp).
struct KernelTable {
  ExecuteFn unary, binary, fill, increment, matMul, reduce, softmax, argMax, conv, pool;
  PreparedExecuteFn convPrepared, poolPrepared;
};

std::string_view kernelIsaName(KernelIsa isa);

// The kernels of `isa`, or null when this build has none for it or this CPU
// cannot run them.
const KernelTable *kernelTable(KernelIsa isa);

// The best level this build has and this CPU runs.
KernelIsa bestKernelIsa();

// The level to use given MRT_HWSIM_ISA's value `request` (null or empty: the
// best). A name that is not a level, or a level this CPU cannot run, gives the
// best level and a message in `warning` naming the bad value.
KernelIsa chooseKernelIsa(const char *request, std::string &warning);

// The level this process uses, chosen at first call (warnings go to stderr).
KernelIsa activeKernelIsa();
const KernelTable &activeKernels();

}  // namespace hwsim::detail
