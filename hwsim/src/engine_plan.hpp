// EnginePlan: what an Engine derives from its executable before it can run
// (where each variable sits in a replica's arena, each view's byte
// segments, the compute sets' chunks for the host pool, the copies' memcpy
// pieces, the operand mirrors, the vertices' prepared operands, the MatMul
// rows and the elementwise runs). It depends only on the executable and on
// the few engine options named in PlanSettings, and nothing changes it once
// made, so engines of the same executable with the same settings share one:
// it is made by the first and kept with the ExecutableData (issue 14, "cheap
// runner creation": 40-50% of creating a runner of a model with thousands
// of vertices, like mlp at batch 1024, once its executable is kept, see
// kept_executables.hpp). What a run changes lives in Engine::Impl.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "copy_plan.hpp"
#include "elementwise_runs.hpp"
#include "exe_data.hpp"
#include "matmul_rows.hpp"
#include "operand_mirrors.hpp"
#include "vertex_operands.hpp"

namespace hwsim::detail {

// The engine options a plan depends on.
struct PlanSettings {
  unsigned hostThreads = 1;     // host.threads (host_threads.hpp): chunks for the pool
  bool elementwiseRuns = true;  // host.elementwiseRuns (elementwise_runs.hpp)
  bool planarOperands = true;   // host.planarOperands (planar_operands.hpp)
  bool matMulRows = true;       // host.matMulRows (matmul_rows.hpp)
  bool operator==(const PlanSettings &) const = default;
};

// A view resolved to byte ranges of a replica's memory arena.
struct ResolvedView {
  bool contiguous = true;
  std::uint64_t offset = 0;  // when contiguous
  std::uint64_t bytes = 0;
  // (offset, length) of each piece, neighbours merged: one when contiguous
  // (none when empty), kept so the copy planning reads every view alike.
  // In segmentPool.
  ByteSpan segments;
};

struct EnginePlan {
  // The plan for d with these settings: the one kept with d, or a new one
  // kept there. d must outlive every engine using it (the Executable an
  // Engine holds keeps it).
  static std::shared_ptr<const EnginePlan> of(const ExecutableData &d, const PlanSettings &settings);

  EnginePlan(const ExecutableData &d, const PlanSettings &settings);
  EnginePlan(const EnginePlan &) = delete;
  EnginePlan &operator=(const EnginePlan &) = delete;

  const ExecutableData *d;
  PlanSettings settings;

  std::vector<std::uint64_t> varOffsets;
  std::uint64_t arenaBytes = 0;
  std::vector<ResolvedView> views;
  ByteRanges segmentPool;  // every view's segments, one allocation for all
  std::vector<std::vector<std::uint32_t>> csChunks;  // vertex index boundaries per compute set
  std::vector<ElementwiseRuns> csRuns;               // per compute set (elementwise_runs.hpp)
  std::vector<PreparedVertices> csVertices;          // per compute set (vertex_operands.hpp)
  MatMulRowPlan matMulRows;                          // matmul_rows.hpp
  std::vector<std::vector<CopyChunk>> copyChunks;
  OperandMirrors mirrors;

 private:
  void resolveLayout();
  // Each view's segments, in view order (what the span-finding plans take).
  std::vector<ByteSpan> viewSegments() const;
  void planComputeSets();
  void planCopies();           // copy_plan.cpp, with the operand mirrors
  void prepareVertices();      // vertex_operands.cpp, after the mirrors
  void planMatMulRows();       // matmul_rows.cpp, after prepareVertices; joins chunks a row would split
  void planRowParts(std::size_t cs);  // matmul_rows.cpp: MatMulRowPlan::parts of compute set cs
  void planElementwiseRuns();  // elementwise_runs.cpp, after the chunks and prepareVertices
};

}  // namespace hwsim::detail
