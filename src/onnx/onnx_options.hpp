// OnnxOptions: what the ONNX frontend needs to know besides the model (the
// C API's mrt_onnx_options, resolved: target built, defaults applied).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <hwsim/target.hpp>

namespace mrt::onnx {

struct OnnxOptions {
  hwsim::Target target = hwsim::Target::gc200();  // one replica's target (numIpus set)
  unsigned replicationFactor = 1;
  // The value given to dynamic dimensions (symbolic, 0 or -1) of the inputs.
  std::int64_t batchSize = 1;
  // Whole shapes of named graph inputs, replacing what the model declares
  // (static dimensions too: a model exported at batch 1 can be compiled for
  // 8); applied before batchSize fills the remaining dynamic dimensions.
  std::map<std::string, std::vector<std::int64_t>> inputShapes;
  // FLOAT computed as FLOAT16 inside the model, its inputs and outputs kept.
  bool halfPrecision = false;
  // Recorded in the model for ModelRunner (popef Metadata::batchingDim);
  // every graph input and output must have it, of one size.
  std::optional<unsigned> batchingDim;
  std::string modelName;  // empty: the ONNX graph's name, or "onnx_model"
  // Tiles of each IPU that only stream (hwsim's exchange.numIOTiles,
  // recorded in the model's engine options): the operators run on the
  // others, and a runner's prefetched inputs land there while they compute.
  unsigned numIOTiles = 0;
  // (step, total) as the compilation advances; may be empty.
  std::function<void(int, int)> progress;
};

}  // namespace mrt::onnx
