// Which level's kernels this process runs: the best one the build has and
// the CPU supports, unless MRT_HWSIM_ISA names another.
#include "codelets/kernels.hpp"

#include <cpuid.h>

#include <cstdio>
#include <cstdlib>

#include <fmt/format.h>

// Each level's entry point (hwsim_add_kernels in hwsim/CMakeLists.txt).
extern "C" const hwsim::detail::KernelTable *hwsim_kernel_table_baseline();
#ifdef HWSIM_KERNELS_V3
extern "C" const hwsim::detail::KernelTable *hwsim_kernel_table_v3();
#endif
#ifdef HWSIM_KERNELS_V4
extern "C" const hwsim::detail::KernelTable *hwsim_kernel_table_v4();
#endif

namespace hwsim::detail {

namespace {

#if defined(HWSIM_KERNELS_V3) || defined(HWSIM_KERNELS_V4)
// F16C and MOVBE, from CPUID leaf 1's ECX: clang 14's __builtin_cpu_supports
// knows neither name.
bool cpuHasF16cAndMovbe() {
  constexpr unsigned kF16c = 1u << 29, kMovbe = 1u << 22;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (kF16c | kMovbe)) == (kF16c | kMovbe);
}
// __builtin_cpu_supports also checks that the OS saves the AVX / AVX-512 state.
bool cpuRunsV3() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
         __builtin_cpu_supports("bmi2") && cpuHasF16cAndMovbe();
}
bool cpuRunsV4() {
  return cpuRunsV3() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}
#endif

}  // namespace

std::string_view kernelIsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::Baseline: return "baseline";
    case KernelIsa::V3: return "v3";
    case KernelIsa::V4: return "v4";
  }
  return "baseline";
}

const KernelTable *kernelTable(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::Baseline: return hwsim_kernel_table_baseline();
    case KernelIsa::V3:
#ifdef HWSIM_KERNELS_V3
      if (cpuRunsV3()) return hwsim_kernel_table_v3();
#endif
      return nullptr;
    case KernelIsa::V4:
#ifdef HWSIM_KERNELS_V4
      if (cpuRunsV4()) return hwsim_kernel_table_v4();
#endif
      return nullptr;
  }
  return nullptr;
}

KernelIsa bestKernelIsa() {
  if (kernelTable(KernelIsa::V4) != nullptr) return KernelIsa::V4;
  if (kernelTable(KernelIsa::V3) != nullptr) return KernelIsa::V3;
  return KernelIsa::Baseline;
}

KernelIsa chooseKernelIsa(const char *request, std::string &warning) {
  const KernelIsa best = bestKernelIsa();
  if (request == nullptr || *request == '\0') return best;
  const std::string_view name(request);
  for (KernelIsa isa : kAllKernelIsas) {
    if (name != kernelIsaName(isa)) continue;
    if (kernelTable(isa) != nullptr) return isa;
    warning = fmt::format("MRT_HWSIM_ISA '{}': this build or CPU cannot run it; using '{}'", name,
                          kernelIsaName(best));
    return best;
  }
  warning = fmt::format("MRT_HWSIM_ISA '{}' is not one of baseline, v3, v4; using '{}'", name, kernelIsaName(best));
  return best;
}

KernelIsa activeKernelIsa() {
  static const KernelIsa active = [] {
    std::string warning;
    const KernelIsa isa = chooseKernelIsa(std::getenv("MRT_HWSIM_ISA"), warning);
    if (!warning.empty()) std::fprintf(stderr, "hwsim: %s\n", warning.c_str());
    return isa;
  }();
  return active;
}

// Looked up once: the level is fixed at the first call, and each lookup
// asks the CPU again (engine creation asks per vertex operand).
const KernelTable &activeKernels() {
  static const KernelTable &active = *kernelTable(activeKernelIsa());
  return active;
}

}  // namespace hwsim::detail
