// mrt_graph.hpp - the model-building half of the C++ wrapper (mrt.hpp
// includes it): targets, graphs, programs, ops, compiling, executables,
// engines and writing PopEF models, header-only over mrt_c.h. docs/graph.md
// is the tutorial; the C API's comments are the reference for each call.
//
//   mrt::Graph graph(mrt::Target::smallIpuModel());
//   auto main = graph.sequence();
//   auto x = graph.addVariable(mrt::DataType::F32, {16}, "x");
//   graph.mapLinearly(x);
//   ...
//   mrt::Executable exe = graph.compile({main});
//
// Graph objects (Tensor, Program, ...) are small id values owned by their
// graph, valid while it lives; using one with another graph throws.
#pragma once

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

#include "mrt.hpp"

namespace mrt {

// ---------------------------------------------------------------------------
// Targets

// A system and the rates of the cycle cost model (mrt_target).
struct Target {
  std::string name;
  uint32_t ipu_version = 2;
  uint32_t num_ipus = 1;
  uint32_t tiles_per_ipu = 0;
  uint32_t worker_contexts_per_tile = 0;
  uint64_t bytes_per_tile = 0;
  double clock_hz = 0;
  double f32_matmul_flops_per_cycle = 0;
  double f16_matmul_flops_per_cycle = 0;
  double f32_vector_width = 0;
  double f16_vector_width = 0;
  double int_vector_width = 0;
  double transcendental_cycles_per_element = 0;
  double vertex_overhead_cycles = 0;
  double exchange_bytes_per_cycle = 0;
  double host_link_bytes_per_second = 0;
  double ipu_link_bytes_per_second = 0;
  double internal_sync_cycles = 0;
  double external_sync_cycles = 0;
  double host_sync_cycles = 0;

  // "gc200", "bow", "c600" or "ipu-model-small".
  static Target named(const std::string &system, uint32_t numIpus = 1) {
    mrt_target c{};
    check(mrt_target_init(system.c_str(), numIpus, &c));
    return from(c);
  }
  static Target gc200(uint32_t numIpus = 1) { return named("gc200", numIpus); }
  static Target bow(uint32_t numIpus = 1) { return named("bow", numIpus); }
  static Target c600(uint32_t numIpus = 1) { return named("c600", numIpus); }
  static Target smallIpuModel(uint32_t numIpus = 1) { return named("ipu-model-small", numIpus); }

  static Target from(const mrt_target &c) {
    Target t;
    t.name = detail::str(c.name);
    t.ipu_version = c.ipu_version;
    t.num_ipus = c.num_ipus;
    t.tiles_per_ipu = c.tiles_per_ipu;
    t.worker_contexts_per_tile = c.worker_contexts_per_tile;
    t.bytes_per_tile = c.bytes_per_tile;
    t.clock_hz = c.clock_hz;
    t.f32_matmul_flops_per_cycle = c.f32_matmul_flops_per_cycle;
    t.f16_matmul_flops_per_cycle = c.f16_matmul_flops_per_cycle;
    t.f32_vector_width = c.f32_vector_width;
    t.f16_vector_width = c.f16_vector_width;
    t.int_vector_width = c.int_vector_width;
    t.transcendental_cycles_per_element = c.transcendental_cycles_per_element;
    t.vertex_overhead_cycles = c.vertex_overhead_cycles;
    t.exchange_bytes_per_cycle = c.exchange_bytes_per_cycle;
    t.host_link_bytes_per_second = c.host_link_bytes_per_second;
    t.ipu_link_bytes_per_second = c.ipu_link_bytes_per_second;
    t.internal_sync_cycles = c.internal_sync_cycles;
    t.external_sync_cycles = c.external_sync_cycles;
    t.host_sync_cycles = c.host_sync_cycles;
    return t;
  }
  // The C struct; its name points into this Target.
  mrt_target toC() const {
    mrt_target c{};
    c.struct_size = sizeof c;
    c.name = name.c_str();
    c.ipu_version = ipu_version;
    c.num_ipus = num_ipus;
    c.tiles_per_ipu = tiles_per_ipu;
    c.worker_contexts_per_tile = worker_contexts_per_tile;
    c.bytes_per_tile = bytes_per_tile;
    c.clock_hz = clock_hz;
    c.f32_matmul_flops_per_cycle = f32_matmul_flops_per_cycle;
    c.f16_matmul_flops_per_cycle = f16_matmul_flops_per_cycle;
    c.f32_vector_width = f32_vector_width;
    c.f16_vector_width = f16_vector_width;
    c.int_vector_width = int_vector_width;
    c.transcendental_cycles_per_element = transcendental_cycles_per_element;
    c.vertex_overhead_cycles = vertex_overhead_cycles;
    c.exchange_bytes_per_cycle = exchange_bytes_per_cycle;
    c.host_link_bytes_per_second = host_link_bytes_per_second;
    c.ipu_link_bytes_per_second = ipu_link_bytes_per_second;
    c.internal_sync_cycles = internal_sync_cycles;
    c.external_sync_cycles = external_sync_cycles;
    c.host_sync_cycles = host_sync_cycles;
    return c;
  }
};

// ---------------------------------------------------------------------------
// Graph object ids

namespace detail {
// A typed id: a Tensor cannot be passed where a Program is expected.
template <class Tag>
struct Id {
  uint64_t id = 0;
  explicit operator bool() const noexcept { return id != 0; }
  bool operator==(const Id &other) const noexcept { return id == other.id; }
  bool operator!=(const Id &other) const noexcept { return id != other.id; }
};
struct TensorTag {};
struct ComputeSetTag {};
struct VertexTag {};
struct StreamTag {};
struct RemoteBufferTag {};
struct FunctionTag {};
struct ProgramTag {};

inline std::vector<uint64_t> ids(const std::vector<Id<ProgramTag>> &programs) {
  std::vector<uint64_t> out;
  out.reserve(programs.size());
  for (const auto &p : programs) out.push_back(p.id);
  return out;
}
}  // namespace detail

using Tensor = detail::Id<detail::TensorTag>;
using ComputeSet = detail::Id<detail::ComputeSetTag>;
using Vertex = detail::Id<detail::VertexTag>;
using Stream = detail::Id<detail::StreamTag>;
using RemoteBuffer = detail::Id<detail::RemoteBufferTag>;
using Function = detail::Id<detail::FunctionTag>;
using Program = detail::Id<detail::ProgramTag>;

using Shape = std::vector<uint64_t>;

struct TensorInfo {
  DataType data_type = DataType::F32;
  Shape shape;
  uint64_t num_elements = 0;
  uint64_t num_bytes = 0;
  bool is_contiguous = false;
  bool is_constant = false;
};

struct TileInterval {
  uint64_t begin = 0;
  uint64_t end = 0;
  uint32_t tile = 0;
};

// Tiles an operation may use: [first, first + count); count 0 = to the last tile.
struct TileRange {
  uint32_t first = 0;
  uint32_t count = 0;
};

enum class SyncType { Internal = MRT_SYNC_INTERNAL, External = MRT_SYNC_EXTERNAL, Global = MRT_SYNC_GLOBAL };
enum class MatMulOperand {
  Lhs = MRT_MATMUL_LHS,
  Rhs = MRT_MATMUL_RHS,
  LhsOfPreloaded = MRT_MATMUL_LHS_OF_PRELOADED,  // for matMulPreloadedRhs
  RhsPreloaded = MRT_MATMUL_RHS_PRELOADED
};
enum class FieldDirection { In = MRT_FIELD_IN, Out = MRT_FIELD_OUT, InOut = MRT_FIELD_INOUT };

// One built-in codelet (mrt_codelet_*).
struct CodeletField {
  std::string name;
  FieldDirection direction = FieldDirection::In;
};
struct CodeletAttribute {
  std::string name;
  std::vector<double> defaults;
};
struct Codelet {
  std::string name;
  std::string description;
  std::vector<CodeletField> fields;
  std::vector<CodeletAttribute> attributes;
};

// Every built-in codelet, in library order.
inline std::vector<Codelet> codelets() {
  std::vector<Codelet> result;
  for (std::size_t index = 0, n = mrt_codelet_count(); index < n; ++index) {
    mrt_codelet_info c{};
    c.struct_size = sizeof c;
    check(mrt_codelet_get_info(index, &c));
    Codelet codelet{detail::str(c.name), detail::str(c.description), {}, {}};
    for (std::size_t f = 0; f < c.num_fields; ++f) {
      const char *name = nullptr;
      int32_t direction = 0;
      check(mrt_codelet_field(index, f, &name, &direction));
      codelet.fields.push_back({detail::str(name), static_cast<FieldDirection>(direction)});
    }
    for (std::size_t a = 0; a < c.num_attributes; ++a) {
      const char *name = nullptr;
      const double *defaults = nullptr;
      std::size_t count = 0;
      check(mrt_codelet_attribute(index, a, &name, &defaults, &count));
      codelet.attributes.push_back(
          {detail::str(name), defaults ? std::vector<double>(defaults, defaults + count) : std::vector<double>()});
    }
    result.push_back(std::move(codelet));
  }
  return result;
}

// ---------------------------------------------------------------------------
// Executables

struct ExecutableInfo {
  uint64_t hash = 0;
  uint32_t replication_factor = 0;
  uint32_t num_ipus = 0;
  uint32_t num_programs = 0;
  uint32_t num_tiles = 0;
  std::size_t num_streams = 0;
  std::size_t num_remote_buffers = 0;
  std::size_t num_host_reads = 0;
  std::size_t num_host_writes = 0;
  std::size_t num_steps = 0;
  uint64_t total_memory_bytes = 0;
  uint64_t max_tile_memory_bytes = 0;
  uint32_t max_memory_tile = 0;
  uint64_t bytes_per_tile = 0;
};

struct StepInfo {
  std::string kind;
  std::string name;
  uint64_t modelled_cycles = 0;
};

// A program as a pipeline over a replica's IPUs (mrt_executable_pipeline()).
struct PipelineInfo {
  uint32_t num_stages = 1;       // 1: not a pipeline
  uint64_t latency_cycles = 0;   // one run alone
  uint64_t interval_cycles = 0;  // between the ends of streamed runs
};

enum class HandleKind {
  HostToDevice = MRT_HANDLE_HOST_TO_DEVICE,
  DeviceToHost = MRT_HANDLE_DEVICE_TO_HOST,
  Remote = MRT_HANDLE_REMOTE_BUFFER,  // a remote buffer
  HostWrite = MRT_HANDLE_HOST_WRITE,
  HostRead = MRT_HANDLE_HOST_READ
};
struct HandleInfo {
  std::string handle;
  HandleKind kind = HandleKind::HostToDevice;
  DataType data_type = DataType::F32;
  uint64_t num_elements = 0;
  uint64_t repeats = 1;
};

// A compiled graph. Immutable and shared: copies refer to the same executable.
class Executable {
 public:
  Executable() = default;
  static Executable adopt(mrt_executable *executable) {
    Executable e;
    e.handle_.reset(executable, mrt_executable_destroy);
    return e;
  }
  // Verifies and copies serialized bytes.
  static Executable deserialize(Span<const std::byte> bytes) {
    mrt_executable *out = nullptr;
    check(mrt_executable_deserialize(bytes.data(), bytes.size(), &out));
    return adopt(out);
  }
  static Executable fromModel(const Model &model) {
    mrt_executable *out = nullptr;
    check(mrt_model_get_executable(model.get(), &out));
    return adopt(out);
  }

  // Borrowed from the executable.
  Span<const std::byte> serialize() const {
    const void *data = nullptr;
    uint64_t size = 0;
    check(mrt_executable_serialize(get(), &data, &size));
    return {static_cast<const std::byte *>(data), static_cast<std::size_t>(size)};
  }
  ExecutableInfo info() const {
    mrt_executable_info c{};
    c.struct_size = sizeof c;
    check(mrt_executable_get_info(get(), &c));
    return {c.hash,           c.replication_factor, c.num_ipus,          c.num_programs,
            c.num_tiles,      c.num_streams,        c.num_remote_buffers, c.num_host_reads,
            c.num_host_writes, c.num_steps,         c.total_memory_bytes, c.max_tile_memory_bytes,
            c.max_memory_tile, c.bytes_per_tile};
  }
  Target target() const {
    mrt_target c{};
    c.struct_size = sizeof c;
    check(mrt_executable_get_target(get(), &c));
    return Target::from(c);
  }
  Span<const uint64_t> memoryPerTile() const {
    const uint64_t *bytes = nullptr;
    std::size_t count = 0;
    check(mrt_executable_memory_per_tile(get(), &bytes, &count));
    return {bytes, count};
  }
  std::vector<StepInfo> steps() const {
    std::vector<StepInfo> result;
    for (std::size_t index = 0, n = info().num_steps; index < n; ++index) {
      mrt_step_info c{};
      c.struct_size = sizeof c;
      check(mrt_executable_step(get(), index, &c));
      result.push_back({detail::str(c.kind), detail::str(c.name), c.modelled_cycles});
    }
    return result;
  }
  PipelineInfo pipeline(uint32_t program) const {
    mrt_pipeline_info c{};
    c.struct_size = sizeof c;
    check(mrt_executable_pipeline(get(), program, &c));
    return {c.num_stages, c.latency_cycles, c.interval_cycles};
  }
  std::string programName(uint32_t program) const {
    const char *name = nullptr;
    check(mrt_executable_program_name(get(), program, &name));
    return detail::str(name);
  }
  // Every handle of one kind.
  std::vector<HandleInfo> handles(HandleKind kind) const {
    const ExecutableInfo i = info();
    std::size_t n = 0;
    switch (kind) {
      case HandleKind::HostToDevice:
      case HandleKind::DeviceToHost: n = i.num_streams; break;
      case HandleKind::Remote: n = i.num_remote_buffers; break;
      case HandleKind::HostWrite: n = i.num_host_writes; break;
      case HandleKind::HostRead: n = i.num_host_reads; break;
    }
    std::vector<HandleInfo> result;
    for (std::size_t index = 0; index < n; ++index) {
      mrt_handle_info c{};
      c.struct_size = sizeof c;
      // Streams of both directions share one index space; keep those of `kind`.
      check(mrt_executable_handle(get(), static_cast<int32_t>(kind), index, &c));
      if (c.kind != static_cast<int32_t>(kind)) continue;
      result.push_back({detail::str(c.handle), static_cast<HandleKind>(c.kind), static_cast<DataType>(c.data_type),
                        c.num_elements, c.repeats});
    }
    return result;
  }

  mrt_executable *get() const {
    if (!handle_) throw Error(MRT_FAILED_PRECONDITION, "mrt::Executable: empty (holds no executable)");
    return handle_.get();
  }
  explicit operator bool() const noexcept { return handle_ != nullptr; }

 private:
  std::shared_ptr<mrt_executable> handle_;
};

// ---------------------------------------------------------------------------
// Graphs

// Compilation progress: (step, total steps), on the compiling thread.
using ProgressCallback = std::function<void(int, int)>;
using Options = std::vector<std::pair<std::string, std::string>>;

// A graph of one replica: data, mapping, compute, host communication and
// programs. Calls are serialized by the graph (any thread). Move-only.
class Graph : public detail::OwnedHandle<mrt_graph> {
 public:
  Graph() = default;
  explicit Graph(const Target &target, uint32_t replicationFactor = 1) {
    const mrt_target c = target.toC();
    mrt_graph *out = nullptr;
    check(mrt_graph_create(&c, replicationFactor, &out));
    handle_.reset(out);
  }

  Target target() const {
    mrt_target c{};
    c.struct_size = sizeof c;
    check(mrt_graph_get_target(get(), &c));
    return Target::from(c);
  }
  uint32_t replicationFactor() const {
    uint32_t r = 0;
    check(mrt_graph_replication_factor(get(), &r));
    return r;
  }

  // ---- tensors ----
  Tensor addVariable(DataType type, const Shape &shape, const std::string &name = {}) {
    return make<Tensor>(mrt_graph_add_variable, static_cast<int32_t>(type), shape.data(), shape.size(),
                        name.c_str());
  }
  // Raw bytes in the type's representation (F16 as half bits).
  Tensor addConstant(DataType type, const Shape &shape, Span<const std::byte> bytes, const std::string &name = {}) {
    return make<Tensor>(mrt_graph_add_constant, static_cast<int32_t>(type), shape.data(), shape.size(),
                        static_cast<const void *>(bytes.data()), static_cast<uint64_t>(bytes.size()), name.c_str());
  }
  // Elements of a C++ type whose size matches `type` (float for F32, int32_t for S32...).
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  Tensor addConstant(DataType type, const Shape &shape, const std::vector<T> &values, const std::string &name = {}) {
    return addConstant(type, shape, Span<const std::byte>(reinterpret_cast<const std::byte *>(values.data()),
                                                          values.size() * sizeof(T)),
                       name);
  }
  Tensor addConstantFilled(DataType type, const Shape &shape, double value, const std::string &name = {}) {
    return make<Tensor>(mrt_graph_add_constant_filled, static_cast<int32_t>(type), shape.data(), shape.size(),
                        value, name.c_str());
  }
  TensorInfo info(Tensor t) const {
    mrt_tensor_info c{};
    c.struct_size = sizeof c;
    check(mrt_graph_tensor_info(get(), t.id, &c));
    TensorInfo i;
    i.data_type = static_cast<DataType>(c.data_type);
    if (c.shape) i.shape.assign(c.shape, c.shape + c.rank);
    i.num_elements = c.num_elements;
    i.num_bytes = c.num_bytes;
    i.is_contiguous = c.is_contiguous;
    i.is_constant = c.is_constant;
    return i;
  }
  Shape shape(Tensor t) const { return info(t).shape; }

  // ---- views ----
  Tensor slice(Tensor t, uint64_t begin, uint64_t end, uint32_t dim = 0) {
    return make<Tensor>(mrt_graph_slice, t.id, begin, end, dim);
  }
  Tensor index(Tensor t, uint64_t i) { return make<Tensor>(mrt_graph_index, t.id, i); }
  Tensor reshape(Tensor t, const Shape &shape) {
    return make<Tensor>(mrt_graph_reshape, t.id, shape.data(), shape.size());
  }
  Tensor flatten(Tensor t) { return make<Tensor>(mrt_graph_flatten, t.id); }
  Tensor transpose(Tensor t) { return make<Tensor>(mrt_graph_transpose, t.id); }
  Tensor concat(const std::vector<Tensor> &parts, uint32_t dim = 0) {
    std::vector<mrt_tensor> ids;
    for (Tensor p : parts) ids.push_back(p.id);
    return make<Tensor>(mrt_graph_concat, ids.data(), ids.size(), dim);
  }

  // ---- tile mapping ----
  void setTileMapping(Tensor t, uint32_t tile) { check(mrt_graph_set_tile_mapping(get(), t.id, tile)); }
  void mapLinearly(Tensor t, uint64_t grainSize = 1, TileRange tiles = {}) {
    check(mrt_graph_map_linearly(get(), t.id, grainSize, tiles.first, tiles.count));
  }
  std::vector<TileInterval> tileMapping(Tensor t) const {
    std::size_t count = 0;
    check(mrt_graph_tile_mapping(get(), t.id, nullptr, 0, &count));
    std::vector<mrt_tile_interval> c(count);
    check(mrt_graph_tile_mapping(get(), t.id, c.data(), c.size(), &count));
    std::vector<TileInterval> result;
    for (std::size_t i = 0; i < count && i < c.size(); ++i) result.push_back({c[i].begin, c[i].end, c[i].tile});
    return result;
  }

  // ---- compute ----
  ComputeSet addComputeSet(const std::string &name = {}) {
    return make<ComputeSet>(mrt_graph_add_compute_set, name.c_str());
  }
  // A vertex of a built-in codelet on `tile`, with its fields connected.
  Vertex addVertex(ComputeSet cs, const std::string &codelet, uint32_t tile,
                   const std::vector<std::pair<std::string, Tensor>> &connections = {}) {
    const Vertex v = make<Vertex>(mrt_graph_add_vertex, cs.id, codelet.c_str(), tile);
    for (const auto &[field, tensor] : connections) connect(v, field, tensor);
    return v;
  }
  void connect(Vertex v, const std::string &field, Tensor t) {
    check(mrt_graph_connect(get(), v.id, field.c_str(), t.id));
  }
  void setAttribute(Vertex v, const std::string &attribute, const std::vector<double> &values) {
    check(mrt_graph_set_vertex_attribute(get(), v.id, attribute.c_str(), values.data(), values.size()));
  }
  void setAttribute(Vertex v, const std::string &attribute, double value) { setAttribute(v, attribute, std::vector<double>{value}); }

  // ---- host communication ----
  Stream addHostToDeviceFIFO(const std::string &handle, DataType type, uint64_t numElements) {
    return make<Stream>(mrt_graph_add_host_to_device_fifo, handle.c_str(), static_cast<int32_t>(type), numElements);
  }
  Stream addDeviceToHostFIFO(const std::string &handle, DataType type, uint64_t numElements) {
    return make<Stream>(mrt_graph_add_device_to_host_fifo, handle.c_str(), static_cast<int32_t>(type), numElements);
  }
  void createHostWrite(const std::string &handle, Tensor t) {
    check(mrt_graph_create_host_write(get(), handle.c_str(), t.id));
  }
  void createHostRead(const std::string &handle, Tensor t) {
    check(mrt_graph_create_host_read(get(), handle.c_str(), t.id));
  }
  RemoteBuffer addRemoteBuffer(const std::string &handle, DataType type, uint64_t numElements, uint64_t repeats = 1) {
    return make<RemoteBuffer>(mrt_graph_add_remote_buffer, handle.c_str(), static_cast<int32_t>(type), numElements,
                              repeats);
  }
  Function addFunction(Program body) { return make<Function>(mrt_graph_add_function, body.id); }

  // ---- programs ----
  Program sequence(const std::vector<Program> &programs = {}, const std::string &name = {}) {
    const std::vector<uint64_t> ids = detail::ids(programs);
    return make<Program>(mrt_program_sequence, ids.data(), ids.size(), name.c_str());
  }
  void add(Program sequence, Program program) { check(mrt_program_sequence_add(get(), sequence.id, program.id)); }
  Program execute(ComputeSet cs, const std::string &name = {}) {
    return make<Program>(mrt_program_execute, cs.id, name.c_str());
  }
  Program copy(Tensor source, Tensor destination, const std::string &name = {}) {
    return make<Program>(mrt_program_copy, source.id, destination.id, name.c_str());
  }
  Program copy(Stream stream, Tensor destination, const std::string &name = {}) {
    return make<Program>(mrt_program_copy_from_stream, stream.id, destination.id, name.c_str());
  }
  Program copy(Tensor source, Stream stream, const std::string &name = {}) {
    return make<Program>(mrt_program_copy_to_stream, source.id, stream.id, name.c_str());
  }
  // Slot `slot`, or the slot read at run time from slotTensor when it is set.
  Program copy(RemoteBuffer buffer, Tensor destination, uint64_t slot = 0, Tensor slotTensor = {},
               const std::string &name = {}) {
    return make<Program>(mrt_program_copy_from_remote_buffer, buffer.id, destination.id, slot, slotTensor.id,
                         name.c_str());
  }
  Program copy(Tensor source, RemoteBuffer buffer, uint64_t slot = 0, Tensor slotTensor = {},
               const std::string &name = {}) {
    return make<Program>(mrt_program_copy_to_remote_buffer, source.id, buffer.id, slot, slotTensor.id,
                         name.c_str());
  }
  Program repeat(uint64_t count, Program body, const std::string &name = {}) {
    return make<Program>(mrt_program_repeat, count, body.id, name.c_str());
  }
  Program repeatWhileTrue(Program condition, Tensor predicate, Program body, const std::string &name = {}) {
    return make<Program>(mrt_program_repeat_while, condition.id, predicate.id, body.id, true, name.c_str());
  }
  Program repeatWhileFalse(Program condition, Tensor predicate, Program body, const std::string &name = {}) {
    return make<Program>(mrt_program_repeat_while, condition.id, predicate.id, body.id, false, name.c_str());
  }
  Program ifThen(Tensor predicate, Program thenBody, Program elseBody = {}, const std::string &name = {}) {
    return make<Program>(mrt_program_if, predicate.id, thenBody.id, elseBody.id, name.c_str());
  }
  Program switchOn(Tensor control, Program defaultBody = {}, const std::string &name = {}) {
    return make<Program>(mrt_program_switch, control.id, defaultBody.id, name.c_str());
  }
  void addCase(Program switchProgram, int32_t value, Program body) {
    check(mrt_program_switch_add_case(get(), switchProgram.id, value, body.id));
  }
  Program sync(SyncType type, const std::string &name = {}) {
    return make<Program>(mrt_program_sync, static_cast<int32_t>(type), name.c_str());
  }
  Program call(Function f, const std::string &name = {}) { return make<Program>(mrt_program_call, f.id, name.c_str()); }
  Program writeUndef(Tensor t, const std::string &name = {}) {
    return make<Program>(mrt_program_write_undef, t.id, name.c_str());
  }
  Program printTensor(const std::string &title, Tensor t) {
    return make<Program>(mrt_program_print_tensor, title.c_str(), t.id);
  }

  // ---- operations (appended to the Sequence `seq`) ----
  Tensor createTensor(DataType type, const Shape &shape, const std::string &name = {}, TileRange tiles = {}) {
    return make<Tensor>(mrt_ops_create_tensor, static_cast<int32_t>(type), shape.data(), shape.size(), name.c_str(),
                        tiles.first, tiles.count);
  }
  Tensor unary(Program seq, const std::string &codelet, Tensor in, const std::string &name = {}) {
    return make<Tensor>(mrt_ops_unary, seq.id, codelet.c_str(), in.id, int32_t{-1}, name.c_str());
  }
  Tensor cast(Program seq, Tensor in, DataType to, const std::string &name = {}) {
    return make<Tensor>(mrt_ops_unary, seq.id, "Cast", in.id, static_cast<int32_t>(to), name.c_str());
  }
  Tensor binary(Program seq, const std::string &codelet, Tensor a, Tensor b, const std::string &name = {}) {
    return make<Tensor>(mrt_ops_binary, seq.id, codelet.c_str(), a.id, b.id, name.c_str());
  }
  void binaryInPlace(Program seq, const std::string &codelet, Tensor a, Tensor b) {
    check(mrt_ops_binary_in_place(get(), seq.id, codelet.c_str(), a.id, b.id));
  }
  void fill(Program seq, Tensor t, double value) { check(mrt_ops_fill(get(), seq.id, t.id, value)); }
  // outType: F32 by default (F16 also for F16 inputs).
  Tensor matMul(Program seq, Tensor a, Tensor b, const std::string &name = {}, TileRange tiles = {},
                std::optional<DataType> outType = std::nullopt) {
    return make<Tensor>(mrt_ops_matmul, seq.id, a.id, b.id, outType ? static_cast<int32_t>(*outType) : int32_t{-1},
                        name.c_str(), tiles.first, tiles.count);
  }
  // b holds weights written only by `load`, which also gets b's copies to the
  // tiles that multiply it (mrt_ops_matmul_preloaded_rhs).
  Tensor matMulPreloadedRhs(Program seq, Program load, Tensor a, Tensor b, const std::string &name = {},
                            TileRange tiles = {}, std::optional<DataType> outType = std::nullopt) {
    return make<Tensor>(mrt_ops_matmul_preloaded_rhs, seq.id, load.id, a.id, b.id,
                        outType ? static_cast<int32_t>(*outType) : int32_t{-1}, name.c_str(), tiles.first,
                        tiles.count);
  }
  Tensor createMatMulInput(MatMulOperand operand, DataType type, const Shape &aShape, const Shape &bShape,
                           const std::string &name = {}, TileRange tiles = {}) {
    if (aShape.size() != 2 || bShape.size() != 2) {
      throw Error(MRT_INVALID_ARGUMENT, "mrt::Graph::createMatMulInput: aShape and bShape must have 2 dimensions");
    }
    return make<Tensor>(mrt_ops_create_matmul_input, static_cast<int32_t>(operand), static_cast<int32_t>(type),
                        aShape.data(), bShape.data(), name.c_str(), tiles.first, tiles.count);
  }
  Tensor reduce(Program seq, const std::string &codelet, Tensor in, const std::vector<uint64_t> &axes,
                const std::string &name = {}, TileRange tiles = {}) {
    return make<Tensor>(mrt_ops_reduce, seq.id, codelet.c_str(), in.id, axes.data(), axes.size(), name.c_str(),
                        tiles.first, tiles.count);
  }
  Tensor softmax(Program seq, Tensor in, const std::string &name = {}, TileRange tiles = {}) {
    return make<Tensor>(mrt_ops_softmax, seq.id, in.id, name.c_str(), tiles.first, tiles.count);
  }
  Tensor argMax(Program seq, Tensor in, const std::string &name = {}, TileRange tiles = {}) {
    return make<Tensor>(mrt_ops_argmax, seq.id, in.id, name.c_str(), tiles.first, tiles.count);
  }

  // ---- compiling ----
  // programs[i] is program i of the executable. The graph is frozen afterwards.
  Executable compile(const std::vector<Program> &programs, const Options &options = {},
                     ProgressCallback progress = {}) {
    const std::vector<uint64_t> ids = detail::ids(programs);
    const detail::OptionArray c(options);
    mrt_executable *out = nullptr;
    detail::CallbackScope scope;
    if (progress) {
      auto *box = new ProgressCallback(std::move(progress));
      scope.check(mrt_graph_compile(get(), ids.data(), ids.size(), c.get(), &progressTrampoline, box,
                                    &detail::deleteBox<ProgressCallback>, &out));
    } else {
      scope.check(mrt_graph_compile(get(), ids.data(), ids.size(), c.get(), nullptr, nullptr, nullptr, &out));
    }
    return Executable::adopt(out);
  }


 private:
  // Calls fn(graph, args..., &out) and wraps out as an Id.
  template <class IdType, class Fn, class... Args>
  IdType make(Fn fn, Args... args) const {
    uint64_t out = 0;
    check(fn(get(), args..., &out));
    return IdType{out};
  }
  // Runs on the compiling thread: exceptions are parked and rethrown by compile().
  static void progressTrampoline(int32_t step, int32_t total, void *box) {
    try {
      (*static_cast<ProgressCallback *>(box))(step, total);
    } catch (...) {
      detail::park(std::current_exception());
    }
  }

};

// ---------------------------------------------------------------------------
// Engines

enum class ProfileFormat {
  Summary = MRT_PROFILE_SUMMARY,
  Intervals = MRT_PROFILE_INTERVALS,
  Trace = MRT_PROFILE_TRACE
};

// Stream callback: (data, size in bytes, replica), on the thread running the replica.
using StreamCallback = std::function<void(void *, uint64_t, uint32_t)>;
// One line of PrintTensor output, on the running thread.
using PrintCallback = std::function<void(const std::string &)>;

// An executable on a device (Poplar's Engine). One thread drives it; stop()
// may come from any thread. A stream or print callback that throws stops the
// run, and run() rethrows its exception (load() again before running).
// Move-only.
class Engine : public detail::OwnedHandle<mrt_engine> {
 public:
  Engine() = default;
  explicit Engine(const Executable &executable, const Options &options = {})
      : failure_(std::make_shared<Failure>()) {
    const detail::OptionArray c(options);
    mrt_engine *out = nullptr;
    check(mrt_engine_create(executable.get(), c.get(), &out));
    handle_.reset(out);
    failure_->engine = out;
  }

  void load(const Device &device) { check(mrt_engine_load(get(), device.get())); }
  void run(uint32_t program = 0) { finish(mrt_engine_run(get(), program)); }
  void runReplica(uint32_t program, uint32_t replica) { finish(mrt_engine_run_replica(get(), program, replica)); }
  void stop() { check(mrt_engine_stop(get())); }

  void connectStream(const std::string &handle, StreamCallback callback, uint32_t replica = MRT_ALL_REPLICAS) {
    auto *box = new StreamBox{std::move(callback), failure_};
    check(mrt_engine_connect_stream(get(), handle.c_str(), replica, &StreamBox::call, box,
                                    &detail::deleteBox<StreamBox>));
  }
  // A borrowed circular buffer of whole transfers.
  void connectStreamToBuffer(const std::string &handle, Span<std::byte> buffer,
                             uint32_t replica = MRT_ALL_REPLICAS) {
    check(mrt_engine_connect_stream_to_buffer(get(), handle.c_str(), replica, buffer.data(), buffer.size()));
  }
  void writeTensor(const std::string &handle, Span<const std::byte> bytes, uint32_t replica = MRT_ALL_REPLICAS) {
    check(mrt_engine_write_tensor(get(), handle.c_str(), bytes.data(), bytes.size(), replica));
  }
  void readTensor(const std::string &handle, Span<std::byte> bytes, uint32_t replica = 0) {
    check(mrt_engine_read_tensor(get(), handle.c_str(), bytes.data(), bytes.size(), replica));
  }
  void copyToRemoteBuffer(const std::string &handle, Span<const std::byte> bytes, uint64_t slot,
                          uint32_t replica = 0) {
    check(mrt_engine_copy_to_remote_buffer(get(), handle.c_str(), bytes.data(), bytes.size(), slot, replica));
  }
  void copyFromRemoteBuffer(const std::string &handle, Span<std::byte> bytes, uint64_t slot, uint32_t replica = 0) {
    check(mrt_engine_copy_from_remote_buffer(get(), handle.c_str(), bytes.data(), bytes.size(), slot, replica));
  }
  // Typed helpers: elements of T.
  template <class T>
  void writeTensor(const std::string &handle, const std::vector<T> &values, uint32_t replica = MRT_ALL_REPLICAS) {
    writeTensor(handle, Span<const std::byte>(reinterpret_cast<const std::byte *>(values.data()),
                                              values.size() * sizeof(T)),
                replica);
  }
  template <class T>
  std::vector<T> readTensor(const std::string &handle, std::size_t numElements, uint32_t replica = 0) {
    std::vector<T> values(numElements);
    readTensor(handle, Span<std::byte>(reinterpret_cast<std::byte *>(values.data()), values.size() * sizeof(T)),
               replica);
    return values;
  }

  // An empty callback restores stdout.
  void setPrintCallback(PrintCallback callback) {
    if (!callback) {
      check(mrt_engine_set_print_callback(get(), nullptr, nullptr, nullptr));
      return;
    }
    auto *box = new PrintBox{std::move(callback), failure_};
    check(mrt_engine_set_print_callback(get(), &PrintBox::call, box, &detail::deleteBox<PrintBox>));
  }

  uint64_t deviceCycles(uint32_t replica = 0) const {
    uint64_t cycles = 0;
    check(mrt_engine_device_cycles(get(), replica, &cycles));
    return cycles;
  }

  void insertSimulatedError(SimulatedError error, uint32_t step, uint32_t tile) {
    check(mrt_engine_insert_simulated_error(get(), static_cast<int32_t>(error), step, tile));
  }
  void eraseSimulatedError(uint32_t step, uint32_t tile) { check(mrt_engine_erase_simulated_error(get(), step, tile)); }
  void clearSimulatedErrors() { check(mrt_engine_clear_simulated_errors(get())); }

  void setProfiling(bool enabled) { check(mrt_engine_set_profiling(get(), enabled)); }
  void writeProfile(ProfileFormat format, const std::string &path) const {
    check(mrt_engine_write_profile(get(), static_cast<int32_t>(format), path.c_str()));
  }
  std::string profile(ProfileFormat format) const {
    std::size_t length = 0;
    check(mrt_engine_profile_text(get(), static_cast<int32_t>(format), nullptr, 0, &length));
    std::string text(length + 1, '\0');
    check(mrt_engine_profile_text(get(), static_cast<int32_t>(format), text.data(), text.size(), &length));
    text.resize(std::min(length, text.size() - 1));
    return text;
  }


 private:
  // The first exception a callback threw during a run, shared with the
  // callbacks (which may run on replica threads and outlive this object).
  struct Failure {
    std::mutex mutex;
    std::exception_ptr first;
    mrt_engine *engine = nullptr;
    void record(std::exception_ptr e) noexcept {
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (!first) first = std::move(e);
      }
      mrt_engine_stop(engine);
    }
  };
  struct StreamBox {
    StreamCallback callback;
    std::shared_ptr<Failure> failure;
    static void call(void *data, uint64_t size, uint32_t replica, void *box) {
      auto *self = static_cast<StreamBox *>(box);
      try {
        self->callback(data, size, replica);
      } catch (...) {
        self->failure->record(std::current_exception());
      }
    }
  };
  struct PrintBox {
    PrintCallback callback;
    std::shared_ptr<Failure> failure;
    static void call(const char *line, void *box) {
      auto *self = static_cast<PrintBox *>(box);
      try {
        self->callback(detail::str(line));
      } catch (...) {
        self->failure->record(std::current_exception());
      }
    }
  };
  // Rethrows a callback's exception in place of the status it caused.
  void finish(mrt_status status) {
    std::exception_ptr thrown;
    {
      std::lock_guard<std::mutex> lock(failure_->mutex);
      thrown = std::exchange(failure_->first, nullptr);
    }
    if (thrown) std::rethrow_exception(thrown);
    check(status);
  }

  std::shared_ptr<Failure> failure_;  // declared first: outlives handle_
};

// ---------------------------------------------------------------------------
// Writing models

// One anchor of a model being built (mrt_anchor_config); direction, type and
// element count come from the stream or remote buffer `handle` names.
struct AnchorConfig {
  std::string name;  // "" = the handle
  std::string handle;
  std::vector<int64_t> shape;
  std::vector<uint64_t> programs;
  bool is_per_replica = false;
  DataSource data_source = DataSource::NONE;
};

// Builds a model in memory from an executable. One thread at a time. Move-only.
class ModelBuilder : public detail::OwnedHandle<mrt_model_builder> {
 public:
  ModelBuilder() = default;
  ModelBuilder(const std::string &name, const Executable &executable) {
    mrt_model_builder *out = nullptr;
    check(mrt_model_builder_create(name.c_str(), executable.get(), &out));
    handle_.reset(out);
  }

  ModelBuilder &setInference(bool isInference) {
    check(mrt_model_builder_set_inference(get(), isInference));
    return *this;
  }
  ModelBuilder &setOption(ModelOptions set, const std::string &key, const std::string &value) {
    check(mrt_model_builder_set_option(get(), static_cast<int32_t>(set), key.c_str(), value.c_str()));
    return *this;
  }
  ModelBuilder &setSeedHandle(const std::string &handle) {
    check(mrt_model_builder_set_seed_handle(get(), handle.c_str()));
    return *this;
  }
  ModelBuilder &setProgramName(uint64_t program, const std::string &name) {
    check(mrt_model_builder_set_program_name(get(), program, name.c_str()));
    return *this;
  }
  ModelBuilder &setProgramFlow(ProgramPhase phase, const std::vector<uint64_t> &programs) {
    check(mrt_model_builder_set_program_flow(get(), static_cast<int32_t>(phase), programs.data(), programs.size()));
    return *this;
  }
  ModelBuilder &addAnchor(const AnchorConfig &anchor) {
    mrt_anchor_config c;
    mrt_anchor_config_init(&c);
    c.name = anchor.name.c_str();
    c.handle = anchor.handle.c_str();
    c.shape = anchor.shape.data();
    c.rank = anchor.shape.size();
    c.programs = anchor.programs.data();
    c.num_programs = anchor.programs.size();
    c.is_per_replica = anchor.is_per_replica;
    c.data_source = static_cast<int32_t>(anchor.data_source);
    check(mrt_model_builder_add_anchor(get(), &c));
    return *this;
  }
  ModelBuilder &addTensorData(const std::string &name, DataType type, const std::vector<int64_t> &shape,
                              Span<const std::byte> bytes) {
    check(mrt_model_builder_add_tensor_data(get(), name.c_str(), static_cast<int32_t>(type), shape.data(),
                                            shape.size(), bytes.data(), bytes.size()));
    return *this;
  }
  template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
  ModelBuilder &addTensorData(const std::string &name, DataType type, const std::vector<int64_t> &shape,
                              const std::vector<T> &values) {
    return addTensorData(name, type, shape,
                         Span<const std::byte>(reinterpret_cast<const std::byte *>(values.data()),
                                               values.size() * sizeof(T)));
  }
  ModelBuilder &addFeedData(const std::string &name, DataType type, const std::vector<int64_t> &shape,
                            Span<const std::byte> bytes, uint64_t numTensors) {
    check(mrt_model_builder_add_feed_data(get(), name.c_str(), static_cast<int32_t>(type), shape.data(),
                                          shape.size(), bytes.data(), bytes.size(), numTensors));
    return *this;
  }
  // The checked model; the builder may be used again.
  Model build() {
    mrt_model *out = nullptr;
    check(mrt_model_builder_build(get(), &out));
    return Model::adopt(out);
  }

};

// Writing and reading PopEF bytes.
inline void writeModel(const Model &model, const std::string &path) { check(mrt_model_write(model.get(), path.c_str())); }
// Metadata and executable to modelPath, TensorData/FeedData to dataPath.
inline void writeModelSplit(const Model &model, const std::string &modelPath, const std::string &dataPath) {
  check(mrt_model_write_split(model.get(), modelPath.c_str(), dataPath.c_str()));
}
inline std::vector<std::byte> writeModelToMemory(const Model &model) {
  std::size_t size = 0;
  check(mrt_model_write_to_memory(model.get(), nullptr, 0, &size));
  std::vector<std::byte> bytes(size);
  check(mrt_model_write_to_memory(model.get(), bytes.data(), bytes.size(), &size));
  return bytes;
}
// Several models fused into one PopEF file, each on its own tiles of one IPU
// (mrt_model_fuse()).
inline void fuseModels(const std::vector<Model> &models, const std::string &path) {
  std::vector<const mrt_model *> handles;
  for (const Model &model : models) handles.push_back(model.get());
  check(mrt_model_fuse(handles.data(), handles.size(), path.c_str()));
}
inline Model loadModelFromMemory(Span<const std::byte> bytes) {
  mrt_model *out = nullptr;
  check(mrt_model_load_from_memory(bytes.data(), bytes.size(), &out));
  return Model::adopt(out);
}

// ---- Importing ONNX models (mrt_onnx_*; docs/onnx.md) ----
// Options as C++ values; empty strings and zeros keep the C defaults.
struct OnnxOptions {
  std::string target = "gc200";  // gc200, bow, c600, ipu-model-small
  std::uint32_t numIpus = 1;
  std::uint32_t replicationFactor = 1;
  std::int64_t batchSize = 1;    // the value of dynamic input dimensions
  std::string modelName;         // default: the ONNX graph's name
  // Whole shapes of named inputs, replacing the declared ones.
  std::map<std::string, std::vector<std::int64_t>> inputShapes;
  bool halfPrecision = false;    // compute FLOAT as FLOAT16 (mrt_onnx_precision)
  // Recorded in the model: the dimension ModelRunner batches along when its
  // config names none (mrt_onnx_options.batching_dim); empty: none.
  std::optional<std::uint32_t> batchingDim;
  std::uint32_t numIOTiles = 0;  // tiles of each IPU that only stream (mrt_onnx_options.num_io_tiles)
};

namespace detail {
// The C options over `o`, valid while `o` and this object live.
class COnnxOptions {
 public:
  explicit COnnxOptions(const OnnxOptions &o) {
    mrt_onnx_options_init(&c_);
    if (!o.target.empty()) c_.target = o.target.c_str();
    c_.num_ipus = o.numIpus;
    c_.replication_factor = o.replicationFactor;
    c_.batch_size = o.batchSize;
    if (!o.modelName.empty()) c_.model_name = o.modelName.c_str();
    for (const auto &[name, dims] : o.inputShapes) shapes_.push_back({name.c_str(), dims.data(), dims.size()});
    c_.input_shapes = shapes_.data();
    c_.num_input_shapes = shapes_.size();
    c_.precision = o.halfPrecision ? MRT_ONNX_PRECISION_F16 : MRT_ONNX_PRECISION_F32;
    if (o.batchingDim) c_.batching_dim = *o.batchingDim;
    c_.num_io_tiles = o.numIOTiles;
  }
  const mrt_onnx_options *get() const { return &c_; }

 private:
  mrt_onnx_options c_;
  std::vector<mrt_onnx_input_shape> shapes_;
};
}  // namespace detail

// Compiles the ONNX file at path (external data next to it) into a model.
inline Model compileOnnx(const std::string &path, const OnnxOptions &options = {}) {
  const detail::COnnxOptions c(options);
  mrt_model *out = nullptr;
  check(mrt_onnx_compile_file(path.c_str(), c.get(), &out));
  return Model::adopt(out);
}
// The same for an ONNX model in memory (no external data).
inline Model compileOnnxMemory(Span<const std::byte> bytes, const OnnxOptions &options = {}) {
  const detail::COnnxOptions c(options);
  mrt_model *out = nullptr;
  check(mrt_onnx_compile_memory(bytes.data(), bytes.size(), c.get(), &out));
  return Model::adopt(out);
}

}  // namespace mrt
