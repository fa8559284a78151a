// The graph handle of the C API (include/mrt_c.h, "Building models"): an
// hwsim::Graph, the tables that turn the C API's 64-bit ids into hwsim
// objects, and a lock serializing every call on the graph.
//
// An id is (graph serial, kind, index + 1) packed into 64 bits (makeId), so
// an id of another graph, of the wrong kind, 0 or out of range is caught and
// named instead of being used. The encoding lives only here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <atomic>
#include <mutex>
#include <thread>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <hwsim/error.hpp>
#include <hwsim/graph.hpp>
#include <hwsim/program.hpp>

#include "capi/guard.hpp"
#include "device/hwsim_error.hpp"
#include "mrt_c.h"

namespace mrt::capi {

enum class IdKind : std::uint8_t {
  Tensor = 1,
  ComputeSet = 2,
  Vertex = 3,
  Stream = 4,
  RemoteBuffer = 5,
  Function = 6,
  Program = 7,
};
const char *toString(IdKind kind) noexcept;  // "tensor", "compute set", ...

struct TensorEntry {
  hwsim::Tensor tensor;
  std::vector<std::uint64_t> shape;  // lent out by mrt_graph_tensor_info
  std::string name;                  // for messages: "tensor 0x... ('w')"
  bool isConstant = false;           // every element is a constant's
  bool touchesConstant = false;      // some element is a constant's
};

struct VertexEntry {
  hwsim::VertexRef vertex;
  std::size_t codelet = 0;  // index in hwsim::codeletInfos()
};

// Which C constructor made a program: Sequence and Switch can grow after
// creation, so they keep their typed hwsim handle.
enum class ProgramKind : std::uint8_t {
  Sequence, Execute, Copy, Repeat, RepeatWhile, If, Switch, Sync, Call, WriteUndef, PrintTensor
};

struct ProgramEntry {
  hwsim::program::Program program;
  ProgramKind kind = ProgramKind::Sequence;
  std::optional<hwsim::program::Sequence> sequence;  // kind Sequence
  std::optional<hwsim::program::Switch> switchProgram;  // kind Switch
  // Programs (indices) this one runs, for refusing cycles; a Call lists its
  // function's body.
  std::vector<std::size_t> children;
};

struct FunctionEntry {
  hwsim::Function function;
  std::size_t body = 0;  // program index
};

struct StreamEntry {
  hwsim::DataStream stream;
  std::string handle;
  bool hostToDevice = true;
  hwsim::Type type = hwsim::Type::F32;
  std::uint64_t numElements = 0;
};

struct RemoteBufferEntry {
  hwsim::RemoteBuffer buffer;
  std::string handle;
  hwsim::Type type = hwsim::Type::F32;
  std::uint64_t numElements = 0;
  std::uint64_t repeats = 1;
};

}  // namespace mrt::capi

struct mrt_graph {
  mrt_graph(const hwsim::Target &target, unsigned replicationFactor);

  mutable std::mutex mutex;
  // The thread compiling the graph (holding the lock while it calls the
  // progress callback), so that a callback using the graph fails instead of
  // deadlocking.
  std::atomic<std::thread::id> compilingThread{};
  const std::uint32_t serial;  // process-unique, in every id of this graph
  hwsim::Graph graph;
  bool compiled = false;

  std::vector<bool> variableIsConstant;  // by hwsim variable index
  std::vector<mrt::capi::TensorEntry> tensors;
  std::vector<hwsim::ComputeSet> computeSets;
  std::vector<mrt::capi::VertexEntry> vertices;
  std::vector<mrt::capi::StreamEntry> streams;
  std::vector<mrt::capi::RemoteBufferEntry> remoteBuffers;
  std::vector<mrt::capi::FunctionEntry> functions;
  std::vector<mrt::capi::ProgramEntry> programs;
};

namespace mrt::capi {

std::uint64_t makeId(const mrt_graph &graph, IdKind kind, std::size_t index);

// The table index of `id`; throws InvalidArgument naming `argument` and the
// id for 0, another graph's id, an id of another kind or one out of range.
std::size_t indexOf(const mrt_graph &graph, std::uint64_t id, IdKind kind, const char *argument);

const TensorEntry &tensorOf(const mrt_graph &graph, std::uint64_t id, const char *argument);
ProgramEntry &programOf(mrt_graph &graph, std::uint64_t id, const char *argument);

// "tensor 0x500000001 ('w')", for messages.
std::string describeTensor(const mrt_graph &graph, std::uint64_t id);

// Registers a tensor made by hwsim (a variable, constant, view or an op's
// result) and returns its id. isConstant/touchesConstant come from the
// variables it views.
std::uint64_t addTensor(mrt_graph &graph, hwsim::Tensor tensor, std::string name);
// The same for a new constant (marks its variable constant first).
std::uint64_t addConstantTensor(mrt_graph &graph, hwsim::Tensor tensor, std::string name);

std::uint64_t addProgram(mrt_graph &graph, ProgramEntry entry);

// Refuses (InvalidArgument naming both) to make `child` run inside `parent`
// when `parent` is `child` or one of its descendants.
void refuseCycle(const mrt_graph &graph, std::size_t parent, std::size_t child);

// Throws InvalidArgument naming the tensor when it has constant elements:
// programs and vertex outputs cannot write constants.
void refuseConstantDestination(const mrt_graph &graph, std::uint64_t id, const char *what);

// hwsim::Shape from a C (shape, rank) argument; checks NULL and overflow.
hwsim::Shape shapeOf(const std::uint64_t *shape, std::size_t rank, const char *argument);

// name, or "" for NULL.
inline std::string nameOf(const char *name) { return name == nullptr ? std::string() : std::string(name); }

// Throws FailedPrecondition when called from the graph's own progress
// callback (the graph is locked while it compiles).
void refuseReentry(const mrt_graph &graph);

// Throws FailedPrecondition once the graph is compiled.
void requireNotCompiled(const mrt_graph &graph);

// The body of an export on a graph: checks the handle, takes the lock, maps
// hwsim errors, then runs body(graph). Mutating calls also refuse a compiled
// graph.
template <typename Graph, typename Body>
mrt_status onGraph(const char *function, Graph *graph, Body &&body) noexcept {
  return guard(function, [&] {
    requireNotNull(graph, "graph");
    refuseReentry(*graph);
    std::lock_guard lock(graph->mutex);
    callHwsim([&] { body(*graph); });
  });
}
template <typename Body>
mrt_status changeGraph(const char *function, mrt_graph *graph, Body &&body) noexcept {
  return onGraph(function, graph, [&](mrt_graph &g) {
    requireNotCompiled(g);
    body(g);
  });
}

}  // namespace mrt::capi
