// TaggedSpans: byte spans of a replica's arena, each tagged with what its
// bytes feed (an operand mirror, a joined MatMul operand), indexed to find
// the tags a range of bytes touches; and, per program step, the tags whose
// bytes the step may write. What the engine keeps because some bytes have
// not changed (a copy that still mirrors its source, a gathered operand) is
// dropped before a step that may write them runs (operand_mirrors.hpp,
// matmul_rows.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "copy_plan.hpp"
#include "exe_data.hpp"

namespace hwsim::detail {

class TaggedSpans {
 public:
  void add(std::uint64_t begin, std::uint64_t end, std::uint32_t tag) { spans_.push_back({begin, end, tag}); }
  // After the last add, before the first touched.
  void finish();
  // Adds the tags whose spans overlap [begin, end) to out.
  void touched(std::uint64_t begin, std::uint64_t end, std::vector<std::uint32_t> &out) const;

 private:
  struct Span {
    std::uint64_t begin, end;
    std::uint32_t tag;
  };
  std::vector<Span> spans_;  // sorted by begin
  std::vector<std::uint64_t> maxEnd_;  // running maximum of the ends
};

// Sorts v and drops repeats.
void sortUnique(std::vector<std::uint32_t> &v);

// Per node of d: the tags of `spans` whose bytes the node may write (a
// copy's or a host stream's destination, a remote buffer read's destination,
// a compute set's Out and InOut fields), sorted and unique. viewRanges: each
// view's arena byte ranges.
std::vector<std::vector<std::uint32_t>> tagsWrittenBy(const ExecutableData &d, const std::vector<ByteSpan> &viewRanges,
                                                      const TaggedSpans &spans);

}  // namespace hwsim::detail
