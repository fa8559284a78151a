#include "tagged_spans.hpp"

#include <algorithm>

#include "codelets/registry.hpp"

namespace hwsim::detail {

void TaggedSpans::finish() {
  std::sort(spans_.begin(), spans_.end(), [](const Span &a, const Span &b) { return a.begin < b.begin; });
  maxEnd_.resize(spans_.size());
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < spans_.size(); ++i) maxEnd_[i] = m = std::max(m, spans_[i].end);
}

void TaggedSpans::touched(std::uint64_t begin, std::uint64_t end, std::vector<std::uint32_t> &out) const {
  std::size_t i = static_cast<std::size_t>(
      std::lower_bound(spans_.begin(), spans_.end(), end, [](const Span &s, std::uint64_t e) { return s.begin < e; }) -
      spans_.begin());
  while (i-- > 0 && maxEnd_[i] > begin) {
    if (spans_[i].end > begin) out.push_back(spans_[i].tag);
  }
}

void sortUnique(std::vector<std::uint32_t> &v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::vector<std::vector<std::uint32_t>> tagsWrittenBy(const ExecutableData &d, const std::vector<ByteSpan> &viewRanges,
                                                      const TaggedSpans &spans) {
  const auto &lib = codeletLibrary();
  const auto add = [&](std::uint32_t view, std::vector<std::uint32_t> &out) {
    for (const auto &[off, len] : viewRanges[view]) spans.touched(off, off + len, out);
  };
  std::vector<std::vector<std::uint32_t>> csWritten(d.computeSets.size());
  for (std::size_t c = 0; c < d.computeSets.size(); ++c) {
    for (const auto &vx : d.computeSets[c].vertices) {
      for (std::size_t f = 0; f < vx.operands.size(); ++f) {
        if (vx.operands[f] != kNoView && lib[vx.codelet].fields[f].dir != FieldDir::In) add(vx.operands[f], csWritten[c]);
      }
    }
  }
  std::vector<std::vector<std::uint32_t>> written(d.nodes.size());
  for (std::uint32_t i = 0; i < d.nodes.size(); ++i) {
    const auto &n = d.nodes[i];
    switch (n.kind) {
      case NodeKind::Copy:
      case NodeKind::StreamToTensor: add(n.view1, written[i]); break;
      case NodeKind::RemoteToTensor: add(n.view0, written[i]); break;
      case NodeKind::Execute: written[i] = csWritten[n.index]; break;
      default: break;
    }
    sortUnique(written[i]);
  }
  return written;
}

}  // namespace hwsim::detail
