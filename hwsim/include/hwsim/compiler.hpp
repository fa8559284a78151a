// compileGraph: validates a graph and its programs, lays out tile memory and
// produces an Executable (Poplar's poplar::compileGraph).
#pragma once

#include <functional>
#include <vector>

#include "hwsim/executable.hpp"
#include "hwsim/graph.hpp"
#include "hwsim/options.hpp"
#include "hwsim/program.hpp"

namespace hwsim {

// Called with (step, totalSteps) as compilation progresses, on the caller's thread.
using ProgressFunc = std::function<void(int, int)>;

// programs[i] is what Engine::run(i) runs.
// Throws:
//   InvalidOption - an option is unknown or malformed (named in the message);
//   GraphError    - bad shapes/types, an unmapped tensor, a vertex touching data
//                   on another tile, a stream copy of the wrong size, ...;
//   LinkError     - a tile needs more memory than it has (tile, bytes needed,
//                   bytes available), unless debug.allowOutOfMemory is true.
Executable compileGraph(const Graph &graph, const std::vector<program::Program> &programs,
                        const OptionFlags &options = {}, const ProgressFunc &progress = {});

}  // namespace hwsim
