// The example models of DESIGN.md 9, built through the public C++ wrapper
// (mrt.hpp) only, as any user of the installed library could build them:
// what mrt-gen writes and what tests and benchmarks across the project run.
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

#include <string_view>

#include <mrt.hpp>

#include "example_options.hpp"

namespace mrt_examples {

// Throws mrt::Error: MRT_NOT_FOUND for an unknown name, MRT_INVALID_ARGUMENT
// for options the model cannot take (batch 0, pipeline2 not on 2 IPUs, a
// model larger than the IPU's memory, ...).
mrt::Model buildExampleModel(std::string_view name, const ExampleOptions &options = {});

}  // namespace mrt_examples
