// main() of the benchmark programs that use private devices
// (private_devices.hpp).
#include "private_devices.hpp"

#include <cstdlib>
#include <string>

#include <benchmark/benchmark.h>
#include <stdlib.h>

namespace {
std::filesystem::path g_workDir;
}

const std::filesystem::path &mrt_bench::workDir() { return g_workDir; }

int main(int argc, char **argv) {
  std::string dir = (std::filesystem::temp_directory_path() / "mrt_bench_XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return 1;
  g_workDir = dir;
  ::setenv("MRT_HWSIM_LOCK_DIR", dir.c_str(), 1);
  ::setenv("MRT_HWSIM_IPUS", "4", 1);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::filesystem::remove_all(g_workDir);
  return 0;
}
