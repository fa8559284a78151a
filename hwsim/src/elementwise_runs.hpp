// Elementwise runs: a compute set of many small elementwise vertices (a
// Conv's bias Add and its Relu in mnist-8: 112-224 vertices of 14-56
// elements each) is run on the host as one kernel call per run of vertices
// whose operands lie end to end in the arena, instead of one call per vertex
// with its own operand setup. Only where the result cannot tell: every
// vertex of the compute set runs the same codelet, whose value for an
// element depends on that element's inputs alone and not on how the kernel
// splits or vectorizes the elements (every binary and unary op: the
// transcendental ones compute each element on the packet path wherever it
// lies, kernels/whole_packets.hpp; no broadcast), and no vertex writes a byte that another vertex reads or
// writes, so the order vertices run in is free. The plan, the tiles and the
// modelled cycles are the compute set's as before; only the host calls differ.
#pragma once

#include <cstdint>
#include <vector>

#include "codelets/registry.hpp"

namespace hwsim::detail {

struct ElementwiseRun {
  // The run's first vertex: its codelet, attributes, operand types, where
  // each operand starts and the mirror an input may be read through (its
  // PreparedOperands, vertex_operands.hpp).
  std::uint32_t vertex = 0;
  std::uint64_t numElements = 0;
  Shape shape;  // {numElements}: the run as one flat vertex
};

// The runs of one compute set (Engine::Impl::planElementwiseRuns) and, per
// chunk of its vertices, the runs that chunk holds (run index boundaries, as
// csChunks holds vertex ones). Empty when the compute set does not qualify
// or no two vertices join.
struct ElementwiseRuns {
  std::vector<ElementwiseRun> runs;
  std::vector<std::uint32_t> chunks;
  bool empty() const { return runs.empty(); }
};

// Whether a codelet qualifies (see above).
bool runsElementwise(const CodeletSpec &spec);

}  // namespace hwsim::detail
