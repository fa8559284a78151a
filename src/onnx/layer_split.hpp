// Layers over IPUs (option num_ipus > 1, docs/onnx.md): consecutive nodes on
// consecutive IPUs, each IPU holding about the same number of weight
// elements, so a model too big for one IPU spreads over several and its
// Main program is a pipeline (docs/hwsim.md "Pipelining").
#pragma once

#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace mrt::onnx {

// The IPU (0 .. ipus - 1) of each node, in node order, never decreasing:
// node i goes where the middle of its share of the weights falls (its
// initializer inputs' elements, plus one so weightless graphs split by node
// count).
std::vector<unsigned> layerIpus(const ::onnx::GraphProto &g, unsigned ipus);

// What nodes from `first` on read and the graph's outputs: the values that
// move to a node's IPU with it.
std::set<std::string> usedFrom(const ::onnx::GraphProto &g, int first);

}  // namespace mrt::onnx
