#include "copy_plan.hpp"

#include <algorithm>

#include "engine_impl.hpp"

namespace hwsim::detail {

namespace {

// Whether any range of a overlaps any range of b.
bool overlap(ByteRanges a, ByteRanges b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t aEnd = a[i].first + a[i].second, bEnd = b[j].first + b[j].second;
    if (a[i].first < bEnd && b[j].first < aEnd) return true;
    if (aEnd <= bEnd) ++i;
    else ++j;
  }
  return false;
}

}  // namespace

std::vector<CopyChunk> directCopyChunks(const ByteRanges &src, const ByteRanges &dst) {
  if (overlap(src, dst)) return {};
  std::vector<CopyChunk> chunks;
  std::size_t si = 0, di = 0;
  std::uint64_t sUsed = 0, dUsed = 0;  // bytes of src[si] / dst[di] already copied
  while (si < src.size() && di < dst.size()) {
    const std::uint64_t n = std::min(src[si].second - sUsed, dst[di].second - dUsed);
    const CopyChunk c{dst[di].first + dUsed, src[si].first + sUsed, n};
    if (!chunks.empty() && chunks.back().dst + chunks.back().bytes == c.dst && chunks.back().src + chunks.back().bytes == c.src) {
      chunks.back().bytes += n;
    } else if (n != 0) {
      chunks.push_back(c);
    }
    if ((sUsed += n) == src[si].second) ++si, sUsed = 0;
    if ((dUsed += n) == dst[di].second) ++di, dUsed = 0;
  }
  return chunks;
}

}  // namespace hwsim::detail

namespace hwsim {

void Engine::Impl::planCopies() {
  std::vector<detail::ByteRanges> ranges(views.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    const ResolvedView &v = views[i];
    if (v.contiguous && v.bytes) ranges[i] = {{v.offset, v.bytes}};
    else if (!v.contiguous) ranges[i] = v.segments;
  }
  copyChunks.assign(d->nodes.size(), {});
  for (std::size_t i = 0; i < d->nodes.size(); ++i) {
    const auto &n = d->nodes[i];
    if (n.kind == detail::NodeKind::Copy) copyChunks[i] = detail::directCopyChunks(ranges[n.view0], ranges[n.view1]);
  }
  mirrors = detail::OperandMirrors(*d, ranges, copyChunks);
}

void Engine::Impl::staleAllMirrors(Replica &rep) {
  if (!rep.freshMirrors) rep.freshMirrors = std::make_unique<std::atomic<bool>[]>(mirrors.count());
  for (std::uint32_t m = 0; m < mirrors.count(); ++m) rep.freshMirrors[m].store(false, std::memory_order_relaxed);
}

}  // namespace hwsim
