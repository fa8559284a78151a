// Benchmark programs linked with mrt_bench_main (bench/CMakeLists.txt) run
// against a simulated system of their own: 4 IPUs whose lock files live in
// a fresh temporary directory, so a benchmark never waits for, or takes,
// the devices of tests or other programs running beside it.
#pragma once

#include <filesystem>

namespace mrt_bench {

// The temporary directory (lock files; a place for the models a benchmark
// writes). Removed when the program ends.
const std::filesystem::path &workDir();

}  // namespace mrt_bench
