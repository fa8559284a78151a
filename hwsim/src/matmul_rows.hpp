// MatMul rows: the vertices of a compute set that multiply one block of rows
// of a by the column blocks of b (a matmul planned over a grid of tiles:
// the mlp's layer1 puts each 32-row block of the image on 4 tiles, one per
// 32 columns of w1) run on the host as one GEMM of the rows by all those
// columns, written in place into out's rows, instead of one narrow GEMM per
// vertex: oneDNN's kernel is 48 columns wide, so 32-column blocks leave a
// third of it idle, and one 784 x 128 GEMM took 0.83-0.85x the time of four
// 784 x 32 ones at 16 to 1024 rows (docs/performance.md, session 22). The
// b blocks lie apart in the arena, so the host keeps them joined, K x (all
// columns), in a buffer of each replica (the weights once more, on the
// host), made when a row first needs it and again only after a step or the
// host may have written the bytes it was read from: a Load program's
// weights are joined once per load, not per run. Only b's read where they
// live qualify (weights, read through their per-tile copies' mirrors): a b
// read at a copy that each run's exchange refreshes would be joined again
// at each run.
//
// Only where the result cannot tell: F32 MatMuls that do not accumulate,
// a and b in place, at least two rows of a (one row stays each vertex's
// GEMV), the outs the rows of one matrix, no output byte read or written by
// another operand of the compute set. Each out holds the same sums of the
// same products, possibly added in another order within the GEMM (about
// 1e-7 relative). The plan, the tiles and the modelled cycles are the
// compute set's as before. host.matMulRows=false turns this off.
#pragma once

#include <cstdint>
#include <vector>

#include "codelets/registry.hpp"
#include "copy_plan.hpp"

namespace hwsim::detail {

struct MatMulRow {
  std::uint32_t firstVertex = 0;  // the row's vertices: consecutive in the compute set, one chunk
  std::uint32_t vertices = 0;
  std::uint32_t joinedB = 0;     // its b blocks (MatMulRowPlan::joinedBs)
  std::uint64_t outOffset = 0;  // of the row's M x (all the columns) of out in the arena
  Shape outShape;               // {M, all the columns}
};

// The b blocks of one or more rows (those that read the same bytes), joined:
// block j's columns [column[j], column[j] + width[j]) of K x columns.
struct JoinedB {
  Shape shape;  // {K, all the columns}
  std::vector<std::uint64_t> column, width;
};

// A piece of a row's M rows of a and out, run as its own GEMM: where a
// compute set is nothing but fewer rows than the host has threads (the mlp's
// layer1 at batch 16: one row), its rows are cut into pieces so that the
// worker pool can run them side by side (8 x 784 x 128 took 0.53x the time
// of 16 x 784 x 128).
struct MatMulRowPart {
  std::uint32_t row = 0;       // in the compute set's rows
  std::uint64_t firstRow = 0;  // of a and out
  Shape aShape, outShape;      // {its rows, K}, {its rows, all the columns}
};

struct MatMulRowPlan {
  std::vector<JoinedB> joinedBs;
  // Per compute set: its rows, by first vertex.
  std::vector<std::vector<MatMulRow>> rows;
  // Per compute set: its rows' pieces, which its chunks then are; empty
  // where the rows are not cut.
  std::vector<std::vector<MatMulRowPart>> parts;
  // Per node: the joined b's whose bytes it may write (tagged_spans.hpp);
  // empty when there are none.
  std::vector<std::vector<std::uint32_t>> staledBy;
};

}  // namespace hwsim::detail
