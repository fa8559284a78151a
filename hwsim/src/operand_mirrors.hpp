// Operand mirrors: a vertex reads a copy's source instead of the copy while
// both still hold the same bytes. A matmul's operands are copied to every
// tile that multiplies them (the weights once by the Load program, the
// activations by each run's exchange), so on the host each tile's GEMM read
// its own copy: 128 distinct 100 KB weight blocks per mlp run at batch 1024,
// streamed from memory, where reading the one source keeps it in cache. The
// bytes read are the same, so results and modelled cycles do not change;
// every copy is still made (the device's memory is what it would be).
//
// A Copy step with direct memcpys (copy_plan.hpp) is a mirror: after it runs,
// each destination byte equals its source byte until a step writes either.
// So every step that may write a mirror's bytes (copies, host-to-device
// streams, remote-buffer reads, compute sets' output fields) marks it stale
// before it runs, the copy marks it fresh after, and so does nothing else;
// a host writeTensor and a load mark every mirror stale. Runs of pipelined
// stages, which may run at once on other threads, never read through a
// mirror.
#pragma once

#include <cstdint>
#include <vector>

#include "copy_plan.hpp"
#include "exe_data.hpp"

namespace hwsim::detail {

class OperandMirrors {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  // Where a vertex input view may be read instead, while mirror `mirror` is fresh.
  struct Read {
    std::uint32_t mirror = kNone;
    std::uint64_t offset = 0;  // of the source bytes in the arena
  };

  OperandMirrors() = default;
  // viewRanges: each view's arena byte ranges; copyChunks: per node (planCopies).
  OperandMirrors(const ExecutableData &d, const std::vector<ByteRanges> &viewRanges,
                 const std::vector<std::vector<CopyChunk>> &copyChunks);

  std::uint32_t count() const { return static_cast<std::uint32_t>(mirrorNodes_.size()); }
  // The mirror a Copy node makes fresh (kNone for other nodes).
  std::uint32_t madeBy(std::uint32_t node) const { return node < madeBy_.size() ? madeBy_[node] : kNone; }
  // The mirrors a node's writes make stale.
  const std::vector<std::uint32_t> &staledBy(std::uint32_t node) const { return staledBy_[node]; }
  // The read a contiguous vertex input view may take instead (mirror kNone if none).
  const Read &readFor(std::uint32_t view) const { return reads_[view]; }

 private:
  std::vector<std::uint32_t> mirrorNodes_;               // per mirror: its Copy node
  std::vector<std::uint32_t> madeBy_;                    // per node
  std::vector<std::vector<std::uint32_t>> staledBy_;     // per node
  std::vector<Read> reads_;                              // per view
};

}  // namespace hwsim::detail
