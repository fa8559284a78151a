// Constant folding: a node whose inputs are all constants (or only the
// shape of its input matters: Shape, Size) is evaluated on the host, so
// shape subgraphs (Shape -> Gather -> Concat -> Reshape) and initializer-only
// computations never reach the device.
#pragma once

#include <set>
#include <string>

#include <onnx/onnx_pb.h>

#include "onnx/context.hpp"

namespace mrt::onnx {

// Evaluates `node` on the host and sets its outputs as constants when it can;
// false when it cannot (an input computed at run time, or an op the host
// evaluator does not have), leaving the node to the device.
bool tryFold(LoweringContext &ctx, const ::onnx::NodeProto &node);

// Op types the host evaluator knows (for docs and the unsupported-op check:
// an op only foldable still fails when its inputs are not constant).
bool isFoldable(const std::string &opType);
// All of them (docs/onnx.md's "Host-evaluated ops", checked by
// tests/onnx/onnx_ops_doc_test.cpp).
const std::set<std::string> &foldableOps();

}  // namespace mrt::onnx
