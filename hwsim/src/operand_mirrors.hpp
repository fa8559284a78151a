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
//
// Deferred copies: a mirror whose destination no host read handle can see
// need not be written at all while every read of it goes to the source. Its
// copy then only marks it *pending* (fresh, destination not written yet),
// and the bytes are copied when first needed: before a step reads the
// destination other than through the mirror (readBy), before a step writes
// either side (staledBy), before a pipelined run. A write need not copy
// them when the destination is dead there (droppable): in every linear
// program the step is in, the mirror's own copy rewrites the whole
// destination before any step reads it. So the mlp's exchange of the image
// rows to the tiles that multiply them, whose source the next run's input
// stream overwrites, is never written; every byte any step or the host
// reads is what the eager copies gave. Only a run that ends early (a stop,
// a device error, a failing callback) can leave such a destination, which
// the host cannot read, unwritten where the rest of the run would have
// rewritten it before reading it.
#pragma once

#include <atomic>
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
    // 0: the source is one piece; else (planar fields only) plane i of the
    // view is at offset + i * pitch (planar_operands.hpp).
    std::uint64_t planePitch = 0;
  };

  // Whether an input is read at its copy's source: while the mirror is
  // fresh. fresh: a replica's flags, per mirror; null (pipelined stages)
  // reads every view itself.
  static bool viaSource(const Read &read, const std::atomic<bool> *fresh) {
    return fresh != nullptr && read.mirror != kNone && fresh[read.mirror].load(std::memory_order_relaxed);
  }
  // Where in the arena an input whose own bytes are at `own` is read.
  static std::uint64_t readOffset(std::uint64_t own, const Read &read, const std::atomic<bool> *fresh) {
    return viaSource(read, fresh) ? read.offset : own;
  }

  OperandMirrors() = default;
  // viewRanges: each view's arena byte ranges; copyChunks: per node
  // (planCopies); planarReads: whether planar fields may read their planes
  // from sources at a pitch (host.planarOperands).
  OperandMirrors(const ExecutableData &d, const std::vector<ByteSpan> &viewRanges,
                 const std::vector<std::vector<CopyChunk>> &copyChunks, bool planarReads);

  std::uint32_t count() const { return static_cast<std::uint32_t>(mirrorNodes_.size()); }
  // The mirror a Copy node makes fresh (kNone for other nodes).
  std::uint32_t madeBy(std::uint32_t node) const { return node < madeBy_.size() ? madeBy_[node] : kNone; }
  // The mirrors a node's writes make stale.
  const std::vector<std::uint32_t> &staledBy(std::uint32_t node) const { return staledBy_[node]; }
  // The read a contiguous vertex input view of a field, planar or not
  // (FieldSpec::planar), may take instead (mirror kNone if none).
  const Read &readFor(std::uint32_t view, bool planar) const {
    return reads_[view].mirror == kNone && planar ? planarReads_[view] : reads_[view];
  }

  // The Copy node of a mirror.
  std::uint32_t copyNode(std::uint32_t mirror) const { return mirrorNodes_[mirror]; }
  // Whether the mirror's copy is deferred (pending until its bytes are needed).
  bool deferred(std::uint32_t mirror) const { return deferred_[mirror] != 0; }
  bool anyDeferred() const { return anyDeferred_; }
  // Deferred mirrors whose destination bytes a node may read other than
  // through the mirror: their pending copies are made before it runs.
  const std::vector<std::uint32_t> &readBy(std::uint32_t node) const { return readBy_[node]; }
  // Parallel to staledBy(node): 1 where a pending copy of that mirror may be
  // dropped rather than made when the node runs (its destination is dead there).
  const std::vector<std::uint8_t> &droppable(std::uint32_t node) const { return droppable_[node]; }

 private:
  void planDeferral(const ExecutableData &d, const std::vector<ByteSpan> &viewRanges,
                    const std::vector<std::vector<CopyChunk>> &copyChunks);

  std::vector<std::uint32_t> mirrorNodes_;               // per mirror: its Copy node
  std::vector<std::uint32_t> madeBy_;                    // per node
  std::vector<std::vector<std::uint32_t>> staledBy_;     // per node
  std::vector<Read> reads_;                              // per view
  std::vector<Read> planarReads_;                        // per view: for planar fields, where reads_ has none
  std::vector<std::uint8_t> deferred_;                   // per mirror
  bool anyDeferred_ = false;
  std::vector<std::vector<std::uint32_t>> readBy_;       // per node
  std::vector<std::vector<std::uint8_t>> droppable_;     // per node, parallel to staledBy_
};

}  // namespace hwsim::detail
