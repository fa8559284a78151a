#include "operand_mirrors.hpp"

#include <algorithm>

#include "codelets/registry.hpp"
#include "engine_impl.hpp"

namespace hwsim::detail {

namespace {

// Byte spans, each tagged with the mirror whose bytes it holds, sorted by
// start, with the running maximum of their ends, to find the mirrors a
// range of bytes touches.
class MirrorSpans {
 public:
  void add(std::uint64_t begin, std::uint64_t end, std::uint32_t mirror) { spans_.push_back({begin, end, mirror}); }
  void finish() {
    std::sort(spans_.begin(), spans_.end(), [](const Span &a, const Span &b) { return a.begin < b.begin; });
    maxEnd_.resize(spans_.size());
    std::uint64_t m = 0;
    for (std::size_t i = 0; i < spans_.size(); ++i) maxEnd_[i] = m = std::max(m, spans_[i].end);
  }
  // Adds the mirrors whose spans overlap [begin, end) to out.
  void touched(std::uint64_t begin, std::uint64_t end, std::vector<std::uint32_t> &out) const {
    std::size_t i = static_cast<std::size_t>(
        std::lower_bound(spans_.begin(), spans_.end(), end, [](const Span &s, std::uint64_t e) { return s.begin < e; }) -
        spans_.begin());
    while (i-- > 0 && maxEnd_[i] > begin) {
      if (spans_[i].end > begin) out.push_back(spans_[i].mirror);
    }
  }

 private:
  struct Span {
    std::uint64_t begin, end;
    std::uint32_t mirror;
  };
  std::vector<Span> spans_;
  std::vector<std::uint64_t> maxEnd_;
};

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

OperandMirrors::OperandMirrors(const ExecutableData &d, const std::vector<ByteRanges> &viewRanges,
                               const std::vector<std::vector<CopyChunk>> &copyChunks) {
  madeBy_.assign(d.nodes.size(), kNone);
  staledBy_.assign(d.nodes.size(), {});
  reads_.assign(d.views.size(), {});
  for (std::uint32_t i = 0; i < d.nodes.size(); ++i) {
    if (copyChunks[i].empty()) continue;
    madeBy_[i] = count();
    mirrorNodes_.push_back(i);
  }
  if (mirrorNodes_.empty()) return;

  MirrorSpans spans;
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

  const auto &lib = codeletLibrary();
  // What each compute set writes, and the input views its vertices read.
  std::vector<std::vector<std::uint32_t>> csStaled(d.computeSets.size());
  for (std::size_t c = 0; c < d.computeSets.size(); ++c) {
    for (const auto &vx : d.computeSets[c].vertices) {
      for (std::size_t f = 0; f < vx.operands.size(); ++f) {
        const std::uint32_t view = vx.operands[f];
        if (view == kNoView) continue;
        const ByteRanges &r = viewRanges[view];
        if (lib[vx.codelet].fields[f].dir != FieldDir::In) {
          for (const auto &[off, len] : r) spans.touched(off, off + len, csStaled[c]);
          continue;
        }
        if (r.size() != 1 || r[0].second == 0) continue;
        const std::uint64_t off = r[0].first, end = off + r[0].second;
        auto it = std::upper_bound(dsts.begin(), dsts.end(), off, [](std::uint64_t o, const Dst &x) { return o < x.chunk.dst; });
        if (it == dsts.begin()) continue;
        const Dst &hit = *--it;
        if (end <= hit.chunk.dst + hit.chunk.bytes) reads_[view] = {hit.mirror, hit.chunk.src + (off - hit.chunk.dst)};
      }
    }
  }
  for (std::uint32_t i = 0; i < d.nodes.size(); ++i) {
    const auto &n = d.nodes[i];
    std::vector<std::uint32_t> &staled = staledBy_[i];
    const auto add = [&](std::uint32_t view) {
      for (const auto &[off, len] : viewRanges[view]) spans.touched(off, off + len, staled);
    };
    switch (n.kind) {
      case NodeKind::Copy:
      case NodeKind::StreamToTensor: add(n.view1); break;
      case NodeKind::RemoteToTensor: add(n.view0); break;
      case NodeKind::Execute: staled = csStaled[n.index]; break;
      default: break;
    }
    std::sort(staled.begin(), staled.end());
    staled.erase(std::unique(staled.begin(), staled.end()), staled.end());
  }
}

}  // namespace hwsim::detail
