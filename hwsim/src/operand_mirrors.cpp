#include "operand_mirrors.hpp"

#include <algorithm>

#include "codelets/registry.hpp"
#include "engine_impl.hpp"
#include "planar_operands.hpp"
#include "tagged_spans.hpp"

namespace hwsim::detail {

namespace {

// The ranges merged where they overlap or touch.
ByteRanges merged(ByteRanges r) {
  std::sort(r.begin(), r.end());
  ByteRanges out;
  for (const auto &[off, len] : r) {
    if (!out.empty() && off <= out.back().first + out.back().second) {
      out.back().second = std::max(out.back().first + out.back().second, off + len) - out.back().first;
    } else {
      out.emplace_back(off, len);
    }
  }
  return out;
}

// Whether two of a copy's pieces write the same byte (the later wins, so the
// earlier piece's destination would not hold its source).
bool writesAByteTwice(std::vector<CopyChunk> chunks) {
  std::sort(chunks.begin(), chunks.end(), [](const CopyChunk &a, const CopyChunk &b) { return a.dst < b.dst; });
  for (std::size_t i = 1; i < chunks.size(); ++i) {
    if (chunks[i].dst < chunks[i - 1].dst + chunks[i - 1].bytes) return true;
  }
  return false;
}

}  // namespace

OperandMirrors::OperandMirrors(const ExecutableData &d, const std::vector<ByteSpan> &viewRanges,
                               const std::vector<std::vector<CopyChunk>> &copyChunks, bool planarReads) {
  madeBy_.assign(d.nodes.size(), kNone);
  staledBy_.assign(d.nodes.size(), {});
  readBy_.assign(d.nodes.size(), {});
  droppable_.assign(d.nodes.size(), {});
  reads_.assign(d.views.size(), {});
  planarReads_.assign(d.views.size(), {});
  for (std::uint32_t i = 0; i < d.nodes.size(); ++i) {
    if (copyChunks[i].empty()) continue;
    madeBy_[i] = count();
    mirrorNodes_.push_back(i);
  }
  if (mirrorNodes_.empty()) return;

  TaggedSpans spans;
  struct Dst {
    CopyChunk chunk;
    std::uint32_t mirror;
  };
  std::vector<Dst> dsts;  // where a vertex input may find its source
  for (std::uint32_t m = 0; m < count(); ++m) {
    const auto &chunks = copyChunks[mirrorNodes_[m]];
    ByteRanges bytes;
    for (const auto &c : chunks) bytes.insert(bytes.end(), {{c.src, c.bytes}, {c.dst, c.bytes}});
    for (const auto &[off, len] : merged(std::move(bytes))) spans.add(off, off + len, m);
    if (writesAByteTwice(chunks)) continue;
    for (const auto &c : chunks) dsts.push_back({c, m});
  }
  spans.finish();
  std::sort(dsts.begin(), dsts.end(), [](const Dst &a, const Dst &b) { return a.chunk.dst < b.chunk.dst; });

  // The piece of one mirror's copy holding [off, end), if one does.
  const auto pieceHolding = [&](std::uint64_t off, std::uint64_t end) -> const Dst * {
    auto it = std::upper_bound(dsts.begin(), dsts.end(), off, [](std::uint64_t o, const Dst &x) { return o < x.chunk.dst; });
    if (it == dsts.begin()) return nullptr;
    const Dst &hit = *--it;
    return end <= hit.chunk.dst + hit.chunk.bytes ? &hit : nullptr;
  };
  // Where a planar field reads view `view` (at arena bytes [off, ...)) when
  // one mirror's pieces fill it plane by plane from sources at one pitch.
  const auto planarRead = [&](std::uint32_t view, std::uint64_t off) -> Read {
    const ExeView &v = d.views[view];
    const Planes planes = planesOf(v.type, *v.shape);
    std::uint32_t mirror = kNone;
    const std::uint64_t pitch = uniformPitch(planes, sizeOf(v.type), [&](std::uint64_t i) -> std::optional<std::uint64_t> {
      const std::uint64_t at = off + i * planes.bytes;
      const Dst *hit = pieceHolding(at, at + planes.bytes);
      if (hit == nullptr || (mirror != kNone && hit->mirror != mirror)) return std::nullopt;
      mirror = hit->mirror;
      return hit->chunk.src + (at - hit->chunk.dst);
    });
    if (pitch == 0) return {};
    const Dst *first = pieceHolding(off, off + planes.bytes);
    return {mirror, first->chunk.src + (off - first->chunk.dst), pitch};
  };

  const auto &lib = codeletLibrary();
  // The input views the vertices read.
  for (const auto &cs : d.computeSets) {
    for (const auto &vx : cs.vertices) {
      for (std::size_t f = 0; f < vx.operands.size(); ++f) {
        const std::uint32_t view = vx.operands[f];
        if (view == kNoView || lib[vx.codelet].fields[f].dir != FieldDir::In) continue;
        const ByteSpan r = viewRanges[view];
        if (r.size() != 1 || r[0].second == 0) continue;
        const std::uint64_t off = r[0].first, end = off + r[0].second;
        if (const Dst *hit = pieceHolding(off, end)) {
          reads_[view] = {hit->mirror, hit->chunk.src + (off - hit->chunk.dst)};
        } else if (planarReads && lib[vx.codelet].fields[f].planar) {
          planarReads_[view] = planarRead(view, off);
        }
      }
    }
  }
  staledBy_ = tagsWrittenBy(d, viewRanges, spans);
  planDeferral(d, viewRanges, copyChunks);
}

namespace {

bool isControl(NodeKind kind) {
  switch (kind) {
    case NodeKind::Repeat:
    case NodeKind::RepeatWhileTrue:
    case NodeKind::RepeatWhileFalse:
    case NodeKind::If:
    case NodeKind::Switch:
    case NodeKind::Call: return true;
    default: return false;
  }
}

// The leaves a program runs, in order, if it has no control flow (only
// nested sequences); false otherwise.
bool linearSteps(const ExecutableData &d, std::uint32_t node, std::vector<std::uint32_t> &steps) {
  const ExeNode &n = d.nodes[node];
  if (isControl(n.kind)) return false;
  if (n.kind != NodeKind::Sequence) {
    steps.push_back(node);
    return true;
  }
  for (const std::uint32_t c : n.children) {
    if (!linearSteps(d, c, steps)) return false;
  }
  return true;
}

void markSubtree(const ExecutableData &d, std::uint32_t node, std::vector<std::uint8_t> &marked) {
  if (marked[node]) return;
  marked[node] = 1;
  for (const std::uint32_t c : d.nodes[node].children) markSubtree(d, c, marked);
}

}  // namespace

void OperandMirrors::planDeferral(const ExecutableData &d, const std::vector<ByteSpan> &viewRanges,
                                  const std::vector<std::vector<CopyChunk>> &copyChunks) {
  TaggedSpans dstSpans;  // the destination bytes only
  for (std::uint32_t m = 0; m < count(); ++m) {
    for (const auto &c : copyChunks[mirrorNodes_[m]]) dstSpans.add(c.dst, c.dst + c.bytes, m);
  }
  dstSpans.finish();
  const auto touch = [&](std::uint32_t view, std::vector<std::uint32_t> &out) {
    if (view == kNoView) return;
    for (const auto &[off, len] : viewRanges[view]) dstSpans.touched(off, off + len, out);
  };
  // What the host can read is never deferred.
  deferred_.assign(count(), 1);
  std::vector<std::uint32_t> seen;
  for (const auto &hc : d.hostCopies) {
    if (hc.isRead) touch(hc.view, seen);
  }
  for (const std::uint32_t m : seen) deferred_[m] = 0;
  anyDeferred_ = std::find(deferred_.begin(), deferred_.end(), 1) != deferred_.end();
  if (!anyDeferred_) return;

  // Per node, the destinations it reads at all (reads) and other than
  // through the mirror (readBy_).
  const auto &lib = codeletLibrary();
  std::vector<std::vector<std::uint32_t>> csAll(d.computeSets.size()), csDirect(d.computeSets.size());
  for (std::size_t c = 0; c < d.computeSets.size(); ++c) {
    for (const auto &vx : d.computeSets[c].vertices) {
      for (std::size_t f = 0; f < vx.operands.size(); ++f) {
        const FieldDir dir = lib[vx.codelet].fields[f].dir;
        if (vx.operands[f] == kNoView || dir == FieldDir::Out) continue;
        const std::size_t before = csAll[c].size();
        touch(vx.operands[f], csAll[c]);
        const std::uint32_t via = dir == FieldDir::In ? readFor(vx.operands[f], lib[vx.codelet].fields[f].planar).mirror : kNone;
        for (std::size_t k = before; k < csAll[c].size(); ++k) {
          if (csAll[c][k] != via) csDirect[c].push_back(csAll[c][k]);
        }
      }
    }
    sortUnique(csAll[c]);
    sortUnique(csDirect[c]);
  }
  std::vector<std::vector<std::uint32_t>> reads(d.nodes.size());
  for (std::uint32_t i = 0; i < d.nodes.size(); ++i) {
    const ExeNode &n = d.nodes[i];
    switch (n.kind) {
      case NodeKind::Execute:
        reads[i] = csAll[n.index];
        readBy_[i] = csDirect[n.index];
        break;
      case NodeKind::TensorToRemote: touch(n.view1, reads[i]); [[fallthrough]];
      case NodeKind::Copy:
      case NodeKind::TensorToStream:
      case NodeKind::PrintTensor:
      case NodeKind::If:
      case NodeKind::Switch:
      case NodeKind::RepeatWhileTrue:
      case NodeKind::RepeatWhileFalse: touch(n.view0, reads[i]); break;
      case NodeKind::RemoteToTensor: touch(n.view1, reads[i]); break;
      default: break;
    }
    sortUnique(reads[i]);
    if (n.kind != NodeKind::Execute) readBy_[i] = reads[i];
    auto &direct = readBy_[i];
    direct.erase(std::remove_if(direct.begin(), direct.end(), [&](std::uint32_t m) { return !deferred_[m]; }),
                 direct.end());
  }

  // A write may drop a pending copy where, in every linear program the node
  // is in, the copy comes again before any read of its destination: a
  // backward sweep keeps, per mirror, whether that holds from a step to the
  // end of the program (not past it: other programs and runs may read it).
  for (std::uint32_t i = 0; i < d.nodes.size(); ++i) {
    droppable_[i].resize(staledBy_[i].size());
    for (std::size_t k = 0; k < staledBy_[i].size(); ++k) {
      const std::uint32_t m = staledBy_[i][k];
      droppable_[i][k] = deferred_[m] && m != madeBy_[i];
    }
  }
  std::vector<std::uint8_t> underControl(d.nodes.size(), 0);
  std::vector<std::uint8_t> dead(count());
  std::vector<std::uint32_t> steps;
  for (const std::uint32_t root : d.programs) {
    steps.clear();
    if (!linearSteps(d, root, steps)) {
      markSubtree(d, root, underControl);
      continue;
    }
    std::fill(dead.begin(), dead.end(), 0);
    for (std::size_t j = steps.size(); j-- > 0;) {
      const std::uint32_t id = steps[j];
      // A node's own reads count: it marks what it writes stale before it
      // runs, so even its reads through a mirror read the destination.
      for (const std::uint32_t m : reads[id]) dead[m] = 0;
      for (std::size_t k = 0; k < staledBy_[id].size(); ++k) {
        if (!dead[staledBy_[id][k]]) droppable_[id][k] = 0;
      }
      if (madeBy_[id] != kNone) dead[madeBy_[id]] = 1;
    }
  }
  for (std::uint32_t i = 0; i < d.nodes.size(); ++i) {
    if (underControl[i]) std::fill(droppable_[i].begin(), droppable_[i].end(), 0);
  }
}

}  // namespace hwsim::detail
