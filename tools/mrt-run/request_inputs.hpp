// The input and output buffers mrt-run sends: seeded random data by type, or
// raw files given on the command line, sized for the requested batch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "runner/model_runner.hpp"

namespace mrt::run {

// Bytes of one tensor of `desc` holding `batch` samples (desc describes one
// model batch, whose size is its first dimension).
std::uint64_t bytesForBatch(const DataDesc &desc, std::int64_t batch);

struct RequestBuffers {
  std::map<std::string, std::vector<std::byte>> inputs, outputs;
  InputMemoryView inputViews() const;
  OutputMemoryView outputViews();
};

// Inputs from `files` (name -> path of raw bytes whose size must match, or of
// an ONNX TensorProto when it ends in ".pb") or
// random values of the tensor's type from `seed`; zeroed outputs. Throws
// mrt::Error naming the tensor or file on a mismatch.
RequestBuffers makeRequestBuffers(const ModelRunner &runner, std::int64_t batch,
                                  const std::map<std::string, std::string> &files, std::uint32_t seed);

}  // namespace mrt::run
