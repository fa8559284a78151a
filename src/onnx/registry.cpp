#include "onnx/registry.hpp"

namespace mrt::onnx {

void OpRegistry::add(const std::string &opType, LowerFn lower) { ops_[opType] = std::move(lower); }

const LowerFn *OpRegistry::find(const std::string &opType) const {
  const auto it = ops_.find(opType);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::opTypes() const {
  std::vector<std::string> names;
  for (const auto &[name, fn] : ops_) names.push_back(name);
  return names;
}

const OpRegistry &opRegistry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    registerUnaryOps(r);
    registerBinaryOps(r);
    registerMatMulOps(r);
    registerShapeOps(r);
    registerReduceOps(r);
    registerConvOps(r);
    registerConvTransposeOps(r);
    registerNormOps(r);
    registerRnnOps(r);
    registerPadTileOps(r);
    registerResizeOps(r);
    registerGatherOps(r);
    registerLossOps(r);
    registerGenerateOps(r);
    registerCumSumOps(r);
    registerQuantizeOps(r);
    registerEinsumOps(r);
    registerDftOps(r);
    registerGridSampleOps(r);
    registerNmsOps(r);
    registerSelectOps(r);
    registerMaxUnpoolOps(r);
    registerDetOps(r);
    return r;
  }();
  return registry;
}

}  // namespace mrt::onnx
