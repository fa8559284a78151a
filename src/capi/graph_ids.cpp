// The id encoding of graph objects and the table helpers of graph.hpp.
#include <algorithm>
#include <atomic>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "capi/graph.hpp"

namespace mrt::capi {

namespace {

// | serial: 28 bits | kind: 4 bits | index + 1: 32 bits |
constexpr unsigned kIndexBits = 32;
constexpr unsigned kKindBits = 4;
constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kIndexBits) - 1;
constexpr std::uint64_t kKindMask = (std::uint64_t{1} << kKindBits) - 1;
constexpr std::uint32_t kSerialMask = (std::uint32_t{1} << (64 - kIndexBits - kKindBits)) - 1;

std::uint32_t serialOf(std::uint64_t id) { return static_cast<std::uint32_t>(id >> (kIndexBits + kKindBits)); }
unsigned kindOf(std::uint64_t id) { return static_cast<unsigned>((id >> kIndexBits) & kKindMask); }

std::size_t tableSize(const mrt_graph &g, IdKind kind) {
  switch (kind) {
    case IdKind::Tensor: return g.tensors.size();
    case IdKind::ComputeSet: return g.computeSets.size();
    case IdKind::Vertex: return g.vertices.size();
    case IdKind::Stream: return g.streams.size();
    case IdKind::RemoteBuffer: return g.remoteBuffers.size();
    case IdKind::Function: return g.functions.size();
    case IdKind::Program: return g.programs.size();
  }
  return 0;
}

std::uint32_t nextSerial() {
  static std::atomic<std::uint32_t> counter{0};
  // Serial 0 would make the id of the first object of a graph... still not 0
  // (index + 1 is stored), but keep 0 out so a zeroed id never matches.
  std::uint32_t s;
  do {
    s = (counter.fetch_add(1, std::memory_order_relaxed) + 1) & kSerialMask;
  } while (s == 0);
  return s;
}

bool isConstantVar(const mrt_graph &g, std::uint32_t var) {
  return var < g.variableIsConstant.size() && g.variableIsConstant[var];
}

}  // namespace

const char *toString(IdKind kind) noexcept {
  switch (kind) {
    case IdKind::Tensor: return "tensor";
    case IdKind::ComputeSet: return "compute set";
    case IdKind::Vertex: return "vertex";
    case IdKind::Stream: return "stream";
    case IdKind::RemoteBuffer: return "remote buffer";
    case IdKind::Function: return "function";
    case IdKind::Program: return "program";
  }
  return "unknown";
}

std::uint64_t makeId(const mrt_graph &graph, IdKind kind, std::size_t index) {
  if (index >= kIndexMask) {
    throw Error(ErrorCode::ResourceExhausted, "graph {} has too many {} objects ({})", graph.serial,
                toString(kind), index);
  }
  return (std::uint64_t{graph.serial} << (kIndexBits + kKindBits)) |
         (static_cast<std::uint64_t>(kind) << kIndexBits) | (index + 1);
}

std::size_t indexOf(const mrt_graph &graph, std::uint64_t id, IdKind kind, const char *argument) {
  if (id == 0) throw Error(ErrorCode::InvalidArgument, "{} is 0, which is never a valid {}", argument, toString(kind));
  if (serialOf(id) != graph.serial) {
    throw Error(ErrorCode::InvalidArgument, "{} 0x{:x} belongs to graph {}, not graph {}", argument, id,
                serialOf(id), graph.serial);
  }
  const unsigned k = kindOf(id);
  if (k != static_cast<unsigned>(kind)) {
    const bool known = k >= static_cast<unsigned>(IdKind::Tensor) && k <= static_cast<unsigned>(IdKind::Program);
    throw Error(ErrorCode::InvalidArgument, "{} 0x{:x} is {} {}, not a {}", argument, id, known ? "a" : "of kind",
                known ? std::string(toString(static_cast<IdKind>(k))) : std::to_string(k), toString(kind));
  }
  const std::uint64_t index = (id & kIndexMask);
  const std::size_t size = tableSize(graph, kind);
  if (index == 0 || index > size) {
    throw Error(ErrorCode::InvalidArgument, "{} 0x{:x} is not a {} of graph {} (it has {})", argument, id,
                toString(kind), graph.serial, size);
  }
  return static_cast<std::size_t>(index - 1);
}

const TensorEntry &tensorOf(const mrt_graph &graph, std::uint64_t id, const char *argument) {
  return graph.tensors[indexOf(graph, id, IdKind::Tensor, argument)];
}

ProgramEntry &programOf(mrt_graph &graph, std::uint64_t id, const char *argument) {
  return graph.programs[indexOf(graph, id, IdKind::Program, argument)];
}

std::string describeTensor(const mrt_graph &graph, std::uint64_t id) {
  const TensorEntry &t = tensorOf(graph, id, "tensor");
  return fmt::format("tensor 0x{:x} ('{}')", id, t.name);
}

std::uint64_t addTensor(mrt_graph &graph, hwsim::Tensor tensor, std::string name) {
  graph.variableIsConstant.resize(graph.graph.numVariables(), false);
  TensorEntry e;
  e.shape.assign(tensor.shape().begin(), tensor.shape().end());
  const auto &regions = tensor.regions();
  e.isConstant = !regions.empty() &&
                 std::all_of(regions.begin(), regions.end(), [&](const auto &r) { return isConstantVar(graph, r.var); });
  e.touchesConstant =
      std::any_of(regions.begin(), regions.end(), [&](const auto &r) { return isConstantVar(graph, r.var); });
  e.tensor = std::move(tensor);
  e.name = std::move(name);
  const std::uint64_t id = makeId(graph, IdKind::Tensor, graph.tensors.size());
  graph.tensors.push_back(std::move(e));
  return id;
}

std::uint64_t addConstantTensor(mrt_graph &graph, hwsim::Tensor tensor, std::string name) {
  graph.variableIsConstant.resize(graph.graph.numVariables(), false);
  for (const auto &r : tensor.regions()) graph.variableIsConstant[r.var] = true;
  return addTensor(graph, std::move(tensor), std::move(name));
}

std::uint64_t addProgram(mrt_graph &graph, ProgramEntry entry) {
  const std::uint64_t id = makeId(graph, IdKind::Program, graph.programs.size());
  graph.programs.push_back(std::move(entry));
  return id;
}

namespace {
bool reaches(const mrt_graph &graph, std::size_t from, std::size_t target) {
  if (from == target) return true;
  for (std::size_t c : graph.programs[from].children) {
    if (reaches(graph, c, target)) return true;
  }
  return false;
}
}  // namespace

void refuseCycle(const mrt_graph &graph, std::size_t parent, std::size_t child) {
  if (reaches(graph, child, parent)) {
    throw Error(ErrorCode::InvalidArgument, "program 0x{:x} would contain itself: it is program 0x{:x} or runs inside it",
                makeId(graph, IdKind::Program, parent), makeId(graph, IdKind::Program, child));
  }
}

void refuseConstantDestination(const mrt_graph &graph, std::uint64_t id, const char *what) {
  if (tensorOf(graph, id, what).touchesConstant) {
    throw Error(ErrorCode::InvalidArgument, "{} {} is a constant: programs cannot write constants", what,
                describeTensor(graph, id));
  }
}

hwsim::Shape shapeOf(const std::uint64_t *shape, std::size_t rank, const char *argument) {
  if (rank > 0) requireNotNull(shape, argument);
  hwsim::Shape s(shape, shape + rank);
  // Element counts must stay far from overflow in bytes (8 bytes per element at most).
  std::uint64_t count = 1;
  for (std::size_t i = 0; i < rank; ++i) {
    if (shape[i] != 0 && count > (std::uint64_t{1} << 48) / shape[i]) {
      throw Error(ErrorCode::InvalidArgument, "{} {} has too many elements (dimension {} is {})", argument,
                  fmt::format("[{}]", fmt::join(s, ", ")), i, shape[i]);
    }
    count *= shape[i];
  }
  return s;
}

void refuseReentry(const mrt_graph &graph) {
  if (graph.compilingThread.load(std::memory_order_relaxed) == std::this_thread::get_id()) {
    throw Error(ErrorCode::FailedPrecondition, "graph {} is compiling: its progress callback cannot use it",
                graph.serial);
  }
}

void requireNotCompiled(const mrt_graph &graph) {
  if (graph.compiled) {
    throw Error(ErrorCode::FailedPrecondition, "graph {} was compiled and cannot change any more", graph.serial);
  }
}

}  // namespace mrt::capi

mrt_graph::mrt_graph(const hwsim::Target &target, unsigned replicationFactor)
    : serial(mrt::capi::nextSerial()), graph(target, replicationFactor) {}
