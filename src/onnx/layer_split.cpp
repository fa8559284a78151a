#include "onnx/layer_split.hpp"

#include <map>

namespace mrt::onnx {

std::vector<unsigned> layerIpus(const ::onnx::GraphProto &g, unsigned ipus) {
  std::map<std::string, double> weightElements;
  for (const auto &init : g.initializer()) {
    double elements = 1;
    for (const auto d : init.dims()) elements *= static_cast<double>(d);
    weightElements[init.name()] = elements;
  }
  std::vector<double> weights;
  double total = 0;
  for (const auto &node : g.node()) {
    double w = 1;
    for (const auto &in : node.input()) {
      if (const auto it = weightElements.find(in); it != weightElements.end()) w += it->second;
    }
    weights.push_back(w);
    total += w;
  }
  std::vector<unsigned> out;
  double before = 0;
  for (const double w : weights) {
    const auto ipu = static_cast<unsigned>((before + w / 2) / total * ipus);
    out.push_back(std::min(ipu, ipus - 1));
    before += w;
  }
  return out;
}

std::set<std::string> usedFrom(const ::onnx::GraphProto &g, int first) {
  std::set<std::string> used;
  for (int i = first; i < g.node_size(); ++i) used.insert(g.node(i).input().begin(), g.node(i).input().end());
  for (const auto &output : g.output()) used.insert(output.name());
  return used;
}

}  // namespace mrt::onnx
