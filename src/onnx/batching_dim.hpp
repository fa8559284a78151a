// The batching dimension an ONNX compilation records for ModelRunner
// (mrt_onnx_options.batching_dim): checked against the model's user-facing
// anchors when it is compiled, so a bad choice fails there, naming the
// tensor, rather than when a runner is created.
#pragma once

#include <vector>

#include "popef/graph_model_builder.hpp"

namespace mrt::onnx {

// Every anchor the user feeds or reads (no data source: the graph's inputs
// and outputs) must have dimension `dim`, all of one size, the batch the
// runner packs samples into. Throws mrt::Error(InvalidArgument) naming the
// first anchor that has not.
void checkBatchingDim(const std::vector<popef::GraphAnchor> &anchors, unsigned dim);

}  // namespace mrt::onnx
