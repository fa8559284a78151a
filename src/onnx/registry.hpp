// The operator registry: op type -> the function lowering one node of it.
// Each operator family registers itself from its own file (ops_*.cpp);
// docs/onnx.md lists the same operators with their attributes and limits.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "onnx/context.hpp"

namespace mrt::onnx {

// Lowers one node: reads its inputs from ctx and sets every output. Throws
// UnsupportedNode for what this frontend does not support.
using LowerFn = std::function<void(LoweringContext &ctx, const ::onnx::NodeProto &node)>;

class OpRegistry {
 public:
  void add(const std::string &opType, LowerFn lower);
  const LowerFn *find(const std::string &opType) const;
  std::vector<std::string> opTypes() const;

 private:
  std::map<std::string, LowerFn> ops_;
};

// Every operator family, registered once.
const OpRegistry &opRegistry();

void registerUnaryOps(OpRegistry &registry);
void registerBinaryOps(OpRegistry &registry);
void registerMatMulOps(OpRegistry &registry);
void registerShapeOps(OpRegistry &registry);
void registerReduceOps(OpRegistry &registry);
void registerConvOps(OpRegistry &registry);
void registerConvTransposeOps(OpRegistry &registry);
void registerNormOps(OpRegistry &registry);
void registerRnnOps(OpRegistry &registry);
void registerPadTileOps(OpRegistry &registry);
void registerResizeOps(OpRegistry &registry);
void registerGatherOps(OpRegistry &registry);
void registerLossOps(OpRegistry &registry);
void registerGenerateOps(OpRegistry &registry);
void registerCumSumOps(OpRegistry &registry);
void registerQuantizeOps(OpRegistry &registry);
void registerEinsumOps(OpRegistry &registry);
void registerDftOps(OpRegistry &registry);
void registerGridSampleOps(OpRegistry &registry);
void registerNmsOps(OpRegistry &registry);
void registerSelectOps(OpRegistry &registry);
void registerMaxUnpoolOps(OpRegistry &registry);
void registerDetOps(OpRegistry &registry);

}  // namespace mrt::onnx
