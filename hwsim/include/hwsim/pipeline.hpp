// Pipelining a program over the IPUs of a replica (IPU Programmer's Guide,
// "Model parallelism and pipelining"; docs/hwsim.md "Pipelining").
//
// A program whose steps run on one IPU after another, joined by copies
// between IPUs, is a pipeline: stage k is the run of steps on one IPU, and
// the copies to the next stage's IPU are its transfer. When runs stream
// (Engine::runPipelined), stage k of run n+1 executes while stage k+1 of run
// n does, as the IPUs of a real pipeline compute at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hwsim/executable.hpp"

namespace hwsim {

struct PipelineStage {
  unsigned ipu = 0;
  std::vector<unsigned> steps;      // the stage's top-level program steps, in program order
  std::vector<unsigned> transfers;  // its copies to the next stage's IPU, after the steps
  std::uint64_t cycles = 0;         // modelled cycles of the steps (static, see docs)
  std::uint64_t transferCycles = 0; // of the transfers
};

struct PipelinePlan {
  // One stage holding every step when the program is not a pipeline.
  std::vector<PipelineStage> stages;
  // Why a program touching several IPUs is not a pipeline; "" otherwise.
  std::string reason;

  bool pipelined() const { return stages.size() > 1; }
  // One run alone: every stage and transfer, one after another.
  std::uint64_t latencyCycles() const;
  // Between the ends of consecutive runs when runs stream: the slowest
  // stage plus the slowest transfer (all stages compute at once, then all
  // transfers exchange at once). latencyCycles() when not pipelined.
  std::uint64_t intervalCycles() const;
};

// Throws InvalidArgument for a program index >= exe.numPrograms().
PipelinePlan pipelinePlan(const Executable &exe, unsigned program);

}  // namespace hwsim
