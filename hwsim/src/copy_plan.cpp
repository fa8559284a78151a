#include "copy_plan.hpp"

#include <algorithm>
#include <cstring>

#include "engine_impl.hpp"

namespace hwsim::detail {

namespace {

// The ranges in offset order: themselves when they already are (most views'
// segments), else a sorted copy held in `scratch`.
ByteSpan sortedRanges(ByteSpan ranges, ByteRanges &scratch) {
  if (std::is_sorted(ranges.begin(), ranges.end())) return ranges;
  scratch.assign(ranges.begin(), ranges.end());
  std::sort(scratch.begin(), scratch.end());
  return scratch;
}

}  // namespace

bool overlap(ByteSpan a, ByteSpan b) {
  ByteRanges aScratch, bScratch;
  a = sortedRanges(a, aScratch);
  b = sortedRanges(b, bScratch);
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t aEnd = a[i].first + a[i].second, bEnd = b[j].first + b[j].second;
    if (a[i].first < bEnd && b[j].first < aEnd) return true;
    if (aEnd <= bEnd) ++i;
    else ++j;
  }
  return false;
}

std::vector<CopyChunk> directCopyChunks(ByteSpan src, ByteSpan dst) {
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

void runCopyChunks(std::uint8_t *base, const std::vector<CopyChunk> &chunks) {
  for (const auto &c : chunks) std::memcpy(base + c.dst, base + c.src, c.bytes);
}

}  // namespace hwsim::detail

namespace hwsim {

void detail::EnginePlan::planCopies() {
  const std::vector<detail::ByteSpan> ranges = viewSegments();
  copyChunks.assign(d->nodes.size(), {});
  for (std::size_t i = 0; i < d->nodes.size(); ++i) {
    const auto &n = d->nodes[i];
    if (n.kind == detail::NodeKind::Copy) copyChunks[i] = detail::directCopyChunks(ranges[n.view0], ranges[n.view1]);
  }
  mirrors = detail::OperandMirrors(*d, ranges, copyChunks, settings.planarOperands);
}

void Engine::Impl::resetMirrors(Replica &rep) {
  if (!rep.freshMirrors) rep.freshMirrors = std::make_unique<std::atomic<bool>[]>(mirrors.count());
  for (std::uint32_t m = 0; m < mirrors.count(); ++m) rep.freshMirrors[m].store(false, std::memory_order_relaxed);
  rep.pendingCopies = std::make_unique<std::uint8_t[]>(mirrors.count());
}

void Engine::Impl::beforeHostWrite(unsigned replica) {
  makePendingCopies(replica);
  Replica &rep = *replicas[replica];
  for (std::uint32_t m = 0; m < mirrors.count(); ++m) rep.freshMirrors[m].store(false, std::memory_order_relaxed);
  for (std::size_t j = 0; j < matMulRows.joinedBs.size(); ++j) rep.joinedBs[j].fresh.store(false, std::memory_order_relaxed);
}

void Engine::Impl::makePendingCopy(std::uint32_t mirror, unsigned replica) {
  detail::runCopyChunks(base(replica), copyChunks[mirrors.copyNode(mirror)]);
  replicas[replica]->pendingCopies[mirror] = 0;
}

void Engine::Impl::makePendingCopies(unsigned replica) {
  const std::uint8_t *pending = replicas[replica]->pendingCopies.get();
  for (std::uint32_t m = 0; m < mirrors.count(); ++m) {
    if (pending[m]) makePendingCopy(m, replica);
  }
}

void Engine::Impl::makeCopiesReadBy(std::uint32_t node, unsigned replica) {
  const std::uint8_t *pending = replicas[replica]->pendingCopies.get();
  for (const std::uint32_t m : mirrors.readBy(node)) {
    if (pending[m]) makePendingCopy(m, replica);
  }
}

void Engine::Impl::settlePendingCopies(std::uint32_t node, unsigned replica) {
  makeCopiesReadBy(node, replica);
  std::uint8_t *pending = replicas[replica]->pendingCopies.get();
  const auto &staled = mirrors.staledBy(node);
  const auto &droppable = mirrors.droppable(node);
  for (std::size_t k = 0; k < staled.size(); ++k) {
    const std::uint32_t m = staled[k];
    // A copy rewriting its own destination leaves it pending.
    if (!pending[m] || m == mirrors.madeBy(node)) continue;
    if (droppable[k]) pending[m] = 0;
    else makePendingCopy(m, replica);
  }
}

}  // namespace hwsim
