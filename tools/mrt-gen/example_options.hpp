// The options and deterministic weights of the example models
// (example_models.hpp), in a header that includes nothing of libmrt, so that
// code which cannot include mrt.hpp (the internals' tests) can use them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

// Exported from libmrt_example_models.so (example_models_abi.hpp says why).
#define MRT_EXAMPLES_API __attribute__((visibility("default")))

namespace mrt_examples {

struct ExampleOptions {
  std::size_t batch = 1;     // B
  std::size_t size = 16;     // N of add_one and replicated
  std::uint64_t seed = 1;    // weights of mlp, pipeline2 and remote_buffer
  unsigned ipus = 0;         // IPUs per replica; 0 = the model's own (2 for pipeline2, else 1)
  unsigned tiles = 0;        // tiles per IPU; 0 = the IPU version's default
  std::uint32_t ipuVersion = 2;
};

MRT_EXAMPLES_API std::vector<std::string> exampleModelNames();

// `count` floats uniform in [lo, hi) from a 64-bit seed (SplitMix64; the
// same on every platform).
MRT_EXAMPLES_API std::vector<float> exampleWeights(std::size_t count, float lo, float hi, std::uint64_t seed);

}  // namespace mrt_examples
