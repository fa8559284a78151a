#include "matmul_rows.hpp"

#include <algorithm>
#include <map>

#include "byte_intervals.hpp"
#include "codelets/kernels.hpp"
#include "engine_plan.hpp"
#include "tagged_spans.hpp"

namespace hwsim {

namespace {

using detail::PreparedOperand;

// The arena bytes an input operand may be read at: its own view, and the
// source of the copy it may be read through (operand_mirrors.hpp).
struct Reads {
  std::uint64_t own, source, bytes;
  bool mirrored;
  // Where the bytes are while its mirror is fresh: what rows compare.
  std::uint64_t usual() const { return mirrored ? source : own; }
};

Reads readsOf(const PreparedOperand &o, std::uint64_t bytes) {
  const bool mirrored = o.read.mirror != detail::OperandMirrors::kNone;
  return {o.offset, mirrored ? o.read.offset : o.offset, bytes, mirrored};
}

}  // namespace

void detail::EnginePlan::planMatMulRows() {
  const std::size_t numCs = d->computeSets.size();
  matMulRows.rows.assign(numCs, {});
  matMulRows.parts.assign(numCs, {});
  if (!settings.matMulRows) return;
  detail::TaggedSpans spans;
  const ExecuteFn matMul = detail::activeKernels().matMul;
  std::map<std::vector<std::uint64_t>, std::uint32_t> joinedIndex;  // {K, then per block its b's bytes and width}
  // A b read at a copy's destination (an operand exchanged at each run of
  // its program) would be joined again at each run, a copy of b per row:
  // only b's read where they live (weights, read through their copies'
  // mirrors) are joined.
  std::vector<detail::ByteInterval> copied;
  for (const auto &n : d->nodes) {
    if (n.kind != detail::NodeKind::Copy) continue;
    for (const auto &[off, len] : views[n.view1].segments) copied.push_back({off, off + len});
  }
  copied = detail::mergedIntervals(std::move(copied));
  for (std::size_t c = 0; c < numCs; ++c) {
    const detail::PreparedVertices &prepared = csVertices[c];
    const std::size_t count = prepared.vertices.size();
    if (count < 2) continue;
    const auto operandsOf = [&](std::size_t v) { return prepared.operands.data() + prepared.vertices[v].firstOperand; };
    const auto bytesOf = [&](const PreparedOperand &o) { return views[o.view].bytes; };
    // A vertex that may join a row: a non-accumulating F32 MatMul of at
    // least two rows, a and b in place (out may be a piece per row: the row
    // writes all of them in place at once).
    std::vector<std::uint8_t> candidate(count, 0);
    std::vector<detail::ByteInterval> outputs;
    for (std::size_t v = 0; v < count; ++v) {
      const detail::PreparedVertex &pv = prepared.vertices[v];
      const PreparedOperand *ops = operandsOf(v);
      for (std::size_t f = 0; f < pv.numOperands; ++f) {
        if (ops[f].view == detail::kNoView || ops[f].dir == detail::FieldDir::In) continue;
        for (const auto &[off, len] : views[ops[f].view].segments) outputs.push_back({off, off + len});
      }
      if (pv.spec->execute != matMul || pv.numOperands != 3 || (*pv.attrs)[0][0] != 0.0) continue;
      bool ok = ops[0].shape->size() == 2 && (*ops[0].shape)[0] >= 2;
      for (std::size_t f = 0; f < 3 && ok; ++f) {
        ok = ops[f].view != detail::kNoView && ops[f].type == Type::F32 && bytesOf(ops[f]) != 0 &&
             (f == 2 || (ops[f].inPlace && ops[f].planePitch == 0));
      }
      candidate[v] = ok;
    }
    if (!detail::sortDisjoint(outputs)) continue;
    // No output may hold a byte a candidate reads, through its mirror or
    // not; its b must be read where it lives.
    for (std::size_t v = 0; v < count; ++v) {
      for (std::size_t f = 0; f < 2 && candidate[v]; ++f) {
        const Reads r = readsOf(operandsOf(v)[f], bytesOf(operandsOf(v)[f]));
        candidate[v] = !detail::overlapsAny(outputs, {r.own, r.own + r.bytes}) && !detail::overlapsAny(outputs, {r.source, r.source + r.bytes});
        if (f == 1 && candidate[v]) candidate[v] = !detail::overlapsAny(copied, {r.usual(), r.usual() + r.bytes});
      }
    }
    // Rows: runs of candidates of one a (its shape and where it is read).
    const auto sameA = [&](std::size_t v, std::size_t w) {
      const PreparedOperand &x = operandsOf(v)[0], &y = operandsOf(w)[0];
      return *x.shape == *y.shape && readsOf(x, bytesOf(x)).usual() == readsOf(y, bytesOf(y)).usual();
    };
    std::vector<detail::MatMulRow> &rows = matMulRows.rows[c];
    for (std::size_t v = 0; v < count;) {
      std::size_t end = v + 1;
      while (candidate[v] && end < count && candidate[end] && sameA(v, end)) ++end;
      if (end - v < 2) {
        v = end;
        continue;
      }
      const PreparedOperand &a = operandsOf(v)[0];
      const std::uint64_t M = (*a.shape)[0], K = (*a.shape)[1];
      std::vector<std::uint64_t> key{K};
      JoinedB joined;
      std::uint64_t columns = 0;
      for (std::size_t w = v; w < end; ++w) {
        const PreparedOperand &b = operandsOf(w)[1];
        const std::uint64_t width = (*b.shape)[1];
        key.insert(key.end(), {readsOf(b, bytesOf(b)).usual(), width});
        joined.column.push_back(columns);
        joined.width.push_back(width);
        columns += width;
      }
      joined.shape = {K, columns};
      // The outs must be the rows of one M x columns matrix, vertex j's
      // columns at column[j] (one matmul's out variable: each vertex's a
      // block of its columns, a piece per row).
      const std::uint64_t outBase = views[operandsOf(v)[2].view].segments[0].first;
      bool joinedOut = true;
      for (std::size_t w = v; w < end && joinedOut; ++w) {
        const std::size_t j = w - v;
        const detail::ByteSpan segments = views[operandsOf(w)[2].view].segments;
        joinedOut = segments.size() == M;
        for (std::uint64_t r = 0; r < M && joinedOut; ++r) {
          joinedOut = segments[r].first == outBase + (r * columns + joined.column[j]) * sizeof(float) &&
                      segments[r].second == joined.width[j] * sizeof(float);
        }
      }
      if (!joinedOut) {
        v = end;
        continue;
      }
      const auto [it, added] = joinedIndex.try_emplace(std::move(key), static_cast<std::uint32_t>(matMulRows.joinedBs.size()));
      if (added) matMulRows.joinedBs.push_back(std::move(joined));
      for (std::size_t w = v; w < end; ++w) {
        const PreparedOperand &b = operandsOf(w)[1];
        const Reads r = readsOf(b, bytesOf(b));
        spans.add(r.own, r.own + r.bytes, it->second);
        if (r.mirrored) spans.add(r.source, r.source + r.bytes, it->second);
      }
      rows.push_back({static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(end - v), it->second, outBase, {M, columns}});
      v = end;
    }
    planRowParts(c);
    // A row runs on one thread: no chunk boundary inside one.
    std::vector<std::uint32_t> &chunks = csChunks[c];
    for (const detail::MatMulRow &row : rows) {
      chunks.erase(std::remove_if(chunks.begin(), chunks.end(),
                                  [&](std::uint32_t at) { return at > row.firstVertex && at < row.firstVertex + row.vertices; }),
                   chunks.end());
    }
  }
  if (matMulRows.joinedBs.empty()) return;
  spans.finish();
  matMulRows.staledBy = detail::tagsWrittenBy(*d, viewSegments(), spans);
}

void detail::EnginePlan::planRowParts(std::size_t cs) {
  // At least this many rows of a per piece: fewer leave the GEMM kernel's
  // row blocks idle.
  constexpr std::uint64_t kMinPartRows = 4;
  const std::vector<detail::MatMulRow> &rows = matMulRows.rows[cs];
  const unsigned threads = settings.hostThreads;
  if (rows.empty() || threads < 2 || rows.size() >= threads) return;
  std::size_t inRows = 0;
  for (const detail::MatMulRow &row : rows) inRows += row.vertices;
  if (inRows != csVertices[cs].vertices.size()) return;  // other vertices: chunks of vertices
  const std::uint64_t perRow = (threads + rows.size() - 1) / rows.size();
  std::vector<detail::MatMulRowPart> parts;
  for (std::uint32_t r = 0; r < rows.size(); ++r) {
    const detail::MatMulRow &row = rows[r];
    const std::uint64_t M = row.outShape[0], columns = row.outShape[1];
    const std::uint64_t K = matMulRows.joinedBs[row.joinedB].shape[0];
    const std::uint64_t pieces = std::min(perRow, M / kMinPartRows);
    if (pieces < 2) return;
    for (std::uint64_t p = 0; p < pieces; ++p) {
      const std::uint64_t first = M * p / pieces, end = M * (p + 1) / pieces;
      parts.push_back({r, first, {end - first, K}, {end - first, columns}});
    }
  }
  matMulRows.parts[cs] = std::move(parts);
}

}  // namespace hwsim
