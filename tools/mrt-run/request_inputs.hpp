// The input and output buffers mrt-run sends: seeded random data by type, or
// raw files given on the command line, sized for the requested batch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "mrt.hpp"

namespace mrt::run {

// How a request of some samples fills the model's tensors. Without dynamic
// batch sizing a request is whole model batches (the first execute input's
// dimension 0 says how many samples one holds) and each tensor, batched or
// not (the stateful model's acc_out F32[4]), is that many transfers. With
// batching_dim D every execute tensor holds the model's batch in dimension D
// and a request is any number of samples of each.
struct BatchPlan {
  std::int64_t modelBatch = 1;          // samples in one model batch
  std::optional<unsigned> batchingDim;  // dynamic batch sizing along it
  std::string batchSource;              // "input 'x' F32[4,8]": where modelBatch comes from

  static BatchPlan of(const std::vector<mrt::DataDesc> &executeInputs, std::optional<unsigned> batchingDim);
  // Bytes of `desc` in a request of `samples` samples.
  std::uint64_t bytesOf(const mrt::DataDesc &desc, std::int64_t samples) const;
};

// A request's buffers and the views the runner reads them through (names
// and bytes borrowed from the maps, which never change after they are made).
struct RequestBuffers {
  std::map<std::string, std::vector<std::byte>> inputs, outputs;
  std::vector<mrt::ConstTensorView> inputViews() const;
  std::vector<mrt::TensorView> outputViews();
};

// Inputs from `files` (name -> path of raw bytes whose size must match, or of
// an ONNX TensorProto when it ends in ".pb", read by
// mrt_onnx_read_tensor_file) or
// random values of the tensor's type from `seed`; zeroed outputs. Throws
// std::runtime_error naming the tensor or file on a mismatch.
RequestBuffers makeRequestBuffers(const mrt::ModelRunner &runner, const BatchPlan &plan, std::int64_t batch,
                                  const std::map<std::string, std::string> &files, std::uint32_t seed);

}  // namespace mrt::run
