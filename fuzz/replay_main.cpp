// The fuzz targets without libFuzzer: feeds every file named on the command
// line, and every file of every directory named (sorted, dot files
// skipped), to LLVMFuzzerTestOneInput once. ctest replays the corpus and the
// regressions this way in the ordinary (GCC) builds; a crash or sanitizer
// report fails the test.
//
//   fuzz_model_run_replay fuzz/corpus fuzz/regressions [FILE...]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness.hpp"

namespace fs = std::filesystem;

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (!fs::is_directory(arg)) {
      files.push_back(arg);
      continue;
    }
    std::vector<fs::path> inside;
    for (const fs::directory_entry &entry : fs::directory_iterator(arg)) {
      if (entry.is_regular_file() && entry.path().filename().string().front() != '.') inside.push_back(entry.path());
    }
    std::sort(inside.begin(), inside.end());
    files.insert(files.end(), inside.begin(), inside.end());
  }
  for (const fs::path &file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
      return 2;
    }
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
    const auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t *>(bytes.data()), bytes.size());
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    std::fprintf(stderr, "replay:   done in %.1f ms\n", took.count());
  }
  std::printf("replay: %zu inputs, no crash\n", files.size());
  return 0;
}
