// ExecutableData: the compiled form behind hwsim::Executable. Everything the
// engine needs is here, and all of it round-trips through the FlatBuffers
// schema (serialize.cpp). Invariants are checked by validateExecutable().
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "flat_pool.hpp"
#include "shape_pool.hpp"
#include "hwsim/executable.hpp"
#include "hwsim/target.hpp"
#include "program_node.hpp"
#include "tile_map.hpp"

namespace hwsim {
struct PipelinePlan;
}

namespace hwsim::detail {

struct EnginePlan;

inline constexpr std::uint32_t kNoView = std::numeric_limits<std::uint32_t>::max();
inline constexpr std::uint32_t kNoChild = std::numeric_limits<std::uint32_t>::max();

struct ExeRegion {
  std::uint32_t var = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

// A tensor view: element type, shape and the variable regions, in order.
// (Regions live in the executable's regionPool, shapes in its shapePool.)
struct ExeView {
  Type type = Type::F32;
  const Shape *shape = nullptr;  // never null in an executable
  std::span<const ExeRegion> regions;
  std::uint64_t numElements = 0;
};

struct ExeVariable {
  std::string name;
  Type type = Type::F32;
  Shape shape;
  std::uint64_t numElements = 0;
  bool isConstant = false;
  std::vector<std::uint8_t> constantData;
  std::vector<MappedInterval> mapping;
};

struct ExeVertex {
  std::uint16_t codelet = 0;
  std::uint32_t tile = 0;
  std::span<const std::uint32_t> operands;        // view per codelet field (kNoView if absent), in operandPool
  std::vector<std::vector<double>> attrs;         // value(s) per codelet attribute
  std::uint64_t cycles = 0;                       // modelled tile cycles
};

struct ExeComputeSet {
  std::string name;
  std::vector<ExeVertex> vertices;  // sorted by tile
};

struct ExeNode {
  NodeKind kind = NodeKind::Sequence;
  std::string name;
  std::vector<std::uint32_t> children;  // node indices, each < this node's index
  std::uint32_t index = 0;              // compute set / stream / remote buffer / SyncType
  std::uint64_t count = 0;              // Repeat count / fixed remote slot
  std::uint32_t view0 = kNoView;        // source / predicate / control / printed
  std::uint32_t view1 = kNoView;        // destination / remote slot index
  std::vector<std::int64_t> caseValues;
  // Static cost of one execution of this node itself (children excluded),
  // and how many tiles take part in each phase (for the interval report).
  std::uint64_t cycles = 0;
  std::uint32_t computeTiles = 0;
  std::uint32_t exchangeTiles = 0;
  std::uint32_t syncTiles = 0;
};

struct ExeHostCopy {
  std::string handle;
  std::uint32_t view = 0;
  bool isRead = false;
};

// Not copyable: views and vertices point into its pools.
struct ExecutableData {
  Target target;
  unsigned replicationFactor = 1;
  std::vector<ExeVariable> variables;
  std::vector<ExeView> views;
  std::vector<ExeComputeSet> computeSets;
  std::vector<StreamInfo> streams;
  std::vector<ExeHostCopy> hostCopies;
  std::vector<RemoteBufferInfo> remoteBuffers;
  std::vector<ExeNode> nodes;
  std::vector<std::uint32_t> programs;  // root node per program index
  OptionFlags options;
  std::vector<std::uint64_t> tileBytes;
  // Storage of every view's regions and shape and every vertex's operands.
  FlatPool<ExeRegion> regionPool;
  FlatPool<std::uint32_t> operandPool;
  ShapePool shapePool;  // every view's shape

  // Derived (not serialized): filled by finalize().
  std::vector<HostCopyInfo> hostWriteInfos;
  std::vector<HostCopyInfo> hostReadInfos;
  mutable std::once_flag hashOnce;
  mutable std::uint64_t hashValue = 0;
  // The engine plans made for it, one per PlanSettings (engine_plan.hpp):
  // shared by its engines, kept as long as it is.
  mutable std::mutex planMutex;
  mutable std::vector<std::shared_ptr<const EnginePlan>> plans;  // planMutex
  // What Executable::transfers and pipelinePlan find for each program
  // index, made at first use and kept (madeOnce): each runner of the
  // executable asks at its creation (issue 14, runner creation).
  mutable std::vector<std::shared_ptr<const ProgramTransfers>> transfersMade;  // planMutex
  mutable std::vector<std::shared_ptr<const PipelinePlan>> pipelinePlansMade;  // planMutex

  void finalize();
};

// made[program] (one of the vectors above), made by make() at its first
// use. make() runs without the lock held (it may ask for other programs'
// facts); of two threads making one, the first to finish is kept.
template <typename T, typename Make>
const T &madeOnce(const ExecutableData &d, std::vector<std::shared_ptr<const T>> &made, unsigned program,
                  const Make &make) {
  {
    std::lock_guard lock(d.planMutex);
    if (program < made.size() && made[program]) return *made[program];
  }
  auto value = std::make_shared<const T>(make());
  std::lock_guard lock(d.planMutex);
  if (made.size() != d.programs.size()) made.resize(d.programs.size());
  if (!made[program]) made[program] = std::move(value);
  return *made[program];
}

// Throws CorruptExecutable (offset 0) naming the first inconsistency.
void validateExecutable(const ExecutableData &exe);

}  // namespace hwsim::detail
