// The node behind every hwsim::program::Program handle.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hwsim/tensor.hpp"

namespace hwsim::detail {

// Numeric values are serialized in the Executable: append only.
enum class NodeKind : std::uint8_t {
  Sequence = 0,
  Execute = 1,
  Copy = 2,            // tensor -> tensor
  StreamToTensor = 3,  // host -> device
  TensorToStream = 4,  // device -> host
  RemoteToTensor = 5,
  TensorToRemote = 6,
  Repeat = 7,
  RepeatWhileTrue = 8,
  RepeatWhileFalse = 9,
  If = 10,
  Switch = 11,
  Sync = 12,
  Call = 13,
  WriteUndef = 14,
  PrintTensor = 15,
};
inline constexpr unsigned kNumNodeKinds = 16;
const char *toString(NodeKind kind) noexcept;

struct ProgramNode {
  NodeKind kind = NodeKind::Sequence;
  std::string name;
  std::uint32_t graphId = 0;  // 0 when the node references no graph object
  // Sequence: the steps. If: {then, else}. Switch: {default, case...}.
  // Repeat: {body}. RepeatWhile*: {cond, body}.
  std::vector<std::shared_ptr<ProgramNode>> children;
  unsigned index = 0;        // compute set, stream, remote buffer, function, or SyncType
  std::uint64_t count = 0;   // Repeat count or fixed remote-buffer slot
  Tensor t0;                 // copy source / predicate / control / printed tensor
  Tensor t1;                 // copy destination / remote slot index tensor
  std::vector<std::int64_t> caseValues;  // Switch
};

}  // namespace hwsim::detail
