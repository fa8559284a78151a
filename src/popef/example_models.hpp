// The example models of DESIGN.md 9, built with hwsim ops and buildModel():
// what mrt-gen writes and what tests across the project run.
//
//   add_one        x F32[B,N] -> y = x + 1
//   mlp            image F32[B,784] -> probs F32[B,10] =
//                  softmax(relu(image.w1 + b1).w2 + b2); w1 [784,128], b1 [128],
//                  w2 [128,10], b2 [10] are TensorData streamed by Load
//   stateful       x F32[B,4]; acc F32[4] (TensorData, zeros) loaded by Load;
//                  Main adds the batch sum of x to acc and outputs acc_out;
//                  Save streams acc back as acc_save
//   conditional    x F32[B,8], flag S32[1] -> y = flag != 0 ? 2x : x - 1 (If)
//   remote_buffer  x F32[B,8]; w F32[8] in remote buffer "w" filled from
//                  TensorData -> y = x + w
//   time_major     x F32[4,B,8] (batch in dimension 1) -> y F32[4,B,8],
//                  y[t] = x[0] + ... + x[t] (a running sum over time)
//   replicated     add_one compiled with replicationFactor 2
//   pipeline2      mlp with layer 1 on IPU 0 and layer 2 on IPU 1
//
// Program indices: Load programs first, then Main, then Save; anchor handles
// equal anchor names. Weights are deterministic functions of the seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "popef/model.hpp"

namespace mrt::popef {

struct ExampleOptions {
  std::size_t batch = 1;     // B
  std::size_t size = 16;     // N of add_one and replicated
  std::uint64_t seed = 1;    // weights of mlp, pipeline2 and remote_buffer
  unsigned ipus = 0;         // IPUs per replica; 0 = the model's own (2 for pipeline2, else 1)
  unsigned tiles = 0;        // tiles per IPU; 0 = the IPU version's default
  std::uint32_t ipuVersion = 2;
};

std::vector<std::string> exampleModelNames();

// Throws mrt::Error: NotFound for an unknown name, InvalidArgument for
// options the model cannot take (batch 0, pipeline2 not on 2 IPUs, ...).
std::shared_ptr<Model> buildExampleModel(std::string_view name, const ExampleOptions &options = {});

// The deterministic weights generator: `count` floats uniform in [lo, hi)
// from a 64-bit seed (SplitMix64; the same on every platform).
std::vector<float> exampleWeights(std::size_t count, float lo, float hi, std::uint64_t seed);

}  // namespace mrt::popef
